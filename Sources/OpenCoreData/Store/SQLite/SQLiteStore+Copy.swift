import Foundation
import GRDB

/// Copies of a whole store into a new store of another type, for
/// ``PersistentStoreCoordinator/migratePersistentStore(_:to:options:type:)`` and `ocd copy`.
///
/// Every SQLite-kept type has one layout for one model, so between them the copy is SQLite's backup of
/// every page. Where values change form on the way (a model keeping values in `_EXTERNAL_DATA`, whose
/// files the destination must hold, or a source on another backend) the rows are copied one by one
/// instead (``StoreRowCopy``).
extension SQLiteStore {
    /// Writes every row of `source` (any store of `model`) into a new store file of `type` at `url`, with
    /// the values it keeps in `_EXTERNAL_DATA` written into the new store's own folder. The file appears
    /// only once complete (written beside it under a temporary name, then renamed); a failure leaves nothing
    /// at `url` and no new file in its folder.
    ///
    /// - Throws: ``ObjectGraphError/storeCopyRefused(source:destination:reason:)`` when something is at `url`
    ///   already; ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for an in-memory `type` (it has
    ///   no file); ``XMLStoreError/unwritableValue(path:entity:key:reason:)`` for a value an XML store cannot
    ///   hold; ``StoreError`` when either store refuses (``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)``
    ///   for a source value whose file cannot be read); `CocoaError` when the file cannot be written.
    package static func copyContents(of source: any StoreBackend, model: ManagedObjectModel,
                                     toNewStoreAt url: URL, type: StoreType) throws {
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw ObjectGraphError.storeCopyRefused(source: source.displayPath, destination: url.path,
                                                    reason: "a file exists there already, and a store is not copied over another file")
        }
        let pageCopySource = (source as? SQLiteStore).flatMap { $0.externalStorage == nil ? $0 : nil }
        switch type {
        case .inMemory:
            throw ObjectGraphError.unsupportedStoreType(name: type.rawValue, operation: "Copying a store into a file")
        case .xml:
            // An XML store keeps every value in its objects: written from a copy of the rows in memory.
            let rows: any DatabaseWriter
            if let pageCopySource {
                rows = try DatabaseQueue()
                try pageCopySource.backupPages(to: rows)
            } else {
                let memory = try SQLiteStore(type: .inMemory, url: nil, model: model, options: StoreOptions())
                try StoreRowCopy.copy(from: source, into: memory, model: model)
                rows = memory.writer
            }
            let file = try XMLStoreFile(url: url, model: model, readOnly: false)
            file.skipLoading()
            try rows.read { db in try file.write(from: SQLiteSession(db: db), model: model) }
        case .sqlite:
            let temporary = url.deletingLastPathComponent()
                .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).copying")
            do {
                if let pageCopySource, ExternalBinaryStorage(storeURL: url, model: model) == nil {
                    let copy = try DatabaseQueue(path: temporary.path)
                    try pageCopySource.backupPages(to: copy)
                    // The store's own journal mode, so that the copy opens as one of this library's stores.
                    try copy.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
                    try copy.close()
                } else {
                    let copy = try SQLiteStore(type: .sqlite, url: temporary, model: model, options: StoreOptions())
                    try StoreRowCopy.copy(from: source, into: copy, model: model)
                    try copy.closeForMove()
                }
                try StoreFileCopy.moveStore(at: temporary, to: url)
            } catch {
                StoreFileCopy.removeStore(at: temporary)
                throw StoreError.from(error, path: url.path)
            }
        }
    }

    /// Replaces every row of `destination` (a new in-memory store of the same model) with `source`'s.
    ///
    /// - Throws: ``StoreError`` when either store refuses (``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)``
    ///   for a source value whose file cannot be read).
    package static func copyContents(of source: any StoreBackend, model: ManagedObjectModel, into destination: SQLiteStore) throws {
        if let sqlite = source as? SQLiteStore, sqlite.externalStorage == nil {
            try sqlite.backupPages(to: destination.writer, reportingAt: destination.displayPath)
        } else {
            try StoreRowCopy.copy(from: source, into: destination, model: model)
        }
    }

    /// SQLite's backup of every page of this store into `copy`: the fast path of a copy that changes no
    /// value, which saves decoding and encoding every row.
    ///
    /// - Throws: ``StoreError`` when SQLite refuses (naming `path`, this store's by default).
    private func backupPages(to copy: any DatabaseWriter, reportingAt path: String? = nil) throws {
        do {
            try writer.backup(to: copy)
        } catch {
            throw StoreError.from(error, path: path ?? displayPath)
        }
    }

    /// Checkpoints the write-ahead log into the file and closes the connections, so that the file alone
    /// holds the store and can be renamed. The store is not used afterwards.
    ///
    /// - Throws: ``StoreError`` when SQLite refuses.
    func closeForMove() throws {
        do {
            try writer.writeWithoutTransaction { db in
                if try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal" { try db.checkpoint(.truncate) }
            }
            try writer.close()
        } catch {
            throw StoreError.from(error, path: displayPath)
        }
    }
}
