import Foundation
import GRDB

/// Copies of a whole store into a store of another type, for
/// ``PersistentStoreCoordinator/migratePersistentStore(_:to:options:type:)``. Every type is SQLite
/// underneath with one layout for one model, so the copy is SQLite's backup of every page.
extension SQLiteStore {
    /// Why a store keeping values in `_EXTERNAL_DATA` is not copied.
    static let externalDataNotCopied = "the store keeps values outside its rows (_EXTERNAL_DATA), which a copy does not carry yet"

    /// Writes every row of this store into a new store file of `type` at `url`. The file appears only
    /// once complete (written beside it under a temporary name, then renamed); a failure leaves nothing at
    /// `url`.
    ///
    /// - Throws: ``ObjectGraphError/storeCopyRefused(source:destination:reason:)`` when something is at `url`
    ///   already or the model keeps values outside rows (not copied);
    ///   ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for an in-memory `type` (it has no file);
    ///   ``XMLStoreError/unwritableValue(path:entity:key:reason:)`` for a value an XML store cannot hold;
    ///   ``StoreError`` when SQLite refuses; `CocoaError` when the file cannot be written.
    package func copyContents(toNewStoreAt url: URL, type: StoreType) throws {
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw ObjectGraphError.storeCopyRefused(source: displayPath, destination: url.path,
                                                    reason: "a file exists there already, and a store is not copied over another file")
        }
        guard externalStorage == nil else {
            throw ObjectGraphError.storeCopyRefused(source: displayPath, destination: url.path, reason: Self.externalDataNotCopied)
        }
        switch type {
        case .inMemory:
            throw ObjectGraphError.unsupportedStoreType(name: type.rawValue, operation: "Copying a store into a file")
        case .xml:
            let copy = try DatabaseQueue()
            do {
                try writer.backup(to: copy)
            } catch {
                throw StoreError.from(error, path: displayPath)
            }
            let file = try XMLStoreFile(url: url, model: model, readOnly: false)
            file.skipLoading()
            try copy.read { db in try file.write(from: db, model: model) }
        case .sqlite:
            let temporary = url.deletingLastPathComponent()
                .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).copying")
            do {
                let copy = try DatabaseQueue(path: temporary.path)
                try writer.backup(to: copy)
                // The store's own journal mode, so that the copy opens as one of this library's stores.
                try copy.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
                try copy.close()
                try FileManager.default.moveItem(at: temporary, to: url)
            } catch {
                for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
                throw StoreError.from(error, path: url.path)
            }
        }
    }

    /// Replaces every row of `other` (a new in-memory store of the same model) with this store's.
    ///
    /// - Throws: ``StoreError`` when SQLite refuses.
    package func copyContents(into other: SQLiteStore) throws {
        do {
            try writer.backup(to: other.writer)
        } catch {
            throw StoreError.from(error, path: other.displayPath)
        }
    }

    /// Writes every row of this store into `destination`, a new store of the same model of another kind (a
    /// PostgreSQL store): its key counters are moved past this store's keys and every row and join row is
    /// inserted with its key, in one transaction of the destination, so a failure leaves it as it was.
    ///
    /// - Throws: ``ObjectGraphError/storeCopyRefused(source:destination:reason:)`` when the destination has
    ///   given out keys already (it is not new) or the model keeps values outside rows; ``StoreError`` when either store refuses; the
    ///   destination's own errors (nothing is written then).
    package func copyRows(into destination: any StoreBackend) throws {
        guard externalStorage == nil else {
            throw ObjectGraphError.storeCopyRefused(source: displayPath, destination: destination.displayPath,
                                                    reason: Self.externalDataNotCopied)
        }
        let schema = model.schema
        var changes = StoreChangeSet()
        var maximumKeys: [(root: EntityDescription, count: Int)] = []
        do {
            try writer.read { db in
                let roots = model.entitiesByNumber.filter { $0.superentity == nil }
                for root in roots {
                    let table = schema.mapping(for: root).tableName
                    let entities = Dictionary(uniqueKeysWithValues: root.entityNumbersIncludingSubentities.compactMap { number in
                        model.entitiesByNumber.first { $0.entityNumber == number }.map { (number, $0) }
                    })
                    var maximum: Int64 = 0
                    let rows = try Row.fetchCursor(db, sql: "SELECT * FROM \(SQLIdentifier.quoted(table)) ORDER BY Z_PK")
                    while let row = try rows.next() {
                        let key: Int64 = row[0]
                        let number: Int = row[1]
                        guard let entity = entities[number] else {
                            throw StoreError.corrupt(path: displayPath, reason: "\(table) row \(key) has the entity number \(number), which is not \(root.name)'s or its sub-entities'")
                        }
                        maximum = max(maximum, key)
                        let values = (0..<row.count).map { row[$0] as StoreValue }
                        changes.inserts.append(.init(id: ManagedObjectID(entity: entity, primaryKey: key, store: destination.identity),
                                                     table: table, row: RowValues(values: values)))
                    }
                    if maximum > 0 { maximumKeys.append((root, Int(maximum))) }
                }
                for join in schema.joinTables {
                    let columns = join.columns.map(SQLIdentifier.quoted).joined(separator: ", ")
                    for row in try Row.fetchAll(db, sql: "SELECT \(columns) FROM \(SQLIdentifier.quoted(join.name))") {
                        let source: Int64 = row[0], target: Int64 = row[1]
                        changes.joinInserts.insert(.init(table: join.name, sourceColumn: join.sourceColumn,
                                                         destinationColumn: join.destinationColumn, source: source, destination: target))
                        for (index, orderColumn) in [join.orderColumn, join.inverseOrderColumn].compactMap({ $0 }).enumerated() {
                            guard let position = row[2 + index] as Int64? else { continue }
                            changes.joinOrderUpdates.append(.init(table: join.name, orderColumn: orderColumn, sourceColumn: join.sourceColumn,
                                                                  destinationColumn: join.destinationColumn, source: source,
                                                                  destination: target, position: position))
                        }
                    }
                }
            }
        } catch let error as DatabaseError {
            throw StoreError.from(error, path: displayPath)
        }
        try destination.inOneSnapshot(writing: true, request: "a copy of \(displayPath)") {
            if !maximumKeys.isEmpty {
                let firstKeys = try destination.reservePrimaryKeys(maximumKeys)
                guard firstKeys.allSatisfy({ $0 == 1 }) else {
                    throw ObjectGraphError.storeCopyRefused(source: self.displayPath, destination: destination.displayPath,
                                                            reason: "it is not a new store (it has given out keys already): a copy goes into an empty one")
                }
            }
            _ = try destination.apply(changes, history: [], resolvingConflicts: nil)
        }
    }
}
