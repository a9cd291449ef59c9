import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store's `_EXTERNAL_DATA` folder handled as a whole, for copies of whole stores: its files go where the
/// copy's rows go. Only files named as Core Data names them, that are regular files (never a link), are
/// listed, moved or copied; the folders are used only where they are confined (``confinementProblem(of:)``).
extension ExternalBinaryStorage {
    /// The value files in `directory`: regular files named as Core Data names them. Empty when the folder
    /// is missing.
    ///
    /// - Throws: what `refusal` makes of the reason when the folder is a link or cannot be listed.
    static func valueFiles(in directory: URL, refusal: (String) -> Error) throws -> Set<String> {
        if let problem = confinementProblem(of: directory) { throw refusal(problem) }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            var status = stat()
            if lstat(directory.path, &status) != 0, errno == ENOENT { return [] }
            throw refusal("the folder \(directory.path) cannot be listed")
        }
        return Set(names.filter { name in
            var status = stat()
            return isFileName(name) && lstat(directory.appendingPathComponent(name).path, &status) == 0
                && (status.st_mode & S_IFMT) == S_IFREG
        })
    }

    /// Puts the file `name` of `source` into `destination` (made where missing) under the same name: a hard
    /// link where both are on one file system (the files are never changed in place), else a synced copy.
    /// A file of that name already in `destination` is refused, never replaced.
    ///
    /// - Throws: what `refusal` makes of the reason when the folder cannot be made or the file cannot be
    ///   linked or copied.
    static func copyValueFile(_ name: String, from source: URL, to destination: URL, refusal: (String) -> Error) throws {
        func failure(_ reason: String) -> Error { refusal(reason) }
        guard isFileName(name) else { throw failure("'\(name)' is not a file name Core Data makes") }
        if let problem = makeConfinedFolder(destination) { throw failure(problem) }
        let from = source.appendingPathComponent(name).path, to = destination.appendingPathComponent(name).path
        // link(2) does not follow a link at `from`; valueFiles listed only regular files.
        if link(from, to) == 0 { return }
        guard errno == EXDEV || errno == EPERM else {
            throw failure("_EXTERNAL_DATA/\(name) cannot be linked into \(destination.path): \(String(cString: strerror(errno)))")
        }
        let input = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard input >= 0 else { throw failure("_EXTERNAL_DATA/\(name) cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(input) }
        var status = stat()
        guard fstat(input, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw failure("_EXTERNAL_DATA/\(name) is not a regular file")
        }
        let output = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw failure("_EXTERNAL_DATA/\(name) cannot be created in \(destination.path): \(String(cString: strerror(errno)))") }
        var complete = false
        defer {
            close(output)
            if !complete { unlink(to) }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw failure("_EXTERNAL_DATA/\(name) cannot be read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { write(output, $0.baseAddress! + offset, count - offset) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw failure("_EXTERNAL_DATA/\(name) cannot be written: \(String(cString: strerror(errno)))") }
                offset += written
            }
        }
        guard fsync(output) == 0 else { throw failure("_EXTERNAL_DATA/\(name) cannot be synced: \(String(cString: strerror(errno)))") }
        complete = true
    }

    /// Removes `directory` and the `.…_SUPPORT` folder holding it when they hold nothing more (a folder
    /// still holding something stays).
    static func removeEmptyFolders(_ directory: URL) {
        rmdir(directory.path)
        let parent = directory.deletingLastPathComponent()
        if parent.lastPathComponent.hasPrefix("."), parent.lastPathComponent.hasSuffix("_SUPPORT") { rmdir(parent.path) }
    }
}
