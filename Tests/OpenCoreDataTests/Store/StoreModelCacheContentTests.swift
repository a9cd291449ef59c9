import Foundation
import Testing
@testable import OpenCoreData

/// A store's model cache read from its bytes (`StoreModelCache.model(fromContent:path:storeNumbers:)`, what
/// `cachedModel(ofStoreAt:)` and the fuzz target `FuzzModelCache` call): hostile content is a typed error
/// naming the problem, never unbounded memory or recursion.
@Suite struct StoreModelCacheContentTests {
    /// A DEFLATE bomb (under 1 MB that would expand to 128 MB) is refused at the limit, which the error names.
    @Test func refusesADeflateBombAtTheSizeLimit() throws {
        let bomb = DeflateBomb.data(expandingTo: 2 * StoreModelCache.maximumModelSize)
        #expect(bomb.count < 1 << 20)
        let error = try #require(throws: StoreError.self) {
            try StoreModelCache.model(fromContent: bomb, path: "bomb.sqlite", storeNumbers: nil)
        }
        guard case .corrupt(let path, let reason) = error else { Issue.record("\(error)"); return }
        #expect(path == "bomb.sqlite")
        #expect(reason.contains("expands past \(StoreModelCache.maximumModelSize) bytes"), "\(reason)")
    }

    /// Entities and relationships that refer to each other (the model, its entities, a relationship and its
    /// inverse) are walked one reference at a time, as every real cache needs.
    @Test func readsAModelWhoseObjectsReferToEachOther() throws {
        let content = StoredDeflate.compress(CycleArchive.data(.relationships))
        let model = try StoreModelCache.model(fromContent: content, path: "cache.sqlite", storeNumbers: ["A": 2, "B": 1])
        #expect(model.entities.map(\.name).sorted() == ["A", "B"])
        #expect(model.entitiesByName["A"]?.entityNumber == 2)
        #expect(model.entitiesByName["A"]?.relationshipsByName["b"]?.inverseRelationship?.name == "a")
    }

    /// Superentities that lead back to the entity are refused as a cycle, not followed forever.
    @Test func refusesSuperentitiesInACycle() throws {
        let content = StoredDeflate.compress(CycleArchive.data(.superentities))
        let error = try #require(throws: ModelError.self) {
            try StoreModelCache.model(fromContent: content, path: "cache.sqlite", storeNumbers: nil)
        }
        #expect("\(error)".contains("cycle"), "\(error)")
    }

    /// A value that contains itself (a default value that is an array holding itself) is refused, naming
    /// the object, not recursed into.
    @Test func refusesAValueThatContainsItself() throws {
        let content = StoredDeflate.compress(CycleArchive.data(.selfContainingDefault))
        let error = try #require(throws: ModelError.self) {
            try StoreModelCache.model(fromContent: content, path: "cache.sqlite", storeNumbers: nil)
        }
        guard case .malformedModelFile(let source, let reason) = error else { Issue.record("\(error)"); return }
        #expect(source == "cache.sqlite (Z_MODELCACHE)")
        #expect(reason.contains("object 14 contains itself"), "\(reason)")
    }
}

/// Raw DEFLATE that expands hugely: one fixed-Huffman block of a zero byte, then copies of 258 bytes at
/// distance 1 (13 bits each), then end of block.
enum DeflateBomb {
    static func data(expandingTo size: Int) -> Data {
        var writer = BitWriter()
        writer.write(1, count: 1) // BFINAL
        writer.write(1, count: 2) // BTYPE 01: fixed Huffman codes
        // Huffman codes go most significant bit first, so they are written reversed: literal 0 is 00110000,
        // length 258 (symbol 285) is 11000101, distance 1 (code 0) is 00000, end of block (256) is 0000000.
        writer.write(0b0000_1100, count: 8)
        for _ in 0..<(size - 1) / 258 {
            writer.write(0b1010_0011, count: 8)
            writer.write(0, count: 5)
        }
        writer.write(0, count: 7)
        return writer.finished()
    }

    /// Bits packed least significant first, as DEFLATE reads them.
    struct BitWriter {
        var bytes: [UInt8] = []
        var buffer: UInt64 = 0
        var count = 0

        mutating func write(_ value: UInt64, count bits: Int) {
            buffer |= value << UInt64(count)
            count += bits
            while count >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                count -= 8
            }
        }

        mutating func finished() -> Data {
            if count > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
            return Data(bytes)
        }
    }
}

/// Compiled-model archives of two entities `A` and `B` whose objects refer to each other.
enum CycleArchive {
    enum Shape {
        /// A to-one `A.b` and its inverse `B.a`: entity → relationship → entity, relationship ⇄ inverse.
        case relationships
        /// `A`'s superentity is `B` and `B`'s is `A`.
        case superentities
        /// `A.name`'s default value is an NSArray (object 14) whose one element is itself.
        case selfContainingDefault
    }

    static func data(_ shape: Shape) -> Data {
        typealias Node = TestArchive.Node
        func entity(_ name: Int, properties: Int, superentity: Int) -> Node {
            .dictionary(["$class": .uid(9), "NSEntityName": .uid(name), "NSManagedObjectModel": .uid(1),
                         "NSSuperentity": .uid(superentity), "NSProperties": .uid(properties)])
        }
        func relationship(_ name: Int, entity: Int, destination: Int, inverse: Int) -> Node {
            .dictionary(["$class": .uid(16), "NSPropertyName": .uid(name), "NSEntity": .uid(entity),
                         "NSDestinationEntity": .uid(destination), "NSInverseRelationship": .uid(inverse),
                         "NSMinCount": .integer(0), "NSMaxCount": .integer(1), "NSDeleteRule": .integer(1)])
        }
        let isRelated = shape == .relationships
        let objects: [Node] = [
            .string("$null"),
            .dictionary(["$class": .uid(2), "NSEntities": .uid(3)]),
            TestArchive.classDescription("NSManagedObjectModel"),
            .dictionary(["$class": .uid(4), "NS.keys": .array([.uid(5), .uid(6)]), "NS.objects": .array([.uid(7), .uid(8)])]),
            TestArchive.classDescription("NSDictionary"),
            .string("A"),
            .string("B"),
            entity(5, properties: isRelated ? 17 : 10, superentity: shape == .superentities ? 8 : 0),
            entity(6, properties: isRelated ? 18 : 10, superentity: shape == .superentities ? 7 : 0),
            TestArchive.classDescription("NSEntityDescription"),
            .dictionary(["$class": .uid(4), "NS.keys": .array([.uid(11)]), "NS.objects": .array([.uid(12)])]),
            .string("name"),
            .dictionary(["$class": .uid(13), "NSPropertyName": .uid(11), "NSEntity": .uid(7), "NSAttributeType": .integer(700),
                         "NSIsOptional": .integer(1), "NSDefaultValue": .uid(shape == .selfContainingDefault ? 14 : 0)]),
            TestArchive.classDescription("NSAttributeDescription", ["NSAttributeDescription", "NSPropertyDescription", "NSObject"]),
            .dictionary(["$class": .uid(15), "NS.objects": .array([.uid(14)])]),
            TestArchive.classDescription("NSArray"),
            TestArchive.classDescription("NSRelationshipDescription", ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"]),
            .dictionary(["$class": .uid(4), "NS.keys": .array([.uid(21)]), "NS.objects": .array([.uid(19)])]),
            .dictionary(["$class": .uid(4), "NS.keys": .array([.uid(22)]), "NS.objects": .array([.uid(20)])]),
            relationship(21, entity: 7, destination: 8, inverse: 20),
            relationship(22, entity: 8, destination: 7, inverse: 19),
            .string("b"),
            .string("a"),
        ]
        return TestArchive.data(objects: objects)
    }
}
