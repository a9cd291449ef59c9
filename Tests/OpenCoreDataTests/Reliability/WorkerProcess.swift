import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `ocd-crash-worker` executable, which SwiftPM builds next to the test bundle
/// (`.build/<triple>/debug/`). Set `OCD_CRASH_WORKER` to use another build.
enum WorkerProcess {
    static var executable: URL? {
        if let path = ProcessInfo.processInfo.environment["OCD_CRASH_WORKER"] {
            return URL(fileURLWithPath: path)
        }
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for directory in candidates {
            let url = directory.appendingPathComponent("ocd-crash-worker")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    static let missingMessage: Comment = "ocd-crash-worker is not built next to the test bundle: run `swift build` (or set OCD_CRASH_WORKER); skipping"

    /// Starts the worker with its output sent to a pipe (and its input read from `input`, if given).
    static func start(_ arguments: [String], input: Pipe? = nil) throws -> (Process, Pipe) {
        guard let executable else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        if let input { process.standardInput = input }
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    /// Runs the worker to the end and returns its exit status and standard output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let (process, pipe) = try start(arguments)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// SIGKILL: no handlers, no atexit, no flush — as close to pulling the plug on the process as we can get.
    static func kill(_ process: Process) {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Reads lines from a pipe until one equals `line` (or the pipe closes).
    static func waitForLine(_ line: String, on pipe: Pipe) -> Bool {
        var buffer = ""
        while true {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { return false }
            buffer += String(decoding: chunk, as: UTF8.self)
            if buffer.split(separator: "\n").contains(Substring(line)) { return true }
        }
    }
}
