import Foundation
import GRDB

/// Copies of a whole store into a store of another type, for
/// ``PersistentStoreCoordinator/migratePersistentStore(_:to:options:type:)``. Every type is SQLite
/// underneath with one layout for one model, so the copy is SQLite's backup of every page.
extension PersistentStore {
    /// Writes every row of this store into a new store file of `type` at `url`. The file appears only
    /// once complete (written beside it under a temporary name, then renamed); a failure leaves nothing at
    /// `url`.
    ///
    /// - Throws: ``ObjectGraphError/invalidRequest(_:)`` when something is at `url` already, for an
    ///   in-memory `type` (it has no file), or when the model keeps values outside rows (not copied);
    ///   ``XMLStoreError/unwritableValue(path:entity:key:reason:)`` for a value an XML store cannot hold;
    ///   ``StoreError`` when SQLite refuses; `CocoaError` when the file cannot be written.
    package func copyContents(toNewStoreAt url: URL, type: StoreType) throws {
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw ObjectGraphError.invalidRequest("\(url.path) exists already: a store is not copied over another file")
        }
        guard externalStorage == nil else {
            throw ObjectGraphError.invalidRequest("\(displayPath) keeps values outside its rows (_EXTERNAL_DATA), which a copy does not carry yet")
        }
        switch type {
        case .inMemory:
            throw ObjectGraphError.invalidRequest("an in-memory store has no file to copy into")
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
    package func copyContents(into other: PersistentStore) throws {
        do {
            try writer.backup(to: other.writer)
        } catch {
            throw StoreError.from(error, path: other.displayPath)
        }
    }
}
