import Foundation
import Testing
@testable import OpenCoreData

/// The registry against a plain dictionary: random registrations, replacements and removals of dense keys,
/// sparse keys, temporary IDs, entities sharing a table and two stores must find exactly what the
/// dictionary finds.
@Suite struct ObjectRegistryTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Animal") { Attribute("name", .string) }
            EntityDescription("Dog", parent: "Animal") { Attribute("breed", .string) }
            EntityDescription("Tag") { Attribute("label", .string) }
        }
    }

    @Test func findsWhatADictionaryFinds() throws {
        let model = try Self.model()
        let entities = try ["Animal", "Dog", "Tag"].map { try #require(model.entitiesByName[$0]) }
        let stores = [StoreIdentity(uuid: "REGISTRY-A"), StoreIdentity(uuid: "REGISTRY-B")]
        var generator = SeededGenerator(seed: 11)
        var registry = ObjectRegistry()
        var reference: [ManagedObjectID: ManagedObject] = [:]
        var known: [ManagedObjectID] = []

        func randomID() -> ManagedObjectID {
            let entity = entities.randomElement(using: &generator)!
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: return ManagedObjectID(temporaryFor: entity)
            case 1: return ManagedObjectID(entity: entity, primaryKey: Int64.random(in: 1...50_000_000, using: &generator),
                                           store: stores[1])
            case 2 where !known.isEmpty: return known.randomElement(using: &generator)!
            // Too sparse for the array at first; adopted into it once the table holds enough objects.
            case 3, 4: return ManagedObjectID(entity: entity, primaryKey: Int64.random(in: 1...40_000, using: &generator),
                                              store: stores[0])
            default: return ManagedObjectID(entity: entity, primaryKey: Int64.random(in: 1...3_000, using: &generator),
                                            store: stores[0])
            }
        }

        for step in 0..<40_000 {
            let id = randomID()
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                let object = ManagedObject(entity: id.entity, id: id)
                registry[id] = object
                reference[id] = object
                known.append(id)
            case 6..<8:
                #expect(registry.removeValue(forKey: id) === reference.removeValue(forKey: id), "step \(step): remove \(id)")
            case 8:
                if step % 500 == 0 { registry.reserveCapacity(Int.random(in: 0..<5_000, using: &generator)) }
                registry[id] = nil
                reference[id] = nil
            default:
                #expect(registry[id] === reference[id], "step \(step): lookup \(id)")
            }
            #expect(registry.count == reference.count, "step \(step): count")
            if step % 1_000 == 0 { #expect(registry.invariantViolations() == [], "step \(step)") }
        }
        #expect(registry.invariantViolations() == [])
        for id in known { #expect(registry[id] === reference[id], "final lookup \(id)") }
        let registered = registry.values.map(ObjectIdentifier.init)
        #expect(registered.count == reference.count)
        #expect(Set(registered) == Set(reference.values.map(ObjectIdentifier.init)))
    }

    /// The batch check before a fresh batch load (`containsAny`) against one lookup per key: batches of
    /// consecutive keys within and across pages, shuffled, with keys that are zero, negative, in the
    /// dictionary (too sparse for the pages) or past the page directory.
    @Test func containsAnyAgreesWithLookups() throws {
        let model = try Self.model()
        let tag = try #require(model.entitiesByName["Tag"])
        let store = StoreIdentity(uuid: "REGISTRY-CONTAINS")
        var generator = SeededGenerator(seed: 23)
        var registry = ObjectRegistry()
        func id(_ key: Int64) -> ManagedObjectID { ManagedObjectID(entity: tag, primaryKey: key, store: store) }
        var found = 0
        for step in 0..<6_000 {
            let key = Int.random(in: 0..<4, using: &generator) == 0
                ? Int64.random(in: 1...5_000_000, using: &generator) : Int64.random(in: 1...4_000, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: registry[id(key)] = ManagedObject(entity: tag, id: id(key))
            case 1: registry[id(key)] = nil
            default:
                let start = key - Int64.random(in: 0..<70, using: &generator)
                var keys = Array(start..<(start + Int64.random(in: 1...30, using: &generator)))
                if Bool.random(using: &generator) { keys.shuffle(using: &generator) }
                let expected = keys.contains { $0 > 0 && registry[id($0)] != nil }
                if expected { found += 1 }
                #expect(registry.containsAny(entity: tag, storeIndex: store.index, keys: keys[...]) == expected,
                        "step \(step): keys \(keys)")
            }
        }
        // Both answers come up often enough to mean something.
        #expect(found > 300 && found < 2_700)
        #expect(registry.invariantViolations() == [])
    }

    /// A subentity's object and its table's other objects share one key space; an ID naming the same key
    /// under another entity is a different ID, as in a dictionary.
    @Test func sameKeyUnderAnotherEntityIsAnotherID() throws {
        let model = try Self.model()
        let animal = try #require(model.entitiesByName["Animal"])
        let dog = try #require(model.entitiesByName["Dog"])
        let store = StoreIdentity(uuid: "REGISTRY-C")
        let dogID = ManagedObjectID(entity: dog, primaryKey: 7, store: store)
        let animalID = ManagedObjectID(entity: animal, primaryKey: 7, store: store)
        var registry = ObjectRegistry()
        let rex = ManagedObject(entity: dog, id: dogID)
        let other = ManagedObject(entity: animal, id: animalID)
        registry[dogID] = rex
        #expect(registry[animalID] == nil)
        registry[animalID] = other
        #expect(registry[dogID] === rex && registry[animalID] === other && registry.count == 2)
        #expect(registry.removeValue(forKey: dogID) === rex)
        #expect(registry.invariantViolations() == [])
        #expect(registry[animalID] === other && registry.count == 1)
    }

    /// Trimming forgets only objects nobody else holds, in the array and in the dictionary.
    @Test func forgetsOnlyUnheldObjects() throws {
        let model = try Self.model()
        let tag = try #require(model.entitiesByName["Tag"])
        let store = StoreIdentity(uuid: "REGISTRY-D")
        var registry = ObjectRegistry()
        var held: [ManagedObject] = []
        for key in 1...200 {
            let id = key % 10 == 0 ? ManagedObjectID(temporaryFor: tag)
                : ManagedObjectID(entity: tag, primaryKey: Int64(key % 7 == 0 ? key * 1_000_000 : key), store: store)
            let object = ManagedObject(entity: tag, id: id)
            registry[id] = object
            if key % 3 == 0 { held.append(object) }
        }
        var handedOver: [ObjectIdentifier] = []
        let forgotten = registry.forgetUnreferenced(where: { _ in true }, forget: { handedOver.append(ObjectIdentifier($0)) })
        #expect(forgotten == 200 - held.count)
        #expect(handedOver.count == forgotten)
        #expect(Set(handedOver).isDisjoint(with: held.map(ObjectIdentifier.init)))
        #expect(registry.count == held.count)
        #expect(registry.invariantViolations() == [])
        for object in held { #expect(registry[object.objectID] === object) }
        #expect(Set(registry.values.map(ObjectIdentifier.init)) == Set(held.map(ObjectIdentifier.init)))
    }

    /// Letting go of some objects forgets exactly those the registry alone then holds and the predicate
    /// picks (paged keys, scattered keys and temporary IDs alike), leaves everything else registered, and
    /// frees what it forgets. An object that only shares a registered object's ID is not that object.
    @Test func lettingGoForgetsExactlyTheUnheldObjects() throws {
        let model = try Self.model()
        let tag = try #require(model.entitiesByName["Tag"])
        let animal = try #require(model.entitiesByName["Animal"])
        let store = StoreIdentity(uuid: "REGISTRY-E")
        var generator = SeededGenerator(seed: 23)
        for round in 0..<20 {
            var registry = ObjectRegistry()
            var all: [ManagedObject] = []
            for key in 1...300 {
                let entity = key % 5 == 0 ? animal : tag
                let id: ManagedObjectID
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: id = ManagedObjectID(temporaryFor: entity)
                case 1: id = ManagedObjectID(entity: entity, primaryKey: Int64(key) * 10_000_000, store: store)
                default: id = ManagedObjectID(entity: entity, primaryKey: Int64(key), store: store)
                }
                let object = ManagedObject(entity: entity, id: id)
                registry[id] = object
                all.append(object)
            }
            var lettingGo = all.filter { _ in Bool.random(using: &generator) }
            let heldElsewhere = lettingGo.filter { _ in Int.random(in: 0..<4, using: &generator) == 0 }
            let kept = Set(lettingGo.filter { _ in Int.random(in: 0..<5, using: &generator) == 0 }.map(ObjectIdentifier.init))
            let expectedForgotten = Set(lettingGo.map(ObjectIdentifier.init))
                .subtracting(heldElsewhere.map(ObjectIdentifier.init)).subtracting(kept)
            weak let someForgotten = lettingGo.first { expectedForgotten.contains(ObjectIdentifier($0)) }
            let impostor = ManagedObject(entity: tag, id: all[all.count / 2].objectID)
            var batch: [ManagedObject?] = lettingGo + [impostor, nil]
            // Known by identity only from here: a reference kept here would count as another holder.
            let stillRegistered = all.filter { !expectedForgotten.contains(ObjectIdentifier($0)) }
                .map { (ObjectIdentifier($0), $0.objectID) }
            let count = all.count
            all = []
            lettingGo = []
            var handedOver: Set<ObjectIdentifier> = []
            // Some of those forgotten are picked as spares: out of the registry, into `spares`, not forgotten.
            let sparePicks = Set(expectedForgotten.filter { _ in Bool.random(using: &generator) })
            var spares: [ManagedObject] = []
            let forgotten = registry.letGo(of: &batch, where: { !kept.contains(ObjectIdentifier($0)) },
                                           forget: { handedOver.insert(ObjectIdentifier($0)) },
                                           spares: &spares, isSpare: { sparePicks.contains(ObjectIdentifier($0)) })
            #expect(batch.allSatisfy { $0 == nil }, "round \(round)")
            #expect(forgotten == expectedForgotten.count, "round \(round)")
            #expect(handedOver == expectedForgotten.subtracting(sparePicks), "round \(round)")
            #expect(Set(spares.map(ObjectIdentifier.init)) == sparePicks && spares.count == sparePicks.count, "round \(round)")
            spares = []
            #expect(registry.count == count - forgotten, "round \(round)")
            #expect(registry.invariantViolations() == [], "round \(round)")
            for (identity, id) in stillRegistered {
                #expect(registry[id].map(ObjectIdentifier.init) == identity, "round \(round)")
            }
            #expect(Set(registry.values.map(ObjectIdentifier.init)) == Set(stillRegistered.map(\.0)), "round \(round)")
            if !expectedForgotten.isEmpty { #expect(someForgotten == nil, "round \(round): a forgotten object is still alive") }
            withExtendedLifetime(heldElsewhere) {}
        }
    }
}
