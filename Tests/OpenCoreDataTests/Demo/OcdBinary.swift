import Foundation

/// Runs the built `ocd` binary (.build/debug/ocd of this package); tests skip when it is not built.
enum OcdBinary {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var url: URL? {
        for configuration in ["debug", "release"] {
            let candidate = packageRoot.appendingPathComponent(".build/\(configuration)/ocd")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Whether tmux can be run.
    static let hasTmux = (try? shell(["tmux", "-V"]).status == 0) ?? false

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `ocd` with arguments (stdin empty, no terminal) and waits.
    static func run(_ arguments: [String], binary: URL) throws -> Output {
        let result = try ChildProcess.run(binary.path, arguments)
        return Output(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// Runs any program found on PATH.
    @discardableResult
    static func shell(_ arguments: [String]) throws -> Output {
        let result = try ChildProcess.run(arguments[0], Array(arguments.dropFirst()), seconds: 60)
        return Output(status: result.status, stdout: result.stdout, stderr: "")
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
