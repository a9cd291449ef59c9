import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The values a staged migration's store keeps outside its rows (`_EXTERNAL_DATA` files). The stages work
/// on a copy of the store (``StoreFileReplacement``), so the copy gets a folder of its own: the original
/// folder's files hard-linked into it (copied where links are refused). Handlers read and write there,
/// and a handler's save that replaces or deletes a value removes only the copy's link, so until the
/// write-back the original folder is untouched. Before the write-back the files the migrated rows name
/// are linked into the original folder; after it, the files only the old rows named are removed. A failed
/// migration removes what it linked, and the copy's folder goes with the copy.
final class StagedMigrationExternalData {
    /// The original store's folder.
    let originalFolder: URL
    /// The copy's folder: what the handlers' stores read and write (`StoreOptions.externalDataDirectory`).
    let workingFolder: URL
    private let copy: URL
    /// The files the original's rows named when the copy was taken.
    private let namedBefore: Set<String>
    /// Files linked into the original folder before the write-back, and folders made for them: removed
    /// again when the write-back fails.
    private var published: [String] = []
    private var madeFolders: [URL] = []

    /// The folders for migrating the store at `path` through `models` (every version the stages pass,
    /// the store's own first) on its copy at `copyPath`; nil when no version keeps values outside rows.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` when the copy's folder cannot be made or
    ///   the original's is reached through a symbolic link, and the ``StoreError`` of reading the copy.
    init?(storeAt path: String, copyPath: String, models: [ManagedObjectModel]) throws {
        let url = URL(fileURLWithPath: path)
        copy = URL(fileURLWithPath: copyPath)
        guard let storedModel = models.first,
              models.contains(where: { ExternalBinaryStorage(storeURL: url, model: $0) != nil }) else { return nil }
        originalFolder = ExternalBinaryStorage.directory(forStoreAt: url)
        workingFolder = URL(fileURLWithPath: StoreFileReplacement.externalDataFolder(of: copyPath), isDirectory: true)
        namedBefore = try ExternalBinaryStorage.referencedFiles(ofStoreAt: copy, model: storedModel)
        func failure(_ reason: String) -> MigrationError {
            .stepFailed(path: path, step: "share the store's _EXTERNAL_DATA files with its copy", reason: reason)
        }
        if let problem = ExternalBinaryStorage.confinementProblem(of: originalFolder) { throw failure(problem) }
        do {
            try FileManager.default.createDirectory(at: workingFolder, withIntermediateDirectories: false)
        } catch {
            throw failure("cannot create \(workingFolder.path): \(error.localizedDescription)")
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: originalFolder.path)) ?? []
        for name in names where ExternalBinaryStorage.isFileName(name) {
            do {
                try Self.share(name, from: originalFolder, into: workingFolder)
            } catch {
                discard()
                throw failure("\(name): \(error)")
            }
        }
    }

    /// Links `name` from `source` into `destination` (the files are never changed in place, so a link
    /// shares nothing that changes), or copies it where the file system refuses links. A name already
    /// there is kept.
    private static func share(_ name: String, from source: URL, into destination: URL) throws {
        let from = source.appendingPathComponent(name).path, to = destination.appendingPathComponent(name).path
        if link(from, to) == 0 || errno == EEXIST { return }
        try FileManager.default.copyItem(atPath: from, toPath: to)
    }

    /// Before the write-back: every file the copy's rows name (read with `model`, the target version's)
    /// is in the original folder, synced.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` when a file cannot be placed (what was
    ///   placed is removed again) or the original folder is reached through a symbolic link, and the
    ///   ``StoreError`` of reading the copy.
    func publish(model: ManagedObjectModel, reportedPath: String) throws {
        let named = try ExternalBinaryStorage.referencedFiles(ofStoreAt: copy, model: model)
        if let problem = ExternalBinaryStorage.confinementProblem(of: originalFolder) {
            throw MigrationError.stepFailed(path: reportedPath, step: "place the migrated _EXTERNAL_DATA files", reason: problem)
        }
        do {
            var missingFolders: [URL] = []
            var folder = originalFolder
            while !FileManager.default.fileExists(atPath: folder.path) {
                missingFolders.insert(folder, at: 0)
                folder = folder.deletingLastPathComponent()
            }
            for missing in missingFolders {
                try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: false)
                madeFolders.append(missing)
            }
            for name in named.sorted() where !FileManager.default.fileExists(atPath: originalFolder.appendingPathComponent(name).path) {
                try Self.share(name, from: workingFolder, into: originalFolder)
                published.append(name)
            }
        } catch {
            withdraw()
            throw MigrationError.stepFailed(path: reportedPath, step: "place the migrated _EXTERNAL_DATA files",
                                            reason: "\(error)")
        }
        // The names live in the folder: synced, so a row written back never outlives its file.
        let descriptor = open(originalFolder.path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            close(descriptor)
        }
        namedAfter = named
    }

    private var namedAfter: Set<String> = []

    /// The write-back failed: the files and folders ``publish(model:reportedPath:)`` added go again.
    func withdraw() {
        for name in published { ExternalBinaryStorage.remove(name, from: originalFolder) }
        published = []
        for folder in madeFolders.reversed() { rmdir(folder.path) }
        madeFolders = []
    }

    /// After the write-back: the files only the rows before the migration named are removed.
    func removeReleasedFiles() {
        for name in namedBefore.subtracting(namedAfter) { ExternalBinaryStorage.remove(name, from: originalFolder) }
    }

    /// Removes the copy's folder (its links and the files handlers wrote there).
    func discard() {
        try? FileManager.default.removeItem(at: workingFolder)
    }
}
