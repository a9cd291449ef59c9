import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// `[c]`, `uppercase:` and `lowercase:` on PostgreSQL: the store's mapping functions are installed once per
/// schema and map as Swift does, and a database whose text is not UTF-8 is refused.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLCaseMappingTests {
    @Test func functionsAreInstalledOnceAndMapAsSwift() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        try PostgreSQLStore(model: model, configuration: configuration).close()
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        defer { store.close() }
        let functions = try store.pool.withSession { session in
            try session.rows("""
                SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = current_schema() AND p.proname LIKE 'ocd\\_%' ORDER BY 1
                """)
        }.compactMap { $0.first.flatMap { String.fromStoreValue($0) } }
        #expect(functions == CaseMappingTable.all.map(\.functionName).sorted())

        let samples = ["STRASSE", "straße", "GROẞ", "ẞ", "Émile", "ǰ", "ᏣᎳᎩ", "ꮳꮃꭹ", "ΣΑΣ", "ﬁle", "İstanbul", "Ǆemal", "ŉ", "plain", ""]
        for table in CaseMappingTable.all {
            for sample in samples {
                let mapped = try store.pool.withSession { session in
                    try session.rows("SELECT \(table.functionName)(?)", [sample.storeValue])
                }.first?.first.flatMap { String.fromStoreValue($0) }
                #expect(mapped == table.kind.map(sample), "\(table.kind) \(sample)")
            }
        }
    }

    @Test func caseInsensitiveOperatorsAndCaseFunctionsMatchMemory() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        defer { store.close() }
        let author = try #require(model.entitiesByName["Author"])
        let names = ["straße", "STRASSE", "Émile", "ÉMILE", "emile", "ᏣᎳᎩ", "ꮳꮃꭹ", "Ǆemal", "ǆEMAL", "x%y"]
        for (index, name) in names.enumerated() {
            _ = try store.pool.withSession { session in
                try session.execute("INSERT INTO ZAUTHOR (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)",
                                    [Int64(index + 1).storeValue, Int64(author.entityNumber).storeValue, name.storeValue])
            }
        }
        let predicates = [
            "name ==[c] 'strasse'", "name !=[c] 'STRASSE'", "name BEGINSWITH[c] 'STR'", "name ENDSWITH[c] 'SSE'",
            "name CONTAINS[c] 'MIL'", "name LIKE[c] '*MILE'", "name LIKE[c] 'X%Y'", "name <[c] 'f'", "name IN[c] 'xÉMILEx'",
            "name ==[c] 'ꮳꮃꭹ'", "name ==[c] 'ǅEMAL'", "name ==[c] nil", "name >=[c] 'ǅ'",
            "uppercase:(name) == 'STRASSE'", "lowercase:(name) == 'ǆemal'", "uppercase:(name) BEGINSWITH 'ÉM'",
            "lowercase:(name) < 'f'", "uppercase:(score) == nil",
        ]
        for format in predicates {
            let predicate = try QueryPredicate(format: format)
            let fetched = Set(try store.fetchRows(entity: author, predicate: predicate).map(\.primaryKey))
            var expected: Set<Int64> = []
            for (index, name) in names.enumerated() where try predicate.evaluate(with: ["name": name]) {
                expected.insert(Int64(index + 1))
            }
            #expect(fetched == expected, "\(format)")
            #expect(!expected.isEmpty || format.contains("nil"), "\(format) selects nothing, so it proves little")
        }
    }

    @Test func databaseNotInUTF8IsRefused() throws {
        var admin = try PostgreSQLStoreConfiguration(url: PostgreSQLTestServer.url!)
        admin.schema = nil
        let database = "ocd_ascii_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)
        let pool = PostgreSQLConnectionPool(configuration: admin)
        defer {
            _ = try? pool.withSession { try $0.execute("DROP DATABASE IF EXISTS \(database)") }
            pool.close()
        }
        _ = try pool.withSession { try $0.execute("CREATE DATABASE \(database) ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0") }
        var configuration = admin
        configuration.database = database
        let error = #expect(throws: StoreError.self) {
            try PostgreSQLStore(model: try LibraryModel.make(), configuration: configuration).close()
        }
        guard case .incompatibleModel(_, let differences)? = error else {
            Issue.record("expected incompatibleModel, got \(String(describing: error))")
            return
        }
        #expect(differences.contains { $0.contains("SQL_ASCII") })
    }
}
