import Foundation
import Testing
@testable import OpenCoreData

/// The controller's per-access lookups (object(at:), objectIDs(in:)) against its rows read in order.
@Suite struct ResultsAccessTests {
    /// 500 banks over two sections: three row chunks, sections not aligned with them.
    private func fetchedController() throws -> (TestStack, FetchedResultsController<ManagedObject>) {
        let stack = try TestStack(model: TestModels.banks())
        try BankFixture.seed(stack.context(), count: 500, states: ["CA", "NY"])
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(batchSize: 20),
                                                      managedObjectContext: stack.context(), sectionNameKeyPath: "state",
                                                      cacheName: nil)
        try controller.performFetch()
        return (stack, controller)
    }

    /// A fetched controller over the to-do model's items, by name, without sections.
    private static func itemsByName(in context: ManagedObjectContext, batchSize: Int) throws -> FetchedResultsController<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        request.fetchBatchSize = batchSize
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        return controller
    }

    private func idsInOrder(_ tracker: ResultsChangeTracker) throws -> [ManagedObjectID] {
        var ids: [ManagedObjectID] = []
        try tracker.rows.forEach { handle, entity, _ in ids.append(try #require(tracker.objectID(handle: handle, entity: entity))) }
        return ids
    }

    @Test func objectIDsInRangesAtEdgesAndClamped() throws {
        let (_, controller) = try fetchedController()
        var tracker = try #require(controller.tracker)
        let reference = try idsInOrder(tracker)
        let count = reference.count
        #expect(count == 500)
        let ranges: [Range<Int>] = [0..<0, 0..<1, 0..<20, 180..<200, 191..<193, 192..<384, 380..<400, 249..<251,
                                    480..<500, 499..<500, 0..<500, -10..<5, -5..<(-1), 490..<520, 500..<520, 600..<620]
        for range in ranges {
            #expect(tracker.objectIDs(in: range) == Array(reference[range.clamped(to: 0..<count)]), "range \(range)")
        }
        #expect(controller.sectionObjectIDs.flatMap { $0 } == reference)
        #expect(controller.fetchedObjects?.count == count)
    }

    @Test func objectAtEveryIndexPathAndOutOfRange() throws {
        let (_, controller) = try fetchedController()
        let reference = try idsInOrder(try #require(controller.tracker))
        let sizes = try #require(controller.sections).map(\.numberOfObjects)
        #expect(sizes == [250, 250])
        var position = 0
        for (section, size) in sizes.enumerated() {
            for item in 0..<size {
                let path = IndexPath(item: item, section: section)
                #expect(try controller.object(at: path).objectID == reference[position])
                position += 1
            }
        }
        for path in [IndexPath(item: 250, section: 0), IndexPath(item: -1, section: 1), IndexPath(item: 0, section: 2),
                     IndexPath(item: 0, section: -1)] {
            #expect(throws: FetchedResultsError.indexPathOutOfRange(path)) { try controller.object(at: path) }
        }
    }

    /// Batches loaded by key as their rows arrive, in any order of access, against a plain fetch; a row
    /// deleted behind the controller's back leaves a fault that reports it gone, and objects registered before
    /// are handed out as they are.
    @Test func objectsLoadedByBatchMatchAPlainFetch() throws {
        let stack = try TestStack(model: TestModels.todo())
        let writer = stack.context()
        var generator = SeededGenerator(seed: 7)
        for index in 0..<90 {
            let item = try writer.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(Int.random(in: 0..<500, using: &generator)) #\(index)", forKey: "name")
        }
        try writer.save()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        let expected = try stack.context().fetch(request).map { try ($0.objectID, $0.value(forKey: "name") as! String) }

        request.fetchBatchSize = 7
        let context = stack.context()
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        let early = try context.existingObject(with: expected[10].0)
        let deleted: Set<ManagedObjectID> = [expected[3].0, expected[40].0, expected[89].0]
        for id in deleted { writer.delete(try writer.existingObject(with: id)) }
        try writer.save()

        for position in (0..<expected.count).shuffled(using: &generator) {
            let object = try controller.object(at: IndexPath(item: position, section: 0))
            try expectLoadedObject(object, in: context, matching: expected[position], deleted: deleted, position: position)
        }
        #expect(try controller.object(at: IndexPath(item: 10, section: 0)) === early)
    }

    /// Reads inside the batch loaded last are answered from it; every change to the rows, a reset and a
    /// refresh make it step aside. After each random change the controller's objects are checked against a
    /// fresh fetch: the right ID at each position, loaded, and in the context.
    @Test func recentBatchFollowsChangesResetsAndRefreshes() throws {
        let stack = try TestStack(model: TestModels.todo())
        var generator = SeededGenerator(seed: 11)
        var serial = 0
        func insertItem(into context: ManagedObjectContext) throws {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(Int.random(in: 0..<1000, using: &generator)) #\(serial)", forKey: "name")
            serial += 1
        }
        // Saved by another context: the controller's context loads them from the store, by batch.
        let writer = stack.context()
        for _ in 0..<60 { try insertItem(into: writer) }
        try writer.save()
        let context = stack.context()
        let controller = try Self.itemsByName(in: context, batchSize: 8)
        let plain = FetchRequest<ManagedObject>(entityName: "Item")
        plain.sortDescriptors = [QuerySortDescriptor(key: "name")]

        for step in 0..<60 {
            // Faults again, so the batch read next is loaded (and remembered) rather than found registered.
            if Bool.random(using: &generator) { context.refreshAllObjects() }
            // Read a whole batch, so the next reads may be answered from it.
            // The reference comes from a context of its own: a plain fetch here would load every object.
            var expected = try stack.context().fetch(plain).map(\.objectID)
            let batchStart = Int.random(in: 0..<expected.count, using: &generator) / 8 * 8
            for position in batchStart..<min(batchStart + 8, expected.count) {
                #expect(try controller.object(at: IndexPath(item: position, section: 0)).objectID == expected[position])
            }
            let victim = try context.existingObject(with: expected[Int.random(in: 0..<expected.count, using: &generator)])
            let change = Int.random(in: 0..<5, using: &generator)
            switch change {
            case 0: try insertItem(into: context); try context.save()
            case 1: context.delete(victim); try context.save()
            case 2: try victim.setValue("Item \(Int.random(in: 0..<1000, using: &generator)) moved", forKey: "name"); try context.save()
            case 3: context.reset()
            default: context.refresh(victim, mergeChanges: false)
            }
            expected = try stack.context().fetch(plain).map(\.objectID)
            #expect(controller.sections?.first?.numberOfObjects == expected.count, "step \(step)")
            let positions = Array(batchStart..<min(batchStart + 8, expected.count))
                + (0..<expected.count).shuffled(using: &generator).prefix(10)
            for position in positions {
                let object = try controller.object(at: IndexPath(item: position, section: 0))
                #expect(object.objectID == expected[position], "step \(step), change \(change), position \(position)")
                #expect(!object.isFault && object.managedObjectContext === context, "step \(step), change \(change)")
            }
        }
    }

    /// Moving through a long list, the controller lets go of the batches it left behind: the context's
    /// registry stays the size of a few batches instead of growing to its trim, while objects the caller
    /// still holds, and objects with unsaved changes, stay registered and keep their changes. A row on
    /// either side of a batch boundary is answered without reloading either batch.
    @Test func batchesLeftBehindAreLetGo() throws {
        let stack = try TestStack(model: TestModels.todo())
        let writer = stack.context()
        for index in 0..<400 {
            let item = try writer.insertNewObject(forEntityName: "Item")
            try item.setValue(String(format: "Item %04d", index), forKey: "name")
        }
        try writer.save()
        let context = stack.context()
        let controller = try Self.itemsByName(in: context, batchSize: 20)

        var held: [Int: ManagedObject] = [:]
        var edited: [Int: ManagedObjectID] = [:]
        weak var firstUnheld: ManagedObject?
        for position in 0..<400 {
            let object = try controller.object(at: IndexPath(item: position, section: 0))
            #expect(try object.value(forKey: "name") as? String == String(format: "Item %04d", position))
            if position == 1 { firstUnheld = object }
            if position % 37 == 0 { held[position] = object }
            if position % 53 == 5 {
                try object.setValue(String(format: "Item %04d edited", position), forKey: "name")
                edited[position] = object.objectID
            }
            // Never more than two batches beyond what is held or edited.
            #expect(context.registeredObjects.count <= held.count + edited.count + 40, "position \(position)")
        }
        #expect(firstUnheld == nil, "an object of a batch left behind, held by nobody, is still alive")
        for (position, object) in held {
            #expect(context.registeredObject(for: object.objectID) === object)
            #expect(try controller.object(at: IndexPath(item: position, section: 0)) === object)
        }
        for (position, id) in edited {
            let object = try #require(context.registeredObject(for: id), "edited object \(position) was let go")
            #expect(object.hasChanges)
            #expect(try object.value(forKey: "name") as? String == String(format: "Item %04d edited", position))
        }
        #expect(context.hasChanges)
        try context.save()
        let reader = stack.context()
        let names = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item")).compactMap { try $0.value(forKey: "name") as? String }
        #expect(names.filter { $0.hasSuffix("edited") }.count == edited.count)

        // Back and forth across a batch boundary, from the later batch into the earlier one: both stay
        // loaded. Held weakly only: a batch let go frees them, and a reload would hand out other instances.
        weak let after = try controller.object(at: IndexPath(item: 100, section: 0))
        weak let before = try controller.object(at: IndexPath(item: 99, section: 0))
        #expect(after != nil && before != nil)
        for _ in 0..<3 {
            #expect(try controller.object(at: IndexPath(item: 100, section: 0)) === after)
            #expect(try controller.object(at: IndexPath(item: 99, section: 0)) === before)
        }
    }
}

/// A subclass with state of its own besides its typed property: the context must never hand one of these out
/// for another row.
final class NotedItem: ManagedObject {
    override class var entityName: String { "Item" }
    @Managed("name") var name: String?
    var note = ""
}

/// A subclass with typed properties only that does not opt in to reuse: its instances are never reused.
class NamedItem: ManagedObject {
    override class var entityName: String { "Item" }
    @Managed("name") var name: String?
}
/// A subclass that opts in: it keeps nothing but `@Managed` properties.
final class ScratchedItem: NamedItem {
    override class var allowsInstanceReuse: Bool { true }
    @Managed("scratch") var scratch: String?
}
/// A level adding nothing, not opting in.
final class PlainNamedItem: NamedItem {}

/// A class that does not opt in to reuse and writes down, per saved row, when an instance is made ("M"),
/// awoken ("A") and freed ("F", or "!" when it is freed still registered or in its context).
final class LifeLoggedItem: ManagedObject {
    override class var entityName: String { "Item" }

    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var events = ""
        func note(_ event: Character) { lock.withLock { events.append(event) } }
        func take() -> String { lock.withLock { defer { events = "" }; return events } }
    }
    /// Only ``SpareObjectReuseTests/objectsNotReusedAreFreedOneRightBeforeEachNewObject()`` makes these.
    static let log = Log()

    required init(entity: EntityDescription, id: ManagedObjectID) {
        super.init(entity: entity, id: id)
        if !id.isTemporaryID { Self.log.note("M") }
    }

    override func awakeFromFetch() { Self.log.note("A") }

    deinit {
        if !objectID.isTemporaryID { Self.log.note(flags.contains(.registered) || contextReference != nil ? "!" : "F") }
    }
}

/// Objects a controller lets go of are given later batches' rows instead of being freed, but only where the
/// contract allows it: never an object still held strongly, and only instances of subclasses that opt in
/// (``ManagedObject/allowsInstanceReuse``); those of others, `ManagedObject` itself included, are freed.
@Suite struct SpareObjectReuseTests {
    private static func seededStack(objectClass: ManagedObject.Type = ManagedObject.self) throws -> (TestStack, [(ManagedObjectID, String)]) {
        let model = try ManagedObjectModel {
            EntityDescription("Item", class: objectClass) {
                Attribute("name", .string)
                Attribute("scratch", .string, transient: true)
            }
        }
        let stack = try TestStack(model: model)
        let writer = stack.context()
        for index in 0..<120 {
            let item = try writer.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(1000 + (index * 37) % 120)", forKey: "name")
        }
        try writer.save()
        let expected = try stack.context().fetch(FetchRequest.itemsByName()).map { try ($0.objectID, $0.value(forKey: "name") as! String) }
        return (stack, expected)
    }

    @Test func objectsLetGoAreReusedOnlyWhenNobodyHoldsThem() throws {
        let (stack, expected) = try Self.seededStack(objectClass: ScratchedItem.self)
        let context = stack.context()
        let controller = try FetchedResultsController(fetchRequest: FetchRequest.itemsByName(batchSize: 10), managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        let held = try controller.object(at: IndexPath(item: 0, section: 0))
        let transient = try controller.object(at: IndexPath(item: 2, section: 0))
        try transient.setValue("kept", forKey: "scratch")
        let transientID = transient.objectID
        _ = consume transient
        for round in 0..<2 {
            for position in 0..<expected.count {
                let object = try controller.object(at: IndexPath(item: position, section: 0))
                #expect(object.objectID == expected[position].0, "round \(round), position \(position)")
                #expect(try object.value(forKey: "name") as? String == expected[position].1, "round \(round), position \(position)")
                #expect(!object.isFault && !object.hasChanges)
                #expect(context.registeredObject(for: object.objectID) === object)
                #expect(held.objectID == expected[0].0, "round \(round), position \(position)")
            }
        }
        #expect(context.spares.reusedCount > 0)
        #expect(held.objectID == expected[0].0)
        #expect(try held.value(forKey: "name") as? String == expected[0].1)
        let again = try context.existingObject(with: transientID)
        #expect(again.objectID == transientID)
    }

    @Test(arguments: [ManagedObject.self, NamedItem.self] as [ManagedObject.Type])
    func objectsOfClassesNotOptingInAreFreedNotReused(objectClass: ManagedObject.Type) throws {
        let (stack, expected) = try Self.seededStack(objectClass: objectClass)
        let context = stack.context()
        let controller = try FetchedResultsController(fetchRequest: FetchRequest.itemsByName(batchSize: 10), managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        weak let weakly = try controller.object(at: IndexPath(item: 1, section: 0))
        for round in 0..<2 {
            for position in 0..<expected.count {
                let object = try controller.object(at: IndexPath(item: position, section: 0))
                #expect(object.objectID == expected[position].0, "round \(round), position \(position)")
                // Alive or freed, but never turned into another row's object.
                if let weakly, weakly.objectID != expected[1].0 {
                    Issue.record("round \(round), position \(position): the object let go came back as \(weakly.objectID)")
                }
            }
        }
        #expect(context.spares.reusedCount == 0)
        #expect(weakly == nil, "an object let go by the controller is still alive")
    }

    /// An object the controller lets go of that is not reused is forgotten at once and freed right before
    /// each new object is made, so the allocator hands its memory straight back (see ``SparePool``), and all
    /// of them before the new batch's awake hooks run.
    @Test func objectsNotReusedAreFreedOneRightBeforeEachNewObject() throws {
        let (stack, expected) = try Self.seededStack(objectClass: LifeLoggedItem.self)
        _ = LifeLoggedItem.log.take()
        let context = stack.context()
        let controller = try FetchedResultsController(fetchRequest: FetchRequest.itemsByName(batchSize: 10), managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        #expect(LifeLoggedItem.log.take() == "", "the fetch made objects")
        for position in 0..<expected.count {
            let object = try controller.object(at: IndexPath(item: position, section: 0))
            #expect(object.objectID == expected[position].0, "position \(position)")
        }
        // The first two batches are made with nothing to free; from the third on, each batch read lets go
        // of the batch two before it.
        let fresh = String(repeating: "M", count: 10) + String(repeating: "A", count: 10)
        let interleaved = String(repeating: "FM", count: 10) + String(repeating: "A", count: 10)
        #expect(LifeLoggedItem.log.take() == fresh + fresh + String(repeating: interleaved, count: expected.count / 10 - 2))
        #expect(context.spares.reusedCount == 0 && context.spares.isEmpty)
        #expect(context.spares.freedBeforeMakingCount == expected.count - 20)
        #expect(context.registry.invariantViolations() == [])
    }

    /// A plain object freed right before a new one is made hands its context reference to that object
    /// (see ``SparePool``), and the spares a short batch leaves over are freed: the references still balance.
    /// The context's reference object stays while any object names it, and goes with the last one.
    @Test(arguments: [7, 10, 16])
    func contextReferencesHandedOverBalance(batchSize: Int) throws {
        let (stack, expected) = try Self.seededStack()
        weak var reference: ContextReference?
        var held: [ManagedObject] = []
        do {
            let context = stack.context()
            reference = context.reference
            let controller = try FetchedResultsController(fetchRequest: FetchRequest.itemsByName(batchSize: batchSize),
                                                          managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            // Forwards, then backwards: a short last batch leaves spares over in both directions.
            let positions = Array(expected.indices) + expected.indices.reversed()
            for (step, position) in positions.enumerated() {
                let object = try controller.object(at: IndexPath(item: position, section: 0))
                #expect(object.objectID == expected[position].0, "step \(step)")
                #expect(object.managedObjectContext === context, "step \(step)")
                if step % 29 == 0 { held.append(object) }
            }
            #expect(context.spares.handedOverCount > 0)
            #expect(context.spares.isEmpty)
            for object in held { #expect(object.managedObjectContext === context) }
        }
        // The context is gone; the objects still held keep its reference object, which now names no context.
        #expect(reference != nil)
        for object in held { #expect(object.managedObjectContext == nil) }
        held = []
        #expect(reference == nil, "references to the context were added and never given back")
    }

    @Test func reuseIsForClassesThatOptInOnly() {
        #expect(!ManagedObject.allowsInstanceReuse)
        #expect(ScratchedItem.allowsInstanceReuse)
        #expect(!NamedItem.allowsInstanceReuse)
        #expect(!NotedItem.allowsInstanceReuse)
        #expect(!PlainNamedItem.allowsInstanceReuse)
    }

    @Test func typedSubclassInstancesAreReused() throws {
        let (stack, expected) = try Self.seededStack(objectClass: ScratchedItem.self)
        let context = stack.context()
        let request = FetchRequest<ScratchedItem>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        request.fetchBatchSize = 10
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        for round in 0..<2 {
            for position in 0..<expected.count {
                let object = try controller.object(at: IndexPath(item: position, section: 0))
                #expect(object.objectID == expected[position].0, "round \(round), position \(position)")
                #expect(object.name == expected[position].1, "round \(round), position \(position)")
                #expect(object.scratch == nil)
            }
        }
        #expect(context.spares.reusedCount > 0)
    }

    @Test func subclassesWithStateOfTheirOwnAreNeverReused() throws {
        let (stack, expected) = try Self.seededStack(objectClass: NotedItem.self)
        let context = stack.context()
        let controller = try FetchedResultsController(fetchRequest: FetchRequest.itemsByName(batchSize: 10), managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        for round in 0..<2 {
            for position in 0..<expected.count {
                let object = try #require(controller.object(at: IndexPath(item: position, section: 0)) as? NotedItem)
                #expect(object.objectID == expected[position].0)
                // Each object is noted with its own name: a reused instance would arrive noted for another row.
                #expect(object.note.isEmpty || object.note == expected[position].1, "round \(round), position \(position)")
                object.note = expected[position].1
            }
        }
        #expect(context.spares.reusedCount == 0)
    }
}
