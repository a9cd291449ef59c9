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

    /// Starts the worker, its output to a pipe (and its input from one, when asked).
    static func start(_ arguments: [String], withInput: Bool = false) throws -> ChildProcess {
        guard let executable else { throw CocoaError(.fileNoSuchFile) }
        return try ChildProcess.start(executable.path, arguments, withInput: withInput)
    }

    /// Runs the worker to the end and returns its exit status and standard output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let child = try start(arguments)
        let output = child.readAllOutput()
        return (try child.wait(), output)
    }
}
