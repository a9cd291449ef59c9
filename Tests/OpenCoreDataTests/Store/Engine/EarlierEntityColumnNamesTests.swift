import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A to-one whose destination has sub-entities keeps the destination's entity number in `Z<n>_<NAME>`, `n`
/// being the destination's number as Core Data names it (`ZPAGE.Z1_BOOK`); a store this library wrote with
/// the relationship's own number is renamed by a writable open and explained by a read-only one.
@Suite struct EarlierEntityColumnNamesTests {
    /// Book (1) with the sub-entity Novel (2), and Page (3) whose `book` may be either.
    static let xml = InteropFixtures.modelXML("""
    <entity name="Book" representedClassName="Book">
        <attribute name="title" optional="YES" attributeType="String"/>
        <relationship name="pages" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Page" inverseName="book" inverseEntity="Page"/>
    </entity>
    <entity name="Novel" representedClassName="Novel" parentEntity="Book">
        <attribute name="genre" optional="YES" attributeType="String"/>
    </entity>
    <entity name="Page" representedClassName="Page">
        <attribute name="number" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
        <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book"/>
    </entity>
    """)

    static func model() throws -> ManagedObjectModel { try ManagedObjectModel(xmlData: xml, source: "pages") }

    static func columns(of table: String, at url: URL) throws -> [String] {
        try DatabaseQueue(path: url.path).read { db in
            try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { $0["name"] as String }
        }
    }

    /// A store with a novel and a book, each with two pages; returns the pages' book titles by number.
    static func fill(_ stack: TestStack) throws {
        let context = stack.context()
        for (entity, title) in [("Novel", "N"), ("Book", "B")] {
            let book = try context.insertNewObject(forEntityName: entity)
            try book.setValue(title, forKey: "title")
            for number in 0..<2 {
                let page = try context.insertNewObject(forEntityName: "Page")
                try page.setValue(Int32(number + (title == "N" ? 0 : 10)), forKey: "number")
                try page.setValue(book, forKey: "book")
            }
        }
        try context.save()
    }

    static func books(ofPagesIn context: ManagedObjectContext) throws -> [String] {
        let request = OpenCoreData.FetchRequest<ManagedObject>(entityName: "Page")
        request.sortDescriptors = [QuerySortDescriptor(key: "number")]
        return try context.fetch(request).map { page in
            let book = try #require(try page.value(forKey: "book") as? ManagedObject)
            return "\(book.entity.name):\(try book.value(forKey: "title") as? String ?? "")"
        }
    }

    @Test func theColumnIsNumberedAfterTheDestination() throws {
        let model = try Self.model()
        #expect(model.entitiesByName["Book"]?.entityNumber == 1 && model.entitiesByName["Page"]?.entityNumber == 3)
        let stack = try TestStack(model: model)
        try Self.fill(stack)
        let columns = try Self.columns(of: "ZPAGE", at: stack.url)
        #expect(columns.contains("Z1_BOOK") && !columns.contains("Z3_BOOK"), "\(columns)")
        #expect(EarlierEntityColumnNames.candidates(of: model) == [.init(table: "ZPAGE", earlier: "Z3_BOOK", current: "Z1_BOOK")])
        #expect(try Self.books(ofPagesIn: stack.freshContext()) == ["Novel:N", "Novel:N", "Book:B", "Book:B"])
    }

    @Test func aStoreWithTheEarlierNameIsRenamedWhenOpenedWritable() throws {
        let model = try Self.model()
        let stack = try TestStack(model: model)
        try Self.fill(stack)
        try DatabaseQueue(path: stack.url.path).write { db in
            try db.execute(sql: "ALTER TABLE ZPAGE RENAME COLUMN Z1_BOOK TO Z3_BOOK")
        }

        // Read-only: refused, saying which column and what to do; the file is not changed.
        let reader = PersistentStoreCoordinator(managedObjectModel: model)
        #expect { try reader.addPersistentStore(type: .sqlite, at: stack.url, options: StoreOptions(readOnly: true)) } throws: { error in
            guard case StoreError.incompatibleModel(_, let differences)? = error as? StoreError else { return false }
            return differences.contains { $0.contains("ZPAGE.Z1_BOOK is Z3_BOOK here") && $0.contains("open the store writable once") }
        }
        #expect(try Self.columns(of: "ZPAGE", at: stack.url).contains("Z3_BOOK"))

        // Writable: renamed, and every page finds its book of the right entity.
        let context = try stack.freshContext()
        #expect(try Self.books(ofPagesIn: context) == ["Novel:N", "Novel:N", "Book:B", "Book:B"])
        let columns = try Self.columns(of: "ZPAGE", at: stack.url)
        #expect(columns.contains("Z1_BOOK") && !columns.contains("Z3_BOOK"), "\(columns)")
        // And it opens read-only from then on.
        let later = PersistentStoreCoordinator(managedObjectModel: model)
        try later.addPersistentStore(type: .sqlite, at: stack.url, options: StoreOptions(readOnly: true))
    }
}
