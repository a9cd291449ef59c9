import Foundation
import Testing

/// Files that Xcode and Core Data on Apple's systems wrote, read in place from `../shared/fixtures/apple-made`
/// beside the project's folder (their sources, licenses and checksums are in that folder's `SOURCES.md`).
/// They are never copied into the project; where the folder is absent the suites that need it are skipped.
enum AppleMadeFixtures {
    /// The corpus folder, or nil where this checkout has none beside it.
    static let root: URL? = {
        if let override = ProcessInfo.processInfo.environment["OCD_APPLE_MADE_FIXTURES"] {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        // Tests/OpenCoreDataTests/AppleMade/this file → the package folder → its parent.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let folder = package.deletingLastPathComponent().appendingPathComponent("shared/fixtures/apple-made", isDirectory: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return nil
        }
        return folder
    }()

    /// True where the corpus is here; suites use it as `.enabled(if: AppleMadeFixtures.available, …)`.
    static var available: Bool { root != nil }

    /// The reason a suite gives when it is skipped.
    static let absentMessage: Comment =
        "../shared/fixtures/apple-made is not beside this checkout (set OCD_APPLE_MADE_FIXTURES to its folder)"

    /// A file or folder of the corpus by its path inside it, e.g. `"wibosco-CoreDataMigration-Example/SQLite/CoreDataMigration_Example_1.sqlite"`.
    static func url(_ relativePath: String) throws -> URL {
        guard let root else { throw MissingCorpus() }
        let url = root.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else { throw MissingFile(path: relativePath) }
        return url
    }

    /// Every file below the corpus whose name ends with `suffix`, sorted by path (for census-style suites).
    static func files(endingWith suffix: String) -> [URL] {
        guard let root, let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var found: [URL] = []
        for case let url as URL in walker where url.lastPathComponent.hasSuffix(suffix) { found.append(url) }
        return found.sorted { $0.path < $1.path }
    }

    /// A copy of a store and its `-wal`/`-shm` sidecars in a fresh temporary folder, so that a test that opens
    /// it for writing never touches the corpus (which is read-only in CI).
    static func copyOfStore(_ relativePath: String, into folder: URL) throws -> URL {
        let source = try url(relativePath)
        let destination = folder.appendingPathComponent(source.lastPathComponent)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] {
            let from = URL(fileURLWithPath: source.path + suffix)
            guard FileManager.default.fileExists(atPath: from.path) else { continue }
            let to = URL(fileURLWithPath: destination.path + suffix)
            try? FileManager.default.removeItem(at: to)
            try FileManager.default.copyItem(at: from, to: to)
            // Copies of read-only files are read-only too; a store opened for writing needs them writable.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: to.path)
        }
        return destination
    }

    struct MissingCorpus: Error, CustomStringConvertible {
        var description: String { "the apple-made fixture corpus is absent" }
    }

    struct MissingFile: Error, CustomStringConvertible {
        let path: String
        var description: String { "no file \(path) in the apple-made fixture corpus" }
    }
}
