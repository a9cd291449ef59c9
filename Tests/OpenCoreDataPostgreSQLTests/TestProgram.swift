import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program a test starts (ocd, scripts/postgres-server.sh), its standard output and error caught in
/// files. posix_spawn and waitpid rather than Foundation's `Process`, whose exit notice can be lost on
/// Linux; every wait has a deadline, so a stuck program fails its test instead of hanging the run.
final class TestProgram {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built `ocd` (.build/debug/ocd of this package), nil when it is not built.
    static var ocd: String? {
        let path = packageRoot.appendingPathComponent(".build/debug/ocd").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    let pid: pid_t
    private let folder: URL
    private var status: Int32?

    /// Starts `executable` (a path) with `arguments`; its input is empty.
    init(_ executable: String, _ arguments: [String]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-program-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, folder.appendingPathComponent("stdout").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, folder.appendingPathComponent("stderr").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = (argv + [nil]).withUnsafeBufferPointer { posix_spawn(&pid, executable, &actions, nil, $0.baseAddress!, environ) }
        guard spawned == 0 else { throw Failure(description: "cannot start \(executable): \(String(cString: strerror(spawned)))") }
        self.pid = pid
    }

    deinit {
        if status == nil {
            _ = kill(pid, SIGKILL)
            var ignored: Int32 = 0
            _ = waitpid(pid, &ignored, 0)
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// What the program has written to standard output so far.
    var stdout: String { (try? String(contentsOf: folder.appendingPathComponent("stdout"), encoding: .utf8)) ?? "" }
    /// What the program has written to standard error so far.
    var stderr: String { (try? String(contentsOf: folder.appendingPathComponent("stderr"), encoding: .utf8)) ?? "" }

    /// Waits for the program to end and returns its exit status (128 + the signal if one ended it); past
    /// `seconds` it is killed and the wait throws.
    @discardableResult
    func wait(seconds: Double = 120) throws -> Int32 {
        if let status { return status }
        let deadline = Date(timeIntervalSinceNow: seconds)
        var raw: Int32 = 0
        while waitpid(pid, &raw, WNOHANG) != pid {
            if Date() > deadline {
                _ = kill(pid, SIGKILL)
                _ = waitpid(pid, &raw, 0)
                status = 128 + SIGKILL
                throw Failure(description: "process \(pid) still running after \(seconds) s; killed")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, spelled out: the C macros are not imported.
        let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        status = code
        return code
    }

    /// Runs a program to its end: exit status, standard output, standard error.
    static func run(_ executable: String, _ arguments: [String], seconds: Double = 120) throws -> (status: Int32, stdout: String, stderr: String) {
        let program = try TestProgram(executable, arguments)
        let status = try program.wait(seconds: seconds)
        return (status, program.stdout, program.stderr)
    }
}
