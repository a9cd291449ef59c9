import Foundation
import GRDB

/// Writing a migrated copy of a store back into the original file, so the store keeps its path and the
/// change is one SQLite write transaction: a reader or a crash sees the old store or the new one, never
/// a mix (docs/MIGRATION.md).
enum StoreFileReplacement {
    /// Replaces every page of the store at `original` with those of the database at `replacement`, through
    /// SQLite's backup API in one step (one write transaction on `original`). `replacement` is not changed.
    ///
    /// - Throws: ``StoreError/busy(path:)`` when another connection holds `original`'s write lock past
    ///   `busyTimeout`, ``MigrationError/stepFailed(path:step:reason:)`` when SQLite refuses the copy (the
    ///   original is then as it was).
    static func replaceContents(of original: URL, with replacement: URL, busyTimeout: TimeInterval = 5) throws {
        var writing = Configuration()
        writing.busyMode = .timeout(busyTimeout)
        writing.label = "OpenCoreData.replacement"
        var reading = Configuration()
        reading.readonly = true
        do {
            let destination = try DatabaseQueue(path: original.path, configuration: writing)
            defer { try? destination.close() }
            let source = try DatabaseQueue(path: replacement.path, configuration: reading)
            defer { try? source.close() }
            try source.backup(to: destination)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw StoreError.busy(path: original.path)
        } catch let error as DatabaseError {
            throw MigrationError.stepFailed(path: original.path, step: "write the migrated store into the original file",
                                            reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
    }
}
