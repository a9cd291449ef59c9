import Foundation
import OpenCoreData

extension PostgreSQLStore {
    /// The rows of `table` with the given primary keys, in the table's column order (Z_PK, Z_ENT, Z_OPT
    /// first), as the SQLite store gives them to faults; keys without a row are left out. Asked in chunks
    /// of at most `chunk` keys, so a long list never meets the protocol's 65,535-parameter limit.
    ///
    /// - Throws: ``StoreError`` when the server refuses the query or the connection drops;
    ///   ``StoreError/unexpectedValue(column:type:)`` for a value the layout never writes.
    func rows(ofTable name: String, primaryKeys: [Int64], chunk: Int = 1_000) throws -> [RowValues] {
        guard let table = model.schema.table(named: name) else { return [] }
        let columns = table.columns.map(\.name).joined(separator: ", ")
        return try pool.withSession { session in
            var rows: [RowValues] = []
            rows.reserveCapacity(primaryKeys.count)
            var start = 0
            while start < primaryKeys.count {
                let keys = primaryKeys[start..<min(start + chunk, primaryKeys.count)]
                let placeholders = Array(repeating: "?", count: keys.count).joined(separator: ", ")
                rows += try session.rows("SELECT \(columns) FROM \(table.name) WHERE Z_PK IN (\(placeholders)) ORDER BY Z_PK",
                                         keys.map(\.storeValue)).map(RowValues.init(values:))
                start += chunk
            }
            return rows
        }
    }

    /// Every row of a table (an entity table or a join table) in key order, each in the table's column order:
    /// for checks that compare a store with a reference.
    ///
    /// - Throws: as ``rows(ofTable:primaryKeys:chunk:)``.
    func allRows(ofTable name: String) throws -> [[StoreValue]] {
        let schema = model.schema
        let columns: [String]
        if let table = schema.table(named: name) {
            columns = table.columns.map(\.name)
        } else if let join = schema.joinTables.first(where: { $0.name == name }) {
            columns = join.columns
        } else {
            return []
        }
        let list = columns.joined(separator: ", ")
        return try pool.withSession { session in
            try session.rows("SELECT \(list) FROM \(name) ORDER BY \(columns.prefix(2).joined(separator: ", "))")
        }
    }

    /// The store's metadata as `Z_METADATA` holds it now.
    ///
    /// - Throws: ``StoreError/corrupt(path:reason:)`` when the row or its property list is missing or
    ///   unreadable; the connection's errors.
    package func metadata() throws -> StoreMetadata {
        let server = configuration.redactedURL
        let row = try pool.withSession { session in
            try session.rows("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1").first
        }
        guard let row, let plist = Data.fromStoreValue(row[1]) else {
            throw StoreError.corrupt(path: server, reason: "Z_METADATA has no property list")
        }
        return try StoreMetadata(plistData: plist, rowUUID: String.fromStoreValue(row[0]), storePath: server)
    }
}
