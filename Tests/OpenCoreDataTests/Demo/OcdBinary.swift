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
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs any program found on PATH.
    @discardableResult
    static func shell(_ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: data, as: UTF8.self), stderr: "")
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
