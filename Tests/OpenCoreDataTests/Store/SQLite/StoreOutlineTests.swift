import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A store read without its model: entities from Z_PRIMARYKEY, rows, columns typed by what they hold.
@Suite struct StoreOutlineTests {
    @Test func outlinesAStoreFromItsOwnTables() throws {
        let directory = TemporaryDirectory()
        let store = directory.file("Library.sqlite")
        try RenumberedStoreFixture.renumberedStore(
            model: ManagedObjectModel(contentsOf: RenumberedStoreFixture.modelFolder(in: directory)), at: store)
        let before = try Data(contentsOf: store)
        let outline = try StoreOutline(storeAt: store)
        #expect(outline.entities.map(\.name) == ["Ebook", "Author", "Book"])
        #expect(outline.entities.map(\.number) == [1, 2, 3])
        let ebook = outline.entities[0]
        #expect(ebook.superentityName == "Book" && ebook.tableName == "ZBOOK" && ebook.rowCount == 1)
        let kinds = Dictionary(uniqueKeysWithValues: ebook.columns.map { ($0.name, $0.kinds) })
        #expect(kinds["ZTITLE"] == ["text"] && kinds["ZAUTHOR"] == ["integer"] && kinds["ZFORMAT"] == [])
        #expect(outline.entities[1].columns.map(\.name) == ["ZNAME"])
        #expect(try Data(contentsOf: store) == before)
    }

    /// Names from the file reach SQL quoted: a table whose name needs quoting is read, not executed.
    @Test func oddNamesInTheFileAreQuoted() throws {
        let directory = TemporaryDirectory()
        let store = directory.file("Odd.sqlite")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
            try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Odd\"; DROP TABLE Z_PRIMARYKEY; --', 0, 0), (2, 'Lost', 0, 0)")
            try db.execute(sql: #"CREATE TABLE "ZODD""; DROP TABLE Z_PRIMARYKEY; --" (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, "we""ird")"#)
            try db.execute(sql: #"INSERT INTO "ZODD""; DROP TABLE Z_PRIMARYKEY; --" VALUES (1, 1, 'x'), (2, 1, 3)"#)
        }
        try queue.close()
        let outline = try StoreOutline(storeAt: store)
        #expect(outline.entities.count == 2)
        #expect(outline.entities[0].rowCount == 2)
        #expect(outline.entities[0].columns == [StoreOutline.Column(name: #"we"ird"#, kinds: ["integer", "text"])])
        #expect(outline.entities[1].tableName == nil && outline.entities[1].rowCount == nil)

        let text = directory.file("notes.txt")
        try Data("not a store at all, just enough text to be more than a header".utf8).write(to: text)
        #expect(throws: StoreError.self) { try StoreOutline(storeAt: text) }
    }
}
