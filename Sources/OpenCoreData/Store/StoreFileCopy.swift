import Foundation
import GRDB

/// A whole store file copied over another with SQLite's backup API: the destination's connection writes every
/// page in one transaction, so it holds the old contents or the new, whatever happens.
enum StoreFileCopy {
    /// Writes the store at `sourcePath` (as one consistent state, its write-ahead log included) over the
    /// file at `destinationPath`, which is created when missing.
    ///
    /// - Throws: ``StoreError/busy(path:)`` when either file stays locked past `busyTimeout`;
    ///   ``MigrationError/stepFailed(path:step:reason:)`` for any other SQLite failure.
    static func replaceContents(of destinationPath: String, withStoreAt sourcePath: String, busyTimeout: TimeInterval) throws {
        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.busyMode = .timeout(busyTimeout)
        do {
            let source = try DatabaseQueue(path: sourcePath, configuration: readOnly)
            defer { try? source.close() }
            let destination = try MigrationRunner.openConnection(to: destinationPath, busyTimeout: busyTimeout,
                                                                 label: "OpenCoreData.replace")
            defer { try? destination.close() }
            try source.inDatabase { reading in try destination.inDatabase { writing in try reading.backup(to: writing) } }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw StoreError.busy(path: destinationPath)
        } catch let error as DatabaseError {
            throw MigrationError.stepFailed(path: destinationPath, step: "copy the store from \(sourcePath)",
                                            reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
    }
}
