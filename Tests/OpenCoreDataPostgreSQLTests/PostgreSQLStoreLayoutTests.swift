import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Opening a store on a real server: the layout created in Core Data's shape, found again, refused for
/// another model, created once when several processes open it at the same moment.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLStoreLayoutTests {
    @Test func createsCoreDataLayoutWithPostgreSQLTypes() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        defer { store.close() }

        let columns = try store.pool.withSession { session in
            try session.rows("""
                SELECT upper(table_name), upper(column_name), data_type FROM information_schema.columns
                WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
                """)
        }.map { ($0[0].storage, $0[1].storage, $0[2].storage) }
        var typeByColumn: [String: String] = [:]
        for (table, column, type) in columns {
            guard case .string(let t) = table, case .string(let c) = column, case .string(let ty) = type else { continue }
            typeByColumn["\(t).\(c)"] = ty
        }
        // Every table and column the SQLite layout has, with the type of its storage class.
        for table in model.schema.tables {
            for column in table.columns {
                let expected = PostgreSQLLayout.columnType(forSQLiteType: column.sqlType)
                    .replacingOccurrences(of: " PRIMARY KEY", with: "").lowercased()
                #expect(typeByColumn["\(table.name).\(column.name)"] == expected, "\(table.name).\(column.name)")
            }
        }
        #expect(typeByColumn["ZAUTHOR.ZRATING"] == "numeric")
        #expect(typeByColumn["ZAUTHOR.ZPHOTO"] == "bytea")
        #expect(typeByColumn["ZAUTHOR.ZBORN"] == "double precision")
        #expect(model.schema.joinTables.allSatisfy { join in join.columns.allSatisfy { typeByColumn["\(join.name).\($0)"] == "bigint" } })
        #expect(typeByColumn["Z_PRIMARYKEY.Z_MAX"] == "bigint")
        // Text compares in code point order whatever the server's locale (the query language relies on it).
        let collations = try store.pool.withSession { session in
            try session.rows("""
                SELECT DISTINCT collation_name FROM information_schema.columns
                WHERE table_schema = current_schema() AND data_type = 'text' AND table_name LIKE 'z%' AND table_name NOT LIKE 'z\\_%'
                """)
        }
        #expect(collations == [["C".storeValue]])

        let entities = try store.pool.withSession { try $0.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") }
        #expect(entities.map { String.fromStoreValue($0[1])! } == model.entitiesByNumber.map(\.name))
        let novel = model.entitiesByName["Novel"]!
        #expect(entities.first { String.fromStoreValue($0[1]) == "Novel" }.map { Int.fromStoreValue($0[2]) } == novel.superentity?.entityNumber)

        let metadata = try store.metadata()
        #expect(metadata.storeType == "PostgreSQL")
        #expect(metadata.uuidString == store.identifier)
        #expect(metadata.differences(from: model).isEmpty)
    }

    @Test func reopensTheSameStoreAndRefusesAnotherModel() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let first = try PostgreSQLStore(model: LibraryModel.make(), configuration: configuration)
        first.close()
        let again = try PostgreSQLStore(model: LibraryModel.make(), configuration: configuration)
        #expect(again.identifier == first.identifier)
        again.close()

        do {
            _ = try PostgreSQLStore(model: LibraryModel.make(extraAttribute: "shelf"), configuration: configuration)
            Issue.record("opened a store written with another model")
        } catch StoreError.incompatibleModel(_, let differences) {
            #expect(differences.contains("column ZAUTHOR.ZSHELF is missing"), "\(differences)")
            #expect(differences.contains { $0.contains("Author") }, "the version hash difference names the entity: \(differences)")
        }
        // The refused open changed nothing.
        let after = try PostgreSQLStore(model: LibraryModel.make(), configuration: configuration)
        #expect(after.identifier == first.identifier)
        after.close()
    }

    /// Text in another collation would compare and sort in the server's locale order, not memory's: a store
    /// whose text columns lost the "C" collation is refused by column.
    /// A store an earlier layout made with `NUMERIC` date columns opens with them widened to `DOUBLE PRECISION`,
    /// its dates as they were, and keeps every bit of a date written afterwards; a read-only open leaves it.
    @Test func widensNumericDateColumnsOfAnEarlierLayout() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let earlier = try PostgreSQLStore(model: model, configuration: configuration)
        try earlier.pool.withSession { session in
            _ = try session.execute("ALTER TABLE ZAUTHOR ALTER COLUMN ZBORN TYPE NUMERIC")
            _ = try session.execute("INSERT INTO ZAUTHOR (Z_PK, Z_ENT, Z_OPT, ZBORN) VALUES (1, ?, 1, 786240000.123457)",
                                    [Int64(model.entitiesByName["Author"]!.entityNumber).storeValue])
        }
        earlier.close()
        func bornType(_ store: PostgreSQLStore) throws -> String? {
            try store.pool.withSession { session in
                try session.rows("SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'zauthor' AND column_name = 'zborn'")
            }.first.flatMap { String.fromStoreValue($0[0]) }
        }
        let reader = try PostgreSQLStore(model: model, configuration: configuration, options: StoreOptions(readOnly: true))
        #expect(try bornType(reader) == "numeric")
        reader.close()

        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(configuration: configuration)
        #expect(try bornType(store) == "double precision")
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let author = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Author")).first)
        #expect(try author.value(forKey: "born") as? Date == Date(timeIntervalSinceReferenceDate: 786240000.123457))
        let precise = Date(timeIntervalSinceReferenceDate: 786240000.1234567)
        try author.setValue(precise, forKey: "born")
        try context.save()
        let fresh = ManagedObjectContext(concurrencyType: .confinement)
        fresh.persistentStoreCoordinator = coordinator
        let reread = try #require(try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Author")).first)
        #expect(try reread.value(forKey: "born") as? Date == precise)
    }

    @Test func refusesTextColumnsOutsideTheCCollation() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let first = try PostgreSQLStore(model: LibraryModel.make(), configuration: configuration)
        _ = try first.pool.withSession { try $0.execute("ALTER TABLE ZAUTHOR ALTER COLUMN ZNAME TYPE TEXT COLLATE \"POSIX\"") }
        first.close()
        do {
            let opened = try PostgreSQLStore(model: LibraryModel.make(), configuration: configuration)
            opened.close()
            Issue.record("opened a store whose text is not in the \"C\" collation")
        } catch StoreError.incompatibleModel(_, let differences) {
            #expect(differences.contains { $0.contains("ZAUTHOR.ZNAME") && $0.contains("collation") }, "\(differences)")
        }
    }

    /// Tables of something else in the schema: refused by name, nothing added.
    @Test func refusesASchemaHoldingOtherTables() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let pool = PostgreSQLConnectionPool(configuration: configuration)
        _ = try pool.withSession { try $0.execute("CREATE TABLE invoices (id BIGINT)") }
        #expect(throws: StoreError.self) { _ = try PostgreSQLStore(model: LibraryModel.make(), configuration: configuration) }
        let tables = try pool.withSession { try $0.rows("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()") }
        #expect(Int.fromStoreValue(tables[0][0]) == 1)
        pool.close()
    }

    /// Eight instances open one empty schema at the same moment: exactly one creates it, all get its identity.
    @Test func concurrentOpensCreateTheLayoutOnce() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 1)
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let identifiers = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            do {
                let store = try PostgreSQLStore(model: model, configuration: configuration)
                identifiers.withLock { $0.append(store.identifier) }
                store.close()
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(Set(identifiers.withLock { $0 }).count == 1)
        #expect(identifiers.withLock { $0 }.count == 8)
    }

    @Test func unreachableServerIsATypedError() throws {
        var configuration = try PostgreSQLStoreConfiguration(url: "postgresql://ocd@127.0.0.1:1/ocd?sslmode=disable&connect_timeout=2")
        configuration.poolSize = 1
        do {
            _ = try PostgreSQLStore(model: LibraryModel.make(), configuration: configuration)
            Issue.record("connected to port 1")
        } catch StoreError.connectionFailed(let server, _) {
            #expect(server.contains("127.0.0.1:1"))
        }
    }
}
