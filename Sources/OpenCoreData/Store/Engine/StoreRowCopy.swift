import Foundation

/// Every row of one store written into a new store of the same model, whatever the backend of either:
/// what ``PersistentStoreCoordinator/migratePersistentStore(_:to:options:type:)`` does when it cannot copy
/// SQLite's pages (out of or into PostgreSQL, or a model keeping values in `_EXTERNAL_DATA`).
///
/// Rows are read in one snapshot of the source with each key kept; values kept in the source's
/// `_EXTERNAL_DATA` are read as their bytes, and the destination's save writes them in its own form
/// (its own files, or the value in the row). The destination's key counters are moved past the source's
/// keys and every row goes in within one transaction of the destination, so a failure leaves it as it was.
package enum StoreRowCopy {
    /// Copies every object row and join row of `source` into `destination`, a new store of `model`, the
    /// source's model.
    ///
    /// - Throws: ``ObjectGraphError/storeCopyRefused(source:destination:reason:)`` when the destination has
    ///   given out keys already (it is not new); ``StoreError/corrupt(path:reason:)`` for a source row whose
    ///   entity number is not its table's; ``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)``
    ///   for a value of the source's `_EXTERNAL_DATA` that cannot be read; either store's own errors (nothing
    ///   is written then).
    package static func copy(from source: any StoreBackend, into destination: any StoreBackend,
                             model: ManagedObjectModel) throws {
        let schema = source.schema
        let quoted = source.dialect.quotedName
        var changes = StoreChangeSet()
        var maximumKeys: [(root: EntityDescription, count: Int)] = []
        try source.readInOneTransaction { transaction in
            for root in model.entitiesByNumber where root.superentity == nil {
                let tableName = schema.mapping(for: root).tableName
                guard let table = schema.table(named: tableName) else { continue }
                let entities = Dictionary(uniqueKeysWithValues: root.entityNumbersIncludingSubentities.compactMap { number in
                    model.entitiesByNumber.first { $0.entityNumber == number }.map { (number, $0) }
                })
                let external = source.externalStorage?.columns(forTable: tableName)
                let columns = table.columns.map { quoted($0.name) }.joined(separator: ", ")
                let width = table.columns.count
                var maximum: Int64 = 0
                let query = SortKeyQuery(sql: "SELECT \(columns) FROM \(quoted(tableName)) ORDER BY 1", arguments: [])
                try transaction.stepRows(of: query, cancellation: nil) { stepped in
                    var row = RowValues(values: (0..<width).map { stepped.value(at: Int32($0)) })
                    let key = row.primaryKey, number = row.entityNumber
                    guard let entity = entities[number] else {
                        throw StoreError.corrupt(path: source.displayPath, reason: "\(tableName) row \(key) has the entity number \(number), which is not \(root.name)'s or its sub-entities'")
                    }
                    try external?.decode(&row)
                    maximum = max(maximum, key)
                    changes.inserts.append(.init(id: ManagedObjectID(entity: entity, primaryKey: key, store: destination.identity),
                                                 table: tableName, row: row))
                }
                if maximum > 0 { maximumKeys.append((root, Int(maximum))) }
            }
            for join in schema.joinTables {
                let columns = join.columns.map(quoted).joined(separator: ", ")
                let orderColumns = [join.orderColumn, join.inverseOrderColumn].compactMap { $0 }
                let query = SortKeyQuery(sql: "SELECT \(columns) FROM \(quoted(join.name))", arguments: [])
                try transaction.stepRows(of: query, cancellation: nil) { row in
                    guard case .int64(let from) = row.value(at: 0).storage, case .int64(let to) = row.value(at: 1).storage else {
                        throw StoreError.corrupt(path: source.displayPath, reason: "\(join.name) has a row whose keys are not integers")
                    }
                    changes.joinInserts.insert(.init(table: join.name, sourceColumn: join.sourceColumn,
                                                     destinationColumn: join.destinationColumn, source: from, destination: to))
                    for (index, orderColumn) in orderColumns.enumerated() {
                        guard case .int64(let position) = row.value(at: Int32(2 + index)).storage else { continue }
                        changes.joinOrderUpdates.append(.init(table: join.name, orderColumn: orderColumn, sourceColumn: join.sourceColumn,
                                                              destinationColumn: join.destinationColumn, source: from,
                                                              destination: to, position: position))
                    }
                }
            }
        }
        try destination.inOneSnapshot(writing: true, request: "a copy of \(source.displayPath)") {
            if !maximumKeys.isEmpty {
                let firstKeys = try destination.reservePrimaryKeys(maximumKeys)
                guard firstKeys.allSatisfy({ $0 == 1 }) else {
                    throw ObjectGraphError.storeCopyRefused(source: source.displayPath, destination: destination.displayPath,
                                                            reason: "it is not a new store (it has given out keys already): a copy goes into an empty one")
                }
            }
            _ = try destination.apply(changes, history: [], resolvingConflicts: nil)
        }
    }
}
