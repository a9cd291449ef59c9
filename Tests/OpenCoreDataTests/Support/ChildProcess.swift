import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program the tests start (the demo, the crash worker, tmux), with posix_spawn and waitpid.
///
/// Not Foundation's `Process`: on Linux its exit notice can be lost when several tests start programs at
/// once, and `waitUntilExit()` then waits forever on a child that has already exited (seen: a tmux client
/// left a zombie and the whole test run hung). Every pipe here is close-on-exec, so a child inherits only
/// its own three descriptors and never holds another test's pipe open; every wait has a deadline.
final class ChildProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    /// The child's standard output.
    let output: FileHandle
    /// The child's standard input, when it was asked for.
    let input: FileHandle?
    /// The child's standard error, when it was asked for (else it goes to /dev/null).
    let errorOutput: FileHandle?
    /// Chromium's `--remote-debugging-pipe`, when it was asked for: what the parent writes reaches the
    /// child's descriptor 3, and what the child writes to its descriptor 4 is read here.
    let debuggingPipe: (commands: FileHandle, replies: FileHandle)?
    private let exitStatus = Mutex<Int32?>(nil)

    private init(pid: pid_t, output: FileHandle, input: FileHandle?, errorOutput: FileHandle?,
                 debuggingPipe: (commands: FileHandle, replies: FileHandle)? = nil) {
        self.pid = pid
        self.output = output
        self.input = input
        self.errorOutput = errorOutput
        self.debuggingPipe = debuggingPipe
    }

    deinit {
        // A child nobody waited for must not linger as a zombie or keep running after its test.
        if exitStatus.withLock({ $0 }) == nil {
            _ = Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }

    /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`.
    /// With `debuggingPipe`, the child also gets descriptors 3 (to read) and 4 (to write), as Chromium's
    /// `--remote-debugging-pipe` expects.
    static func start(_ executable: String, _ arguments: [String], withInput: Bool = false,
                      captureErrors: Bool = false, debuggingPipe: Bool = false) throws -> ChildProcess {
        let stdout = try pipe(), stdin = withInput ? try pipe() : nil, stderr = captureErrors ? try pipe() : nil
        let commands = debuggingPipe ? try pipe() : nil, replies = debuggingPipe ? try pipe() : nil
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin.read, 0) } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, stdout.write, 1)
        if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr.write, 2) } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        if let commands, let replies {
            posix_spawn_file_actions_adddup2(&actions, commands.read, 3)
            posix_spawn_file_actions_adddup2(&actions, replies.write, 4)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with default signal handling and no blocked signals, whatever the test runner set.
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = spawning.withLock { _ in (argv + [nil]).withUnsafeBufferPointer { argvPointer in
            executable.contains("/")
                ? posix_spawn(&pid, executable, &actions, &attributes, argvPointer.baseAddress!, environ)
                : posix_spawnp(&pid, executable, &actions, &attributes, argvPointer.baseAddress!, environ)
        } }
        // The parent keeps only its own ends.
        close(stdout.write)
        if let stdin { close(stdin.read) }
        if let stderr { close(stderr.write) }
        if let commands { close(commands.read) }
        if let replies { close(replies.write) }
        guard result == 0 else {
            close(stdout.read)
            if let stdin { close(stdin.write) }
            if let stderr { close(stderr.read) }
            if let commands { close(commands.write) }
            if let replies { close(replies.read) }
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return ChildProcess(pid: pid, output: FileHandle(fileDescriptor: stdout.read, closeOnDealloc: true),
                            input: stdin.map { FileHandle(fileDescriptor: $0.write, closeOnDealloc: true) },
                            errorOutput: stderr.map { FileHandle(fileDescriptor: $0.read, closeOnDealloc: true) },
                            debuggingPipe: commands.flatMap { commands in replies.map { replies in
                                (FileHandle(fileDescriptor: commands.write, closeOnDealloc: true),
                                 FileHandle(fileDescriptor: replies.read, closeOnDealloc: true))
                            } })
    }

    /// Held while a pipe is made and marked close-on-exec, and while a child is spawned: pipe2 is not
    /// imported into Swift, so without it a child spawned by another thread between pipe() and fcntl() could
    /// inherit the new pipe and keep it open.
    private static let spawning = Mutex<Void>(())

    private static func pipe() throws -> (read: Int32, write: Int32) {
        try spawning.withLock { _ in
            var fds: [Int32] = [0, 0]
            guard Glibc.pipe(&fds) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
            // Above the descriptors a child is given (0–4), so one dup2 in the child cannot overwrite another's source.
            for index in 0..<2 where fds[index] < 5 {
                let moved = fcntl(fds[index], F_DUPFD, 5)
                close(fds[index])
                fds[index] = moved
            }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return (fds[0], fds[1])
        }
    }

    /// Sends a signal.
    func kill(_ signal: Int32 = SIGKILL) {
        if exitStatus.withLock({ $0 }) == nil { _ = Glibc.kill(pid, signal) }
    }

    /// Waits for the child to end and returns its exit status (128 + the signal if a signal ended it). Past
    /// `seconds` the child is killed and the wait fails, so a stuck program fails its test instead of hanging
    /// the run.
    @discardableResult
    func wait(seconds: Double = 300) throws -> Int32 {
        if let status = exitStatus.withLock({ $0 }) { return status }
        let deadline = ContinuousClock.now + .seconds(seconds)
        var status: Int32 = 0
        var pause = 0.001
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR {
                throw Failure(description: "waitpid(\(pid)): \(String(cString: strerror(errno)))")
            }
            if ContinuousClock.now > deadline {
                _ = Glibc.kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                exitStatus.withLock { $0 = 128 + SIGKILL }
                throw Failure(description: "process \(pid) still running after \(seconds) s; killed")
            }
            Thread.sleep(forTimeInterval: pause)
            pause = min(pause * 2, 0.05)
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, spelled out: the C macros are not imported.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus.withLock { $0 = code }
        return code
    }

    /// Everything the child writes to standard output until it closes it.
    func readAllOutput() -> String {
        String(decoding: output.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Reads standard output until a line equals `line` (false if the output closes first).
    func waitForLine(_ line: String) -> Bool {
        var buffer = ""
        while true {
            let chunk = output.availableData
            if chunk.isEmpty { return false }
            buffer += String(decoding: chunk, as: UTF8.self)
            if buffer.split(separator: "\n").contains(Substring(line)) { return true }
        }
    }

    /// Writes to the child's standard input.
    func send(_ text: String) {
        input?.write(Data(text.utf8))
    }

    /// Runs a program to the end: its exit status, standard output and standard error.
    static func run(_ executable: String, _ arguments: [String], seconds: Double = 300) throws
        -> (status: Int32, stdout: String, stderr: String) {
        let child = try start(executable, arguments, captureErrors: true)
        // Both pipes are drained on threads of their own, so neither can fill and stall the child, and the
        // wait below keeps its deadline even if the child never closes them.
        let output = Mutex<(Data, Data)>((Data(), Data()))
        let drained = DispatchGroup()
        for (handle, isError) in [(child.output, false), (child.errorOutput, true)] {
            guard let handle else { continue }
            drained.enter()
            Thread {
                let data = handle.readDataToEndOfFile()
                output.withLock { if isError { $0.1 = data } else { $0.0 = data } }
                drained.leave()
            }.start()
        }
        let status = try child.wait(seconds: seconds)
        _ = drained.wait(timeout: .now() + 10)
        let (out, errors) = output.withLock { $0 }
        return (status, String(decoding: out, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }
}
