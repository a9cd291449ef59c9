import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A copy of this program started in a worker mode, its standard output caught in a file. posix_spawn and
/// waitpid rather than Foundation's `Process`, whose exit notice can be lost on Linux when several
/// children run at once (docs/RELIABILITY.md says more).
struct WorkerProcess {
    let pid: pid_t
    let output: URL

    /// Starts `executable` (by default `/proc/self/exe`, this very binary) with `arguments`, its output going
    /// to `output` (and its standard error too with `errorsToOutput`, else to this program's).
    ///
    /// - Throws: ``BenchWorkerFailure`` when the program cannot be started.
    static func start(_ arguments: [String], output: URL, executable: String? = nil,
                      errorsToOutput: Bool = false) throws -> WorkerProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if errorsToOutput { posix_spawn_file_actions_adddup2(&actions, 1, 2) }
        let executable = executable
            ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer {
            posix_spawn(&pid, executable, &actions, nil, $0.baseAddress!, environ)
        }
        guard result == 0 else {
            throw BenchWorkerFailure(description: "cannot start a worker: \(String(cString: strerror(result)))")
        }
        return WorkerProcess(pid: pid, output: output)
    }

    /// Whether the worker has not ended yet: its process is there and not a zombie (it is reaped only by
    /// ``wait()``).
    var isRunning: Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ", options: .backwards) else { return false }
        return stat[afterName.upperBound...].first != "Z"
    }

    /// Waits for the worker to end; returns its exit status and what it printed.
    func wait() -> (status: Int32, output: String) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return result(status)
    }

    /// The worker's exit status and output if it has ended (reaping it), nil while it runs.
    func poll() -> (status: Int32, output: String)? {
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, WNOHANG) } while reaped < 0 && errno == EINTR
        return reaped == pid ? result(status) : nil
    }

    /// Ends the worker at once (SIGKILL); ``wait()`` then reaps it.
    func kill() { _ = Glibc.kill(pid, SIGKILL) }

    private func result(_ status: Int32) -> (status: Int32, output: String) {
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (code, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
