import Foundation
import Testing
@testable import OpenCoreData

/// Every `xcmapping.xml` in the corpus is a Core Data XML store Xcode wrote: each opens without a model,
/// holds as many objects per entity as the file has `<object>` elements, and survives being saved again and
/// edited (checked against a plain reference of its objects).
@Suite(.enabled(if: AppleMadeFixtures.available, AppleMadeFixtures.absentMessage))
struct XMLStoreCorpusTests {
    static let files = AppleMadeFixtures.files(endingWith: "xcmapping.xml")

    /// An object as the file states it, values normalized (base64 decoded, numbers parsed).
    struct FileObject: Hashable {
        var type: String
        var attributes: [String: String]
        var relationships: [String: [String]]
    }

    static func snapshot(of url: URL) throws -> [String: FileObject] {
        let document = try XMLStoreDocument.parse(Data(contentsOf: url), path: url.path)
        var objects: [String: FileObject] = [:]
        for object in document.objects {
            var attributes: [String: String] = [:]
            for attribute in object.attributes {
                switch attribute.type {
                case "binary", "transformable":
                    attributes[attribute.name.lowercased()] = Data(base64Encoded: attribute.text, options: .ignoreUnknownCharacters)?.base64EncodedString()
                case "string": attributes[attribute.name.lowercased()] = attribute.text
                default: attributes[attribute.name.lowercased()] = attribute.text.trimmingCharacters(in: .whitespacesAndNewlines)
                }
            }
            var relationships: [String: [String]] = [:]
            // A to-many relationship is a set: the order the file lists it in means nothing.
            for relationship in object.relationships where !relationship.idrefs.isEmpty {
                relationships[relationship.name.lowercased()] = relationship.idrefs.sorted()
            }
            objects[object.id] = FileObject(type: object.type.uppercased(), attributes: attributes, relationships: relationships)
        }
        return objects
    }

    /// Counted from the text alone, without the reader.
    static func objectCounts(in url: URL) throws -> [String: Int] {
        let text = try String(contentsOf: url, encoding: .utf8)
        var counts: [String: Int] = [:]
        for match in text.matches(of: /<object type="([^"]+)"/) { counts[String(match.output.1).uppercased(), default: 0] += 1 }
        return counts
    }

    static func open(_ url: URL, readOnly: Bool) throws -> (PersistentStoreCoordinator, SQLiteStore, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try .derivedModel(ofXMLStoreAt: url))
        let store = try coordinator.addPersistentStore(type: .xml, at: url, options: StoreOptions(readOnly: readOnly))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, store, context)
    }

    static func copy(_ url: URL) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("xml-corpus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent("store.xml")
        try FileManager.default.copyItem(at: url, to: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path)
        return copy
    }

    @Test func theCorpusHoldsItsXMLStores() {
        #expect(Self.files.count >= 10)
    }

    @Test(arguments: files) func everyStoreOpensWithoutAModelAndCountsItsObjects(_ url: URL) throws {
        let (coordinator, _, context) = try Self.open(url, readOnly: true)
        var counts: [String: Int] = [:]
        for entity in coordinator.managedObjectModel.entities {
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            let count = try context.count(for: request)
            if count > 0 { counts[entity.name.uppercased()] = count }
        }
        #expect(counts == (try Self.objectCounts(in: url)), "\(url.path)")
    }

    @Test(arguments: files) func savingAgainKeepsEveryObject(_ url: URL) throws {
        let copy = try Self.copy(url)
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let original = try Self.snapshot(of: url)
        do {
            let (coordinator, _, context) = try Self.open(copy, readOnly: false)
            // A save that adds and a save that removes one object: the file is written twice.
            let entity = try #require(coordinator.managedObjectModel.entities.first)
            let added = try context.insertNewObject(forEntityName: entity.name)
            try context.save()
            context.delete(added)
            try context.save()
        }
        #expect(try Self.snapshot(of: copy) == original)
        let metadata = try XMLStoreDocument.parse(Data(contentsOf: copy), path: copy.path).info.metadata
        let originalMetadata = try XMLStoreDocument.parse(Data(contentsOf: url), path: url.path).info.metadata
        #expect(metadata[StoreMetadata.Key.versionHashes] == originalMetadata[StoreMetadata.Key.versionHashes])
    }

    /// Random edits made through a context, and the same edits made to a plain reference of the file's
    /// objects: after saving and opening the file again, the two agree.
    @Test(arguments: files.prefix(4)) func editsSurviveReopening(_ url: URL) throws {
        let copy = try Self.copy(url)
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        var reference = try Self.snapshot(of: url)
        var added: [FileObject] = []
        var random = SeededGenerator(seed: UInt64(url.path.utf8.count))
        do {
            let (coordinator, store, context) = try Self.open(copy, readOnly: false)
            let xmlFile = try #require(store.xmlFile)
            var byFileID: [String: ManagedObject] = [:]
            for entity in coordinator.managedObjectModel.entities {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name)) {
                    let table = coordinator.managedObjectModel.schema.mapping(for: entity).tableName
                    byFileID[try #require(xmlFile.fileID(table: table, key: object.objectID.primaryKey))] = object
                }
            }
            #expect(byFileID.count == reference.count)
            let texts = ["plain", "a & b < c > \"d\"", "ünïcödé ✓", "", "line\nbreak\ttab"]
            for round in 0..<3 {
                for _ in 0..<8 {
                    guard let id = byFileID.keys.sorted().randomElement(using: &random), let object = byFileID[id] else { break }
                    let strings = object.entity.allProperties.compactMap { $0 as? AttributeDescription }.filter { $0.attributeType == .string }
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0 where !strings.isEmpty:
                        let attribute = strings.randomElement(using: &random)!
                        let text = texts.randomElement(using: &random)! + "\(round)"
                        try object.setValue(text, forKey: attribute.name)
                        reference[id]?.attributes[attribute.name.lowercased()] = text
                    case 1:
                        context.delete(object)
                        byFileID[id] = nil
                        reference[id] = nil
                        for key in reference.keys {
                            for (name, ids) in reference[key]!.relationships {
                                let kept = ids.filter { $0 != id }
                                reference[key]!.relationships[name] = kept.isEmpty ? nil : kept
                            }
                        }
                    default:
                        let new = try context.insertNewObject(forEntityName: object.entity.name)
                        var attributes: [String: String] = [:]
                        if let attribute = strings.first {
                            try new.setValue("new \(round)", forKey: attribute.name)
                            attributes[attribute.name.lowercased()] = "new \(round)"
                        }
                        added.append(FileObject(type: object.entity.name.uppercased(), attributes: attributes, relationships: [:]))
                    }
                }
                try context.save()
            }
        }
        let reopened = try Self.snapshot(of: copy)
        #expect(reopened.filter { reference[$0.key] != nil } == reference)
        let newObjects = reopened.filter { reference[$0.key] == nil }.values.map { "\($0)" }.sorted()
        #expect(newObjects == added.map { "\($0)" }.sorted())
        // And the library reads it back as it wrote it.
        _ = try Self.open(copy, readOnly: true)
    }
}
