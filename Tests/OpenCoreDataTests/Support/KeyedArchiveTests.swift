import Foundation
import Testing
@testable import OpenCoreData

/// A node of Foundation's NSCoding that refers to its parent, so archives with cycles can be made.
final class ArchiveTestNode: NSObject, NSCoding {
    let name: String
    var parent: ArchiveTestNode?
    var children: [ArchiveTestNode] = []

    init(name: String) { self.name = name }

    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "name")
        coder.encode(parent, forKey: "parent")
        coder.encode(children, forKey: "children")
        coder.encode(Int64(children.count), forKey: "count")
    }

    required init?(coder: NSCoder) { nil }
}

/// The keyed-archive reader against Foundation's NSKeyedArchiver, and against damaged and hostile archives.
@Suite struct KeyedArchiveTests {
    private func archived(_ root: Any) throws -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.outputFormat = .binary
        archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }

    @Test func readsWhatFoundationArchives() throws {
        let date = Date(timeIntervalSinceReferenceDate: 12_345.5)
        let root: NSDictionary = [
            "name": "Library", "unicode": "Zürich 東京", "count": 42, "ratio": 2.5, "flag": true,
            "bytes": Data([0, 1, 2, 255]), "when": date,
            "list": ["a", "b", "a"] as NSArray,
            "nested": ["inner": ["x": 7] as NSDictionary] as NSDictionary,
        ]
        let archive = try KeyedArchive(data: try archived(root))
        let value = try archive.resolved(try archive.topObject())
        guard case .dictionary(let dictionary) = value else { Issue.record("not a dictionary: \(value)"); return }
        #expect(dictionary["name"] == .string("Library"))
        #expect(dictionary["unicode"] == .string("Zürich 東京"))
        #expect(dictionary["count"] == .integer(42))
        #expect(dictionary["ratio"] == .real(2.5))
        #expect(dictionary["flag"] == .boolean(true))
        #expect(dictionary["bytes"] == .data(Data([0, 1, 2, 255])))
        #expect(dictionary["when"] == .date(date))
        #expect(dictionary["list"] == .array([.string("a"), .string("b"), .string("a")]))
        // (7, not 1: Foundation on Linux archives a literal 1 in a nested NSDictionary as a boolean.)
        #expect(dictionary["nested"] == .dictionary(["inner": .dictionary(["x": .integer(7)])]))
        #expect(dictionary.count == 9)
    }

    /// A graph with cycles is walked one reference at a time; resolving it into a tree is refused.
    @Test func walksAGraphWithCycles() throws {
        let parent = ArchiveTestNode(name: "Book")
        for name in ["title", "author"] {
            let child = ArchiveTestNode(name: name)
            child.parent = parent
            parent.children.append(child)
        }
        let archive = try KeyedArchive(data: try archived(parent))
        let root = try archive.topObject()
        let instance = try #require(try archive.instance(root))
        #expect(instance.className.hasSuffix("ArchiveTestNode"))
        #expect(try archive.string(archive.reference("name", of: root)) == "Book")
        #expect(try archive.field("count", of: root)?.integer == 2)
        #expect(try archive.reference("parent", of: root) == nil)
        let children = try archive.elements(archive.reference("children", of: root))
        #expect(try children.map { try archive.string(archive.reference("name", of: $0)) } == ["title", "author"])
        #expect(try children.map { try archive.reference("parent", of: $0) } == [root, root])
        #expect(throws: KeyedArchive.Failure.self) { try archive.resolved(root) }
    }

    @Test func refusesWhatIsNotAKeyedArchive() throws {
        let plain = try PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .binary, options: 0)
        #expect(throws: KeyedArchive.Failure.self) { try KeyedArchive(data: plain) }
        #expect(throws: KeyedArchive.Failure.self) { try KeyedArchive(data: Data("not a plist".utf8)) }
        #expect(throws: KeyedArchive.Failure.self) { try KeyedArchive(data: Data()) }
    }

    @Test func refusesReferencesOutOfRange() throws {
        let outOfRangeTop = TestArchive.data(objects: [.string("$null")], top: ["root": .uid(5)])
        let failure = try #require(throws: KeyedArchive.Failure.self) { try KeyedArchive(data: outOfRangeTop) }
        #expect(failure.reason.contains("$top[root]"))

        let badField = TestArchive.data(objects: [
            .string("$null"),
            .dictionary(["$class": .uid(2), "name": .uid(99)]),
            TestArchive.classDescription("Thing"),
        ])
        let archive = try KeyedArchive(data: badField)
        let error = try #require(throws: KeyedArchive.Failure.self) { try archive.reference("name", of: archive.topObject()) }
        #expect(error.reason.contains("object 1 name") && error.reason.contains("99"))
    }

    @Test func refusesAClassThatIsNotAClassDescription() throws {
        let data = TestArchive.data(objects: [
            .string("$null"), .dictionary(["$class": .uid(2)]), .string("not a class"),
        ])
        let archive = try KeyedArchive(data: data)
        #expect(throws: KeyedArchive.Failure.self) { try archive.object(archive.topObject()) }
    }

    /// Shared references doubling at each level would make a tree of 2^40 nodes: refused by the budget.
    @Test func refusesExponentialSharing() throws {
        var objects: [TestArchive.Node] = [.string("$null"), TestArchive.classDescription("NSArray", ["NSArray", "NSObject"])]
        let levels = 40
        for level in 0..<levels {
            let next = objects.count + 1
            objects.append(level == levels - 1
                ? .dictionary(["$class": .uid(1), "NS.objects": .array([])])
                : .dictionary(["$class": .uid(1), "NS.objects": .array([.uid(next), .uid(next)])]))
        }
        let archive = try KeyedArchive(data: TestArchive.data(objects: objects, top: ["root": .uid(2)]))
        let failure = try #require(throws: KeyedArchive.Failure.self) { try archive.resolved(archive.topObject()) }
        #expect(failure.reason.contains("visits more than"))
    }

    /// One value named by thousands of references (CoreFoundation archives equal numbers as one object) is
    /// read: each reference is written in the archive, so the visits stay within what it holds.
    @Test func readsOneValueSharedByManyReferences() throws {
        let count = 12_000
        let objects: [TestArchive.Node] = [
            .string("$null"),
            .dictionary(["$class": .uid(2), "NS.objects": .array(Array(repeating: .uid(3), count: count))]),
            TestArchive.classDescription("NSArray", ["NSArray", "NSObject"]),
            .integer(0),
        ]
        let archive = try KeyedArchive(data: TestArchive.data(objects: objects))
        #expect(try archive.resolved(archive.topObject()) == .array(Array(repeating: .integer(0), count: count)))
    }

    /// An `NSKnownKeysDictionary1` (how Core Data archives a model's entities): keys in its mapping
    /// strategy, values in the same order, a slot holding the empty token left out.
    @Test func readsAKnownKeysDictionary() throws {
        let empty = "__empty_slot_token_4c24_98dc_ac1e_b773__"
        let objects: [TestArchive.Node] = [
            .string("$null"),
            .dictionary(["$class": .uid(2), "version": .integer(1), "searchMapping": .uid(3),
                         "values": .uid(8), "emptyToken": .uid(7)]),
            TestArchive.classDescription("NSKnownKeysDictionary1",
                                         ["NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject"]),
            .dictionary(["$class": .uid(4), "version": .integer(1), "length": .integer(3), "keys": .uid(5)]),
            TestArchive.classDescription("NSKnownKeysMappingStrategy1", ["NSKnownKeysMappingStrategy1", "NSObject"]),
            .dictionary(["$class": .uid(6), "NS.objects": .array([.uid(9), .uid(10), .uid(11)])]),
            TestArchive.classDescription("NSArray", ["NSArray", "NSObject"]),
            .string(empty),
            .dictionary(["$class": .uid(6), "NS.objects": .array([.uid(12), .uid(7), .uid(13)])]),
            .string("Author"), .string("Unused"), .string("Book"),
            .string("an author"), .string("a book"),
        ]
        let archive = try KeyedArchive(data: TestArchive.data(objects: objects))
        let entries = try archive.stringKeyedEntries(archive.topObject())
        #expect(try entries.mapValues { try archive.string($0) } == ["Author": "an author", "Book": "a book"])
        #expect(try archive.resolved(archive.topObject()) == .dictionary(["Author": .string("an author"), "Book": .string("a book")]))

        var uneven = objects
        uneven[8] = .dictionary(["$class": .uid(6), "NS.objects": .array([.uid(12)])])
        let refused = try KeyedArchive(data: TestArchive.data(objects: uneven))
        let failure = try #require(throws: KeyedArchive.Failure.self) { try refused.entries(refused.topObject()) }
        #expect(failure.reason.contains("3 keys but 1 values"))
    }

    @Test func refusesNestingDeeperThanTheLimit() throws {
        var objects: [TestArchive.Node] = [.string("$null"), TestArchive.classDescription("NSArray", ["NSArray", "NSObject"])]
        let levels = KeyedArchive.maximumDepth + 10
        for level in 0..<levels {
            let next = objects.count + 1
            objects.append(.dictionary(["$class": .uid(1), "NS.objects": .array(level == levels - 1 ? [] : [.uid(next)])]))
        }
        let archive = try KeyedArchive(data: TestArchive.data(objects: objects, top: ["root": .uid(2)]))
        let failure = try #require(throws: KeyedArchive.Failure.self) { try archive.resolved(archive.topObject()) }
        #expect(failure.reason.contains("nested more than"))
    }

    /// Random damage to a real archive is refused with a typed error or read, never a crash.
    @Test func damagedArchivesNeverCrash() throws {
        let parent = ArchiveTestNode(name: "Library")
        for index in 0..<5 {
            let child = ArchiveTestNode(name: "child \(index)")
            child.parent = parent
            parent.children.append(child)
        }
        let original = try archived(parent)
        var generator = InteropFixtures.SeededGenerator(seed: 24)
        var refused = 0
        for round in 0..<1500 {
            let damaged = InteropFixtures.damaged(original, round: round, using: &generator)
            do {
                let archive = try KeyedArchive(data: damaged)
                // Walk everything reachable by references, each object once.
                var pending = Array(archive.top.values), seen: Set<Int> = []
                while let next = pending.popLast() {
                    guard seen.insert(next.index).inserted else { continue }
                    guard case .instance(let instance) = try archive.object(next) else { continue }
                    for key in instance.fields.keys { if let target = try archive.reference(key, of: next) { pending.append(target) } }
                    if instance.fields["NS.objects"] != nil { pending += try archive.elements(next) }
                }
                _ = try? archive.resolved(archive.topObject())
            } catch is KeyedArchive.Failure {
                refused += 1
            }
        }
        #expect(refused > 0)
    }
}

/// Writes binary property lists with UIDs (which Foundation's writer cannot), to make hostile keyed archives.
enum TestArchive {
    indirect enum Node {
        case string(String)
        case integer(Int64)
        case uid(Int)
        case array([Node])
        case dictionary([String: Node])
    }

    static func classDescription(_ name: String, _ hierarchy: [String]? = nil) -> Node {
        .dictionary(["$classname": .string(name), "$classes": .array((hierarchy ?? [name]).map { .string($0) })])
    }

    /// A keyed archive with `objects` as `$objects` and `top` as `$top` (root: object 1 by default).
    static func data(objects: [Node], top: [String: Node] = ["root": .uid(1)]) -> Data {
        binary(.dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000),
            "$top": .dictionary(top), "$objects": .array(objects),
        ]))
    }

    /// `root` as a bplist00, every node its own object, references and offsets 8 bytes wide.
    static func binary(_ root: Node) -> Data {
        var table: [[UInt8]] = []
        func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
        func header(_ type: UInt8, _ count: Int) -> [UInt8] {
            count < 15 ? [type << 4 | UInt8(count)] : [type << 4 | 0x0F, 0x13] + bigEndian(UInt64(count), 8)
        }
        func add(_ node: Node) -> Int {
            let bytes: [UInt8]
            switch node {
            case .string(let string): bytes = header(0x5, string.utf8.count) + Array(string.utf8)
            case .integer(let value): bytes = [0x13] + bigEndian(UInt64(bitPattern: value), 8)
            case .uid(let index): bytes = [0x87] + bigEndian(UInt64(index), 8)
            case .array(let items):
                let references = items.map(add)
                bytes = header(0xA, references.count) + references.flatMap { bigEndian(UInt64($0), 8) }
            case .dictionary(let entries):
                let sorted = entries.sorted { $0.key < $1.key }
                let keys = sorted.map { add(.string($0.key)) }, values = sorted.map { add($0.value) }
                bytes = header(0xD, keys.count) + (keys + values).flatMap { bigEndian(UInt64($0), 8) }
            }
            table.append(bytes)
            return table.count - 1
        }
        let top = add(root)
        var output = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in table { offsets.append(output.count); output += object }
        let tableStart = output.count
        for offset in offsets { output += bigEndian(UInt64(offset), 8) }
        output += [0, 0, 0, 0, 0, 0, 8, 8] + bigEndian(UInt64(table.count), 8) + bigEndian(UInt64(top), 8)
            + bigEndian(UInt64(tableStart), 8)
        return Data(output)
    }
}
