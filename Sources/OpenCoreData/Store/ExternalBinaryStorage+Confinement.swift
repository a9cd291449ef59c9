import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// External values stay inside the store's own folder: `.<name>_SUPPORT` and its `_EXTERNAL_DATA` are
/// used only as real folders, never through a symbolic link (which could lead anywhere, so a read would
/// print another file's bytes and a save or a migration would write, link or remove files elsewhere).
/// Files inside are opened with `O_NOFOLLOW` where they are read and written.
extension ExternalBinaryStorage {
    /// Why `directory` (an `_EXTERNAL_DATA` folder, or a migration copy's folder) may not be used: it, or
    /// the `.…_SUPPORT` folder holding it, is a symbolic link or not a folder; nil when each is a real
    /// folder or not there yet.
    static func confinementProblem(of directory: URL) -> String? {
        var checked = [directory]
        let parent = directory.deletingLastPathComponent()
        if parent.lastPathComponent.hasPrefix("."), parent.lastPathComponent.hasSuffix("_SUPPORT") {
            checked.insert(parent, at: 0)
        }
        for folder in checked {
            var status = stat()
            guard lstat(folder.path, &status) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFDIR: continue
            case S_IFLNK: return "the folder \(folder.lastPathComponent) is a symbolic link, which may lead outside the store's folder"
            default: return "\(folder.lastPathComponent) is not a folder"
            }
        }
        return nil
    }

    /// Makes `directory` and its `.…_SUPPORT` parent where missing, as real folders.
    ///
    /// - Returns: why the folder cannot be used or made; nil once it is there and confined.
    static func makeConfinedFolder(_ directory: URL) -> String? {
        if let problem = confinementProblem(of: directory) { return problem }
        for folder in [directory.deletingLastPathComponent(), directory] {
            // mkdir never follows a link at the path: a link planted meanwhile makes it fail with EEXIST,
            // and the check below finds it.
            if mkdir(folder.path, 0o755) != 0, errno != EEXIST {
                return "the folder \(folder.path) cannot be made: \(String(cString: strerror(errno)))"
            }
        }
        return confinementProblem(of: directory)
    }
}
