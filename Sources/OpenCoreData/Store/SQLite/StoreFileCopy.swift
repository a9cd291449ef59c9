import Foundation
import GRDB

/// A whole store file copied over another with SQLite's backup API: the destination's connection writes every
/// page in one transaction, so it holds the old contents or the new, whatever happens.
package enum StoreFileCopy {
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

extension StoreFileCopy {
    /// ``replaceContents(of:withStoreAt:busyTimeout:)`` for whole stores (Core Data's
    /// `replacePersistentStore`): the source's `_EXTERNAL_DATA` files go with its rows. They are put into the
    /// destination's folder before its rows are replaced (their names are new there), and the destination's
    /// old files are removed only after; a failure removes the files it put there, so the destination is
    /// left as it was.
    ///
    /// - Throws: what ``replaceContents(of:withStoreAt:busyTimeout:)`` throws;
    ///   ``MigrationError/stepFailed(path:step:reason:)`` when a folder of values kept outside rows is a link
    ///   or a file in it cannot be copied.
    static func replaceStore(at destination: URL, withStoreAt source: URL, busyTimeout: TimeInterval) throws {
        func refusal(_ reason: String) -> Error {
            MigrationError.stepFailed(path: destination.path, step: "copy the values kept outside rows from \(source.path)", reason: reason)
        }
        let sourceFolder = ExternalBinaryStorage.directory(forStoreAt: source)
        let destinationFolder = ExternalBinaryStorage.directory(forStoreAt: destination)
        let carried = try ExternalBinaryStorage.valueFiles(in: sourceFolder, refusal: refusal)
        let old = try ExternalBinaryStorage.valueFiles(in: destinationFolder, refusal: refusal)
        var added: [String] = []
        do {
            for name in carried.subtracting(old).sorted() {
                try ExternalBinaryStorage.copyValueFile(name, from: sourceFolder, to: destinationFolder, refusal: refusal)
                added.append(name)
            }
            try replaceContents(of: destination.path, withStoreAt: source.path, busyTimeout: busyTimeout)
        } catch {
            for name in added { ExternalBinaryStorage.remove(name, from: destinationFolder) }
            if old.isEmpty { ExternalBinaryStorage.removeEmptyFolders(destinationFolder) }
            throw error
        }
        for name in old.subtracting(carried) { ExternalBinaryStorage.remove(name, from: destinationFolder) }
    }

    /// Renames a complete store written under a temporary name to `url` (where nothing is), its
    /// `_EXTERNAL_DATA` files moved into `url`'s folder first. The store file is renamed last: until then
    /// nothing is at `url`, and a failure moves the files back out.
    ///
    /// - Throws: ``ObjectGraphError/storeCopyRefused(source:destination:reason:)`` when a folder is a link or
    ///   a file cannot be moved; `CocoaError` when the store file cannot be renamed.
    package static func moveStore(at temporary: URL, to url: URL) throws {
        func refusal(_ reason: String) -> Error {
            ObjectGraphError.storeCopyRefused(source: temporary.path, destination: url.path, reason: reason)
        }
        let from = ExternalBinaryStorage.directory(forStoreAt: temporary)
        let to = ExternalBinaryStorage.directory(forStoreAt: url)
        let names = try ExternalBinaryStorage.valueFiles(in: from, refusal: refusal)
        let existing = try ExternalBinaryStorage.valueFiles(in: to, refusal: refusal)
        var moved: [String] = []
        do {
            for name in names.sorted() {
                try ExternalBinaryStorage.copyValueFile(name, from: from, to: to, refusal: refusal)
                moved.append(name)
            }
            try FileManager.default.moveItem(at: temporary, to: url)
        } catch {
            for name in moved { ExternalBinaryStorage.remove(name, from: to) }
            if existing.isEmpty { ExternalBinaryStorage.removeEmptyFolders(to) }
            throw error
        }
        // The temporary store's log and shared memory (its log checkpointed into the file) are no one's now.
        for suffix in ["-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
        for name in names { ExternalBinaryStorage.remove(name, from: from) }
        ExternalBinaryStorage.removeEmptyFolders(from)
    }

    /// Removes a store file with its `-wal`, `-shm` and `-journal` files and the files of its
    /// `_EXTERNAL_DATA` folder (a temporary store that did not become one): whatever is missing is fine.
    package static func removeStore(at url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let folder = ExternalBinaryStorage.directory(forStoreAt: url)
        for name in (try? ExternalBinaryStorage.valueFiles(in: folder, refusal: { _ in CancellationError() })) ?? [] {
            ExternalBinaryStorage.remove(name, from: folder)
        }
        ExternalBinaryStorage.removeEmptyFolders(folder)
    }
}
