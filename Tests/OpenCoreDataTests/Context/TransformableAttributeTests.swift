import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A value of the app's own, stored by ``PointTransformer`` as the text "x,y".
struct TransformablePoint: Equatable, Sendable {
    var x: Int
    var y: Int
}

/// Point ↔ "x,y" bytes: a transformer of the app's own, registered by name.
final class PointTransformer: ValueTransformer, @unchecked Sendable {
    override class func transformedValueClass() -> Any.Type { Data.self }

    override func transformedValue(_ value: Any?) -> Any? {
        guard let point = value as? TransformablePoint else { return nil }
        return Data("\(point.x),\(point.y)".utf8)
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(separator: ",").compactMap { Int($0) }
        guard parts.count == 2 else { return nil }
        return TransformablePoint(x: parts[0], y: parts[1])
    }
}

/// Transformable attributes through a real SQLite store: Foundation values in keyed archives Core Data and
/// Foundation read, archives Foundation wrote, a transformer of the app's own, and bytes that are not values.
@Suite struct TransformableAttributeTests {
    static let pointTransformerName = ValueTransformerName("TransformableAttributeTests.Point")

    static let model: ManagedObjectModel = {
        ValueTransformer.setValueTransformer(PointTransformer(), forName: pointTransformerName)
        return try! ManagedObjectModel(xmlData: InteropFixtures.modelXML("""
            <entity name="Note" representedClassName="Note">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="payload" optional="YES" attributeType="Transformable"/>
                <attribute name="secure" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>
                <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="NSArray"/>
                <attribute name="location" optional="YES" attributeType="Transformable" valueTransformerName="\(pointTransformerName.rawValue)" customClassName="TransformablePoint"/>
                <attribute name="missing" optional="YES" attributeType="Transformable" valueTransformerName="NoSuchTransformer"/>
                <attribute name="scratch" optional="YES" transient="YES" attributeType="Transformable" customClassName="TransformablePoint"/>
            </entity>
            """), source: "transformable")
    }()

    /// Every Foundation value kind, nested.
    static var everyKind: [String: Any] {
        [
        "string": "Zürich 東京",
        "integer": 42,
        "negative": -7_000_000_000,
        "real": 2.5,
        "flag": true,
        "date": Date(timeIntervalSinceReferenceDate: 12_345.5),
        "data": Data([0, 1, 2, 255]),
        "url": URL(string: "https://example.org/a?b=c")!,
        "uuid": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        "list": ["a", 1, ["nested": [1.5, false]]] as [Any],
        "set": Set(["x", "y", "z"]),
        "empty": [String: Any](),
        ]
    }

    private func onlyNote(_ context: ManagedObjectContext) throws -> ManagedObject {
        let notes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
        return try #require(notes.first)
    }

    /// The bytes a column holds, read with SQLite alone.
    private func storedBytes(_ url: URL, column: String) throws -> Data? {
        try DatabaseQueue(path: url.path).read { db in try Data.fetchOne(db, sql: "SELECT \(column) FROM ZNOTE") }
    }

    private func storeBytes(_ bytes: Data?, _ url: URL, column: String) throws {
        try DatabaseQueue(path: url.path).write { db in try db.execute(sql: "UPDATE ZNOTE SET \(column) = ?", arguments: [bytes]) }
    }

    /// A store with one note whose `payload` holds `value`.
    private func storeWithNote(payload: Any?) throws -> TestStack {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue("note", forKey: "title")
        try note.setValue(payload, forKey: "payload")
        try context.save()
        return stack
    }

    @Test func everyFoundationValueRoundTripsThroughTheStore() throws {
        for (key, value) in Self.everyKind {
            let stack = try storeWithNote(payload: value)
            let read = try onlyNote(stack.freshContext()).value(forKey: "payload")
            #expect(FoundationValueCanon.text(read) == FoundationValueCanon.text(value), "\(key)")
        }
        let stack = try storeWithNote(payload: Self.everyKind)
        let read = try #require(try onlyNote(stack.freshContext()).value(forKey: "payload") as? [String: Any])
        #expect(FoundationValueCanon.text(read) == FoundationValueCanon.text(Self.everyKind))
        // The Swift types a value reads back as.
        #expect(read["integer"] as? Int == 42)
        #expect(read["flag"] as? Bool == true)
        #expect(read["real"] as? Double == 2.5)
        #expect(read["uuid"] as? UUID == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(read["url"] as? URL == URL(string: "https://example.org/a?b=c"))
        #expect(read["set"] as? Set<AnyHashable> == Set<AnyHashable>(["x", "y", "z"]))
        // Nil stays nil, and the same value reads the same before the save.
        let context = try stack.freshContext()
        let note = try onlyNote(context)
        try note.setValue(nil, forKey: "payload")
        #expect(try note.value(forKey: "payload") == nil)
        try note.setValue(["a": [1, 2]], forKey: "secure")
        #expect(FoundationValueCanon.text(try note.value(forKey: "secure")) == FoundationValueCanon.text(["a": [1, 2]]))
        try context.save()
        #expect(try storedBytes(stack.url, column: "ZPAYLOAD") == nil)
    }

    @Test func storedBytesDecodeWithFoundationsUnarchiver() throws {
        let stack = try storeWithNote(payload: Self.everyKind)
        let bytes = try #require(try storedBytes(stack.url, column: "ZPAYLOAD"))
        let classes: [AnyClass] = [NSDictionary.self, NSArray.self, NSSet.self, NSString.self, NSNumber.self,
                                   NSDate.self, NSData.self, NSURL.self, NSUUID.self]
        let decoded = try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: bytes)
        #expect(FoundationValueCanon.text(decoded) == FoundationValueCanon.text(Self.everyKind))
    }

    @Test func archivesFoundationWroteDecodeHere() throws {
        let root: NSDictionary = [
            "name": "Library", "count": 42, "ratio": 2.5, "bytes": Data([9, 8]),
            "when": Date(timeIntervalSinceReferenceDate: -1_000),
            "list": ["a", "b"] as NSArray,
            "nested": ["inner": ["x": 7] as NSDictionary] as NSDictionary,
            "id": NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            "link": NSURL(string: "https://example.org/")!,
            "set": NSSet(array: ["p", "q"]),
        ]
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.outputFormat = .binary
        archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        let bytes = archiver.encodedData
        // The class names are Foundation's, as an Apple device writes them.
        let names = Set(try KeyedArchive(data: bytes).objects.compactMap { $0.dictionary?["$classname"]?.string })
        #expect(names.isSubset(of: KeyedArchive.foundationClassNames), "\(names)")

        let stack = try storeWithNote(payload: nil)
        try storeBytes(bytes, stack.url, column: "ZPAYLOAD")
        let read = try onlyNote(stack.freshContext()).value(forKey: "payload")
        #expect(FoundationValueCanon.text(read) == FoundationValueCanon.text(root))
    }

    @Test func aTransformerOfTheAppsOwnIsUsedByName() throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue(TransformablePoint(x: 3, y: -4), forKey: "location")
        try context.save()
        #expect(try storedBytes(stack.url, column: "ZLOCATION") == Data("3,-4".utf8))
        let read = try onlyNote(stack.freshContext())
        #expect(try read.value(forKey: "location") as? TransformablePoint == TransformablePoint(x: 3, y: -4))
        // A value the transformer does not take, and bytes it cannot turn back.
        #expect(throws: ObjectGraphError.self) { try read.setValue("3,4", forKey: "location") }
        try storeBytes(Data("three".utf8), stack.url, column: "ZLOCATION")
        let damaged = try onlyNote(stack.freshContext())
        do {
            _ = try damaged.value(forKey: "location")
            Issue.record("bytes the transformer cannot read must be refused")
        } catch ObjectGraphError.undecodableValue(let entity, let key, let object, _) {
            #expect(entity == "Note" && key == "location" && object == damaged.objectID)
        }
    }

    @Test func theRegistryNamesItsTransformers() throws {
        _ = Self.model
        #expect(ValueTransformer(forName: .secureUnarchiveFromDataTransformerName) is SecureUnarchiveFromDataTransformer)
        #expect(ValueTransformer(forName: .keyedUnarchiveFromDataTransformerName) is SecureUnarchiveFromDataTransformer)
        #expect(PointTransformer(forName: Self.pointTransformerName) != nil)
        #expect(ValueTransformer(forName: "NoSuchTransformer") == nil)
        #expect(Set(ValueTransformer.valueTransformerNames()).isSuperset(of: [.secureUnarchiveFromDataTransformerName,
                                                                              Self.pointTransformerName]))
        let name = ValueTransformerName("TransformableAttributeTests.removed")
        ValueTransformer.setValueTransformer(ValueTransformer(), forName: name)
        #expect(ValueTransformer(forName: name) != nil)
        ValueTransformer.setValueTransformer(nil, forName: name)
        #expect(ValueTransformer(forName: name) == nil)

        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        let note = try context.insertNewObject(forEntityName: "Note")
        do {
            try note.setValue(["a"], forKey: "missing")
            Issue.record("an unregistered transformer must be refused")
        } catch ObjectGraphError.unknownValueTransformer(let entity, let key, let transformer) {
            #expect(entity == "Note" && key == "missing" && transformer == "NoSuchTransformer")
        }
    }

    @Test func aValueOfAnotherClassThanTheModelNamesIsRefused() throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue(["red", "green"], forKey: "tags")
        do {
            try note.setValue(["red": 1], forKey: "tags")
            Issue.record("a dictionary in an NSArray attribute must be refused")
        } catch ObjectGraphError.typeMismatch(let entity, let key, let expected, _) {
            #expect(entity == "Note" && key == "tags" && expected.contains("NSArray"))
        }
        #expect(throws: ObjectGraphError.self) { try note.setValue("red", forKey: "tags") }
        #expect(throws: ObjectGraphError.self) { try note.setValue(NSObject(), forKey: "payload") }
        try context.save()
        // An archive of another class in the column is refused when read.
        try storeBytes(try KeyedArchiveWriter.archive(["red": 1]), stack.url, column: "ZTAGS")
        let read = try onlyNote(stack.freshContext())
        do {
            _ = try read.value(forKey: "tags")
            Issue.record("a dictionary read from an NSArray attribute must be refused")
        } catch ObjectGraphError.undecodableValue(let entity, let key, let object, let reason) {
            #expect(entity == "Note" && key == "tags" && object == read.objectID && reason.contains("NSArray"))
        }
    }

    @Test func aTransientTransformableKeepsAnyValueOfItsClass() throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        let note = try context.insertNewObject(forEntityName: "Note")
        // No archive could hold a TransformablePoint; a transient value is never stored, so none is made.
        try note.setValue(TransformablePoint(x: 1, y: 2), forKey: "scratch")
        #expect(try note.value(forKey: "scratch") as? TransformablePoint == TransformablePoint(x: 1, y: 2))
        #expect(throws: ObjectGraphError.self) { try note.setValue("1,2", forKey: "scratch") }
        try context.save()
    }

    @Test func hostileBytesAreATypedErrorNamingTheRow() throws {
        let stack = try storeWithNote(payload: Self.everyKind)
        let original = try #require(try storedBytes(stack.url, column: "ZPAYLOAD"))
        // An archive of a class that is not a Foundation value, as Foundation writes it.
        let node = ArchiveTestNode(name: "node")
        let foreign = try NSKeyedArchiver.archivedData(withRootObject: node, requiringSecureCoding: false)
        var generator = InteropFixtures.SeededGenerator(seed: 25)
        var refused = 0
        let rounds = 300
        for round in 0...rounds {
            let bytes = round == rounds ? foreign : InteropFixtures.damaged(original, round: round, using: &generator)
            try storeBytes(bytes, stack.url, column: "ZPAYLOAD")
            let note = try onlyNote(stack.freshContext())
            do {
                _ = try note.value(forKey: "payload")
            } catch ObjectGraphError.undecodableValue(let entity, let key, let object, let reason) {
                #expect(entity == "Note" && key == "payload" && object == note.objectID)
                if round == rounds { #expect(reason.contains("ArchiveTestNode"), "\(reason)") }
                refused += 1
            }
        }
        #expect(refused > rounds / 2)
    }
}
