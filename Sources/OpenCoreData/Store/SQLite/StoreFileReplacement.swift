import Foundation
import GRDB
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Migrating a store on a copy, for migrations that must run code (staged migrations' handlers, mapping
/// models) and so cannot be one SQL transaction on the original: the original is copied with SQLite's
/// backup API into a temporary file next to it, the work is done on the copy, and the copy is written back
/// with the backup API in one step. SQLite writes a completed one-step backup into its destination as one
/// transaction, so a failure or a crash at any point leaves the original exactly as it was, or holding the
/// whole result (docs/MIGRATION.md). A copy a crash left behind is removed by the next snapshot of the
/// same store: a copy in use is marked by an `flock` its snapshot holds, which the system drops when the
/// process dies.
///
/// ```swift
/// let snapshot = try StoreFileReplacement.snapshot(of: storePath)
/// defer { snapshot.discard() }
/// try work(on: snapshot.copyPath)
/// try StoreFileReplacement.replaceContents(of: storePath, with: snapshot)
/// ```
enum StoreFileReplacement {
    /// A copy of a store file and what is needed to write it back: the original's connection (kept open so
    /// that changes other connections commit meanwhile are seen: `PRAGMA data_version` moves) and the
    /// data version the copy was taken at.
    final class Snapshot {
        /// The original store file.
        let originalPath: String
        /// The copy, in the same folder as the original (same file system, same permissions).
        let copyPath: String
        fileprivate let original: DatabaseQueue
        /// The original's `PRAGMA data_version` read just before the copy was taken.
        fileprivate var dataVersion = 0
        /// The descriptor holding the copy's `flock` (-1 once released).
        private var lockDescriptor: Int32

        fileprivate init(originalPath: String, copyPath: String, original: DatabaseQueue, lockDescriptor: Int32) {
            self.originalPath = originalPath
            self.copyPath = copyPath
            self.original = original
            self.lockDescriptor = lockDescriptor
        }

        /// Closes the connection to the original and deletes the copy with its journal files. Safe to call
        /// more than once.
        func discard() {
            try? original.close()
            guard lockDescriptor >= 0 else { return }
            for suffix in ["-wal", "-shm", "-journal", ""] {
                try? FileManager.default.removeItem(atPath: copyPath + suffix)
            }
            close(lockDescriptor)
            lockDescriptor = -1
            StoreFileReplacement.copiesInUse.withLock { _ = $0.remove(copyPath) }
        }

        deinit { discard() }
    }

    /// Copies the store at `path` into a new temporary file next to it, reading one consistent state of the
    /// original (committed changes in its WAL included) and changing nothing in it.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` for a missing file, the ``StoreError``s opening maps
    ///   SQLite's errors to, ``StoreError/busy(path:)`` when the original stays locked, and
    ///   ``MigrationError/stepFailed(path:step:reason:)`` when the copy cannot be written (the copy is then
    ///   removed).
    static func snapshot(of path: String, busyTimeout: TimeInterval = 5) throws -> Snapshot {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError.notAStore(path: path, reason: "no such file")
        }
        let original = try MigrationRunner.openConnection(to: path, busyTimeout: busyTimeout,
                                                          label: "OpenCoreData.migration.original")
        let url = URL(fileURLWithPath: path)
        removeAbandonedCopies(of: url)
        let copyPath = url.deletingLastPathComponent()
            .appendingPathComponent(copyPrefix(of: url) + UUID().uuidString).path
        // Created and locked before SQLite opens it: the lock says "in use" to other processes' clean-up.
        copiesInUse.withLock { _ = $0.insert(copyPath) }
        let lockDescriptor = open(copyPath, O_RDWR | O_CREAT | O_EXCL, 0o644)
        guard lockDescriptor >= 0 else {
            copiesInUse.withLock { _ = $0.remove(copyPath) }
            try? original.close()
            throw MigrationError.stepFailed(path: path, step: "copy the store for migrating",
                                            reason: "cannot create \(copyPath): \(String(cString: strerror(errno)))")
        }
        _ = flock(lockDescriptor, LOCK_EX)
        let snapshot = Snapshot(originalPath: path, copyPath: copyPath, original: original, lockDescriptor: lockDescriptor)
        do {
            // Read before the copy: a commit by another connection between this read and the copy is in
            // the copy and moves the version, so the write-back refuses (never the other way round).
            snapshot.dataVersion = try original.inDatabase { try Int.fetchOne($0, sql: "PRAGMA data_version") ?? 0 }
        } catch let error as DatabaseError {
            snapshot.discard()
            throw StoreError.fromOpening(error, path: path)
        }
        do {
            let copy = try DatabaseQueue(path: copyPath)
            defer { try? copy.close() }
            try original.inDatabase { source in
                try copy.inDatabase { destination in try source.backup(to: destination) }
            }
        } catch let error as DatabaseError {
            snapshot.discard()
            if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED { throw StoreError.busy(path: path) }
            throw MigrationError.stepFailed(path: path, step: "copy the store for migrating",
                                            reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
        return snapshot
    }

    /// The copies this process is working on (their `flock` does not keep this process's own clean-up out,
    /// and opening and closing a file SQLite has open would drop SQLite's locks on it).
    fileprivate static let copiesInUse = Mutex<Set<String>>([])

    /// The name every copy of the store at `url` starts with: hidden, next to it.
    static func copyPrefix(of url: URL) -> String { ".\(url.lastPathComponent).migrating-" }

    /// The file a migration makes from the copy at `copyPath` (the store a mapping model fills): named after
    /// the copy, so it is in use exactly while the copy's lock is held and is removed with an abandoned copy.
    static func derivedPath(of copyPath: String) -> String { copyPath + derivedSuffix }

    private static let derivedSuffix = ".derived"

    /// The folder of values kept outside rows that a staged migration's copy at `copyPath` uses
    /// (``StagedMigrationExternalData``): named after the copy, removed with an abandoned copy.
    static func externalDataFolder(of copyPath: String) -> String { copyPath + externalDataSuffix }

    private static let externalDataSuffix = ".external"

    /// Deletes the copies of the store at `url` that no snapshot holds, and the files made from them: left
    /// by a process that died while migrating. A copy another process is working on is locked and stays.
    static func removeAbandonedCopies(of url: URL) {
        let folder = url.deletingLastPathComponent()
        let prefix = copyPrefix(of: url)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        let inUse = copiesInUse.withLock { $0 }
        func remove(_ path: String) {
            for suffix in ["-wal", "-shm", "-journal", ""] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let sidecars = ["-wal", "-shm", "-journal"]
        for name in names where name.hasPrefix(prefix) {
            let path = folder.appendingPathComponent(name).path
            if let sidecar = sidecars.first(where: name.hasSuffix) {
                // A log or journal whose file is gone (killed between removing the two) is no one's.
                if !names.contains(String(name.dropLast(sidecar.count))) { try? FileManager.default.removeItem(atPath: path) }
                continue
            }
            if let suffix = [derivedSuffix, externalDataSuffix].first(where: { path.hasSuffix($0) }) {
                // A derived file or folder goes with its copy; alone, its copy was already removed (the
                // process died in between), so no one uses it.
                if !names.contains(String(name.dropLast(suffix.count))) { remove(path) }
                continue
            }
            guard !inUse.contains(path) else { continue }
            let descriptor = open(path, O_RDWR)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            remove(derivedPath(of: path))
            remove(externalDataFolder(of: path))
            remove(path)
        }
    }

    /// Writes the copy back over the original in one SQLite transaction (a backup of every page in one
    /// step), after checking that no other connection committed to the original since the snapshot. The
    /// snapshot's connection to the original is closed afterwards; the copy stays until `discard()`.
    /// `replacementPath`, when given, is written instead of the copy: a store a mapping model made from the
    /// copy (the check against other connections' commits is the same).
    ///
    /// - Throws: ``MigrationError/storeChangedDuringMigration(path:)`` when another connection committed
    ///   to the original meanwhile, ``StoreError/busy(path:)`` when another connection holds its write lock
    ///   past the timeout, ``MigrationError/stepFailed(path:step:reason:)`` for any other SQLite failure.
    ///   In every case the original is left as it was.
    static func replaceContents(of path: String, with snapshot: Snapshot, from replacementPath: String? = nil) throws {
        precondition(snapshot.originalPath == path, "a snapshot is written back over the file it was taken of")
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "OpenCoreData.migration.copy"
        do {
            let copy = try DatabaseQueue(path: replacementPath ?? snapshot.copyPath, configuration: configuration)
            defer { try? copy.close() }
            try copy.inDatabase { source in
                try snapshot.original.inDatabase { destination in
                    let now = try Int.fetchOne(destination, sql: "PRAGMA data_version") ?? 0
                    guard now == snapshot.dataVersion else { throw MigrationError.storeChangedDuringMigration(path: path) }
                    MigrationWriteBackObserver.report(.willWriteBack)
                    try source.backup(to: destination)
                    MigrationWriteBackObserver.report(.didWriteBack)
                }
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw StoreError.busy(path: path)
        } catch let error as DatabaseError {
            throw MigrationError.stepFailed(path: path, step: "write the migrated copy back",
                                            reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
        try? snapshot.original.close()
    }
}
