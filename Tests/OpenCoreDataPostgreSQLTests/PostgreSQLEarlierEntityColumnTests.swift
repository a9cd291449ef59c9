import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// On PostgreSQL as on SQLite: a store whose to-one entity-number column still has the name this library
/// gave it before it followed Core Data (`Z3_BOOK` for `Page.book`, now `Z1_BOOK`) is renamed by a writable
/// open and explained by a read-only one.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLEarlierEntityColumnTests {
    static let xml = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="Book" representedClassName="Book">
            <attribute name="title" optional="YES" attributeType="String"/>
            <relationship name="pages" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Page" inverseName="book" inverseEntity="Page"/>
        </entity>
        <entity name="Novel" representedClassName="Novel" parentEntity="Book"/>
        <entity name="Page" representedClassName="Page">
            <attribute name="number" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
            <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book"/>
        </entity>
    </model>
    """

    static func books(ofPagesIn coordinator: PersistentStoreCoordinator) throws -> [String] {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let request = FetchRequest<ManagedObject>(entityName: "Page")
        request.sortDescriptors = [QuerySortDescriptor(key: "number")]
        return try context.fetch(request).map { page in
            let book = try #require(try page.value(forKey: "book") as? ManagedObject)
            return "\(book.entity.name):\(try book.value(forKey: "title") as? String ?? "")"
        }
    }

    @Test func aStoreWithTheEarlierNameIsRenamedWhenOpenedWritable() throws {
        let place = try PostgreSQLMigrationTests.Place()
        let model = try ManagedObjectModel(xmlData: Data(Self.xml.utf8), source: "pages")
        do {
            let coordinator = try place.open(model)
            defer { for store in coordinator.postgreSQLStores { coordinator.remove(store) } }
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            for (entity, title, number) in [("Novel", "N", 1), ("Book", "B", 2)] {
                let book = try context.insertNewObject(forEntityName: entity)
                try book.setValue(title, forKey: "title")
                let page = try context.insertNewObject(forEntityName: "Page")
                try page.setValue(Int32(number), forKey: "number")
                try page.setValue(book, forKey: "book")
            }
            try context.save()
        }
        try place.withSession { try $0.execute("ALTER TABLE ZPAGE RENAME COLUMN Z1_BOOK TO Z3_BOOK") }

        #expect { try place.open(model, options: StoreOptions(readOnly: true)) } throws: { error in
            guard case StoreError.incompatibleModel(_, let differences)? = error as? StoreError else { return false }
            return differences.contains { $0.contains("ZPAGE.Z1_BOOK is Z3_BOOK here") }
        }
        let coordinator = try place.open(model)
        defer { for store in coordinator.postgreSQLStores { coordinator.remove(store) } }
        #expect(try Self.books(ofPagesIn: coordinator) == ["Novel:N", "Book:B"])
        let columns = try place.withSession { session in
            try session.rows("SELECT upper(column_name) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'zpage'")
                .compactMap { String.fromStoreValue($0[0]) }
        }
        #expect(columns.contains("Z1_BOOK") && !columns.contains("Z3_BOOK"), "\(columns)")
    }
}
