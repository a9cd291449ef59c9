import Foundation
import OpenCoreData

/// What a database schema holds of a store, found without creating or changing anything: tools that only
/// read (`ocd inspect`, `ocd fetch`, `ocd watch`) ask before opening, since opening an empty schema creates
/// a store there.
package struct PostgreSQLStorePresence: Sendable, Equatable {
    /// Whether the schema holds Core Data's `Z_METADATA` and `Z_PRIMARYKEY`.
    package var hasStore: Bool
    /// Whether it holds the persistent history tables (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`).
    package var hasHistory: Bool

    /// Looks in the schema `configuration` names (`public` when none), through a connection that does not
    /// create the schema.
    ///
    /// - Throws: ``StoreError/connectionFailed(server:reason:)`` when the server cannot be reached;
    ///   ``StoreError`` when it refuses the query or the connection drops.
    package static func find(configuration: PostgreSQLStoreConfiguration) throws -> PostgreSQLStorePresence {
        var plain = configuration
        plain.schema = nil
        plain.poolSize = 1
        let pool = PostgreSQLConnectionPool(configuration: plain)
        defer { pool.close() }
        let names = try pool.withSession { session in
            try session.rows("SELECT upper(table_name) FROM information_schema.tables WHERE table_schema = ?",
                             [(configuration.schema?.lowercased() ?? "public").storeValue])
        }
        let tables = Set(names.compactMap { $0.first.flatMap { String.fromStoreValue($0) } })
        return PostgreSQLStorePresence(
            hasStore: tables.isSuperset(of: ["Z_METADATA", "Z_PRIMARYKEY"]),
            hasHistory: tables.isSuperset(of: ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"]))
    }
}

/// The persistent history a store holds, in numbers.
package struct PostgreSQLHistorySummary: Sendable, Equatable {
    /// Rows of `ATRANSACTION`.
    package var transactions: Int
    /// Rows of `ACHANGE`.
    package var changes: Int
    /// Rows of `ATRANSACTIONSTRING` (authors, context names, processes).
    package var strings: Int
    /// The newest transaction's token; nil when there is none.
    package var lastToken: PersistentHistoryToken?
}

extension PostgreSQLStore {
    /// The history tables' sizes and the newest transaction; nil when the store keeps no history tables.
    ///
    /// - Throws: ``StoreError`` when the server refuses the query or the connection drops.
    package func historySummary() throws -> PostgreSQLHistorySummary? {
        let identifier = identifier
        return try pool.withSession { session in
            let present = try session.rows("""
                SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()
                AND upper(table_name) IN ('ATRANSACTION', 'ACHANGE', 'ATRANSACTIONSTRING')
                """).first.flatMap { Int.fromStoreValue($0[0]) }
            guard present == 3, let row = try session.rows("""
                SELECT (SELECT count(*) FROM ATRANSACTION), (SELECT count(*) FROM ACHANGE),
                       (SELECT count(*) FROM ATRANSACTIONSTRING), (SELECT max(Z_PK) FROM ATRANSACTION)
                """).first else { return nil }
            return PostgreSQLHistorySummary(
                transactions: Int.fromStoreValue(row[0]) ?? 0, changes: Int.fromStoreValue(row[1]) ?? 0,
                strings: Int.fromStoreValue(row[2]) ?? 0,
                lastToken: Int64.fromStoreValue(row[3]).map { PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: $0) })
        }
    }
}
