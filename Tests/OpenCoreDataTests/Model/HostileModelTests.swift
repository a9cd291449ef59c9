import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Model files are outside input: names in them must reach SQL only as checked, quoted names, and names
/// the store could not tell apart are refused when the model loads, not when a store is created.
@Suite struct HostileModelTests {
    /// Writes `contents` as a `.xcdatamodel` folder in `directory` and loads it.
    private func loadModel(_ contents: String, in directory: TemporaryDirectory) throws -> ManagedObjectModel {
        let folder = directory.file("Hostile.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: folder.appendingPathComponent("contents"))
        return try ManagedObjectModel(contentsOf: folder)
    }

    private func modelXML(_ entities: String) -> String {
        #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><model type="com.apple.IDECoreDataModeler.DataModel">"#
            + entities + "</model>"
    }

    @Test func anIndexNameCarryingSQLIsRefusedWhenTheModelLoads() throws {
        let directory = TemporaryDirectory()
        let hostileName = "x ON ZA (ZNAME); CREATE TRIGGER EVIL AFTER INSERT ON ZA BEGIN DELETE FROM ZA; END; CREATE INDEX y"
        let xml = modelXML("""
            <entity name="A"><attribute name="name" attributeType="String"/>
            <fetchIndex name="\(hostileName)"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>
            </entity>
            """)
        #expect(throws: ModelError.invalidIndexName(entity: "A", index: hostileName)) {
            try loadModel(xml, in: directory)
        }
    }

    @Test(arguments: [
        ("Item", "ITEM", "ZITEM"),
        ("Straße", "STRASSE", "ZSTRASSE"),
    ])
    func entitiesSharingATableAreRefusedNamingBoth(_ first: String, _ second: String, _ table: String) throws {
        let directory = TemporaryDirectory()
        let xml = modelXML("""
            <entity name="\(first)"><attribute name="name" attributeType="String"/></entity>
            <entity name="\(second)"><attribute name="name" attributeType="String"/></entity>
            """)
        #expect(throws: ModelError.conflictingNames(first: "entity '\(first)'", second: "entity '\(second)'",
                                                     storeName: table)) {
            try loadModel(xml, in: directory)
        }
    }

    @Test func twoIndexesWithOneNameAreRefused() throws {
        let directory = TemporaryDirectory()
        let xml = modelXML("""
            <entity name="A"><attribute name="name" attributeType="String"/><attribute name="rank" attributeType="Integer 64"/>
            <fetchIndex name="byKey"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>
            <fetchIndex name="BYKEY"><fetchIndexElement property="rank" type="Binary" order="ascending"/></fetchIndex>
            </entity>
            """)
        #expect(throws: ModelError.conflictingNames(first: "index 'byKey' of entity 'A'",
                                                     second: "index 'BYKEY' of entity 'A'", storeName: "Z_A_BYKEY")) {
            try loadModel(xml, in: directory)
        }
    }

    @Test func anEntityNamedLikeAnIndexIsRefused() throws {
        // The foreign-key index on ZITEM.ZLIST is ZITEM_ZLIST_INDEX, which is also this entity's table.
        #expect(throws: ModelError.conflictingNames(first: "entity 'ITEM_ZLIST_INDEX'",
                                                     second: "the index of relationship 'List.items'",
                                                     storeName: "ZITEM_ZLIST_INDEX")) {
            try ManagedObjectModel {
                EntityDescription("Item") { ToOne("list", "List", inverse: "items") }
                EntityDescription("List") { ToMany("items", "Item", inverse: "list") }
                EntityDescription("ITEM_ZLIST_INDEX") { Attribute("name", .string) }
            }
        }
    }

    @Test func joinTablesSharingANameAreRefused() throws {
        #expect(throws: ModelError.conflictingNames(first: "relationship 'Post.tags'",
                                                     second: "relationship 'Post.Tags'", storeName: "Z_1TAGS")) {
            try ManagedObjectModel {
                EntityDescription("Post") {
                    ToMany("tags", "Tag", inverse: "posts")
                    ToMany("Tags", "Tag", inverse: "otherPosts")
                }
                EntityDescription("Tag") {
                    ToMany("posts", "Post", inverse: "tags")
                    ToMany("otherPosts", "Post", inverse: "Tags")
                }
            }
        }
    }

    @Test(arguments: ["_PRIMARYKEY", "_1TAGS", "1Item", "It em", "It\"em", "Item;", ""])
    func entityNamesCoreDataRefusesAreRefused(_ name: String) throws {
        #expect(throws: ModelError.invalidName(entity: name, property: nil)) {
            try ManagedObjectModel { EntityDescription(name) { Attribute("name", .string) } }
        }
        #expect(throws: ModelError.invalidName(entity: "Item", property: name)) {
            try ManagedObjectModel { EntityDescription("Item") { Attribute(name, .string) } }
        }
    }

    @Test func creationStatementsQuoteEveryName() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Item", indexes: [IndexDescription(name: "byName", propertyNames: ["name"])]) {
                Attribute("name", .string)
            }
        }
        let statements = model.schema.creationSQL
        #expect(statements.contains(#"CREATE TABLE "ZITEM" ( "Z_PK" INTEGER PRIMARY KEY, "Z_ENT" INTEGER, "Z_OPT" INTEGER, "ZNAME" VARCHAR )"#))
        #expect(statements.contains(#"CREATE INDEX "Z_ITEM_BYNAME" ON "ZITEM" ("ZNAME")"#))
    }

    /// Random entity names from an alphabet with quotes, spaces, semicolons, both cases and letters that
    /// change length in capitals. The reference: a model is refused exactly when a name is not a letter
    /// followed by letters, digits and underscores, or when two names are equal in capitals; a model that
    /// loads creates a store holding exactly its own tables, and a row saved in each entity is read back.
    @Test func randomEntityNamesAreRefusedOrStoredFaithfully() throws {
        var generator = SeededGenerator(seed: 30)
        let alphabet: [String] = ["a", "A", "b", "B", "ß", "S", "s", "_", "1", " ", "\"", ";", "-", "é", "É"]
        var refused = 0, stored = 0
        for round in 0..<60 {
            let count = Int.random(in: 1...3, using: &generator)
            let names = (0..<count).map { _ in
                (0..<Int.random(in: 1...4, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
                    .joined()
            }
            func isValid(_ name: String) -> Bool {
                name.range(of: #"^\p{L}[\p{L}\p{N}_]*$"#, options: .regularExpression) != nil
            }
            let expectRefusal = !names.allSatisfy(isValid) || Set(names.map { $0.uppercased() }).count != names.count
            let model: ManagedObjectModel
            do {
                model = try ManagedObjectModel(entities: names.map { name in
                    EntityDescription(name) { Attribute("value", .string) }
                })
            } catch let error as ModelError {
                #expect(expectRefusal, "round \(round): \(names) refused: \(error)")
                refused += 1
                continue
            }
            #expect(!expectRefusal, "round \(round): \(names) should have been refused")
            let stack = try TestStack(model: model)
            let context = stack.context()
            for name in names {
                try context.insertNewObject(forEntityName: name).setValue("v-\(name)", forKey: "value")
            }
            try context.save()
            let objects = try DatabaseQueue(path: stack.url.path).read { db in
                try Row.fetchAll(db, sql: "SELECT type, name FROM sqlite_master WHERE type != 'index'")
                    .map { "\($0["type"] as String) \($0["name"] as String)" }
            }
            #expect(Set(objects) == Set(["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].map { "table \($0)" }
                + names.map { "table Z\($0.uppercased())" }), "round \(round): \(names)")
            let reader = stack.context()
            for name in names {
                let values = try reader.fetch(FetchRequest<ManagedObject>(entityName: name)).map {
                    try $0.value(forKey: "value") as? String
                }
                #expect(values == ["v-\(name)"], "round \(round): \(name)")
            }
            stored += 1
        }
        // Both outcomes must be exercised, or the property says nothing.
        #expect(refused >= 10 && stored >= 10, "\(refused) refused, \(stored) stored")
    }
}
