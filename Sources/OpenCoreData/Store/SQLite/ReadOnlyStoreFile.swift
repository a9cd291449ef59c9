import Foundation
import GRDB

/// A look into a store file through a read-only connection that changes nothing in it (no journal-mode
/// switch, no write), closed when the look ends: how metadata is read and migrations are planned.
enum ReadOnlyStoreFile {
    /// Runs `body` on a read-only connection to the file at `path`.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file is missing or not an SQLite
    ///   database, the other ``StoreError``s opening maps SQLite's errors to, and what `body` throws.
    static func read<T>(_ path: String, _ body: (Database) throws -> T) throws -> T {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError.notAStore(path: path, reason: "no such file")
        }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let reader = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? reader.close() }
            return try reader.inDatabase(body)
        } catch let error as DatabaseError
                    where error.resultCode == .SQLITE_READONLY && FileManager.default.fileExists(atPath: path + "-journal") {
            // A hot journal only a writable connection can roll back: the read goes to a rolled-back private
            // copy, as a read-only open of the store does, and the file stays as it is.
            let folder = try SQLiteStore.rolledBackCopy(of: path)
            defer { try? FileManager.default.removeItem(at: folder) }
            return try read(folder.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path, body)
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
    }
}
