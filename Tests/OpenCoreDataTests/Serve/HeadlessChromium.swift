import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Debian's Chromium run headless against `ocd serve`: the DOM after the pages' script ran, screenshots,
/// and (through `chromedriver`, the WebDriver protocol over plain HTTP) a page kept open while the test
/// saves. The tests skip when it is not installed (`apt-get install chromium chromium-driver`; `.ci/run`
/// does).
enum HeadlessChromium {
    /// The browser, when installed.
    static let browser: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    /// The WebDriver server, when installed.
    static let driver: String? = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Where the screenshots go: a folder of the build, kept after the run to be looked at.
    static let artifacts = OcdBinary.packageRoot.appendingPathComponent(".build/test-artifacts/serve-screenshots")

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What every run needs in a container: no sandbox (root), no GPU, no shared-memory folder assumed.
    static let commonArguments = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                  "--no-first-run", "--hide-scrollbars"]

    /// The document of `url` as Chromium holds it once loaded and its scripts have run.
    ///
    /// - Throws: ``Failure`` when Chromium is absent or fails.
    static func dumpDOM(_ url: String) throws -> String {
        guard let browser else { throw Failure(description: "chromium is not installed") }
        let profile = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: profile) }
        let result = try ChildProcess.run(browser, commonArguments + ["--user-data-dir=\(profile.path)", "--dump-dom", url],
                                          seconds: 120)
        guard result.status == 0, !result.stdout.isEmpty else {
            throw Failure(description: "chromium --dump-dom \(url): status \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// Saves a PNG of `url` at `width`×`height` as `name` in ``artifacts``, and returns its file.
    ///
    /// - Throws: ``Failure`` when Chromium is absent or writes no file.
    static func screenshot(_ url: String, name: String, width: Int = 1280, height: Int = 900) throws -> URL {
        guard let browser else { throw Failure(description: "chromium is not installed") }
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        let file = artifacts.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: file)
        let profile = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: profile) }
        let result = try ChildProcess.run(browser, commonArguments + [
            "--user-data-dir=\(profile.path)", "--screenshot=\(file.path)", "--window-size=\(width),\(height)", url,
        ], seconds: 120)
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw Failure(description: "chromium --screenshot \(url): status \(result.status): \(result.stderr)")
        }
        return file
    }

    /// A browser session driven through `chromedriver` (started here on a free port, stopped on `close`).
    final class Session {
        private let driver: ChildProcess
        private let base: String
        private let profile: URL
        private var session = ""

        /// Starts chromedriver and a headless browser session.
        ///
        /// - Throws: ``Failure`` when chromedriver is absent or the session cannot be made within 30 s.
        init() async throws {
            guard let path = HeadlessChromium.driver, let browser = HeadlessChromium.browser else {
                throw Failure(description: "chromedriver is not installed")
            }
            // Port 0: chromedriver picks a free port and says which, so no port chosen here can be taken
            // by another process before the driver binds it.
            driver = try ChildProcess.start(path, ["--port=0"], captureErrors: true)
            guard let port = await Self.announcedPort(of: driver, seconds: 60) else {
                driver.kill(SIGKILL)
                let errors = driver.errorOutput.map { String(decoding: $0.availableData, as: UTF8.self) } ?? ""
                throw Failure(description: "chromedriver did not say it was listening within 60 s: \(errors)")
            }
            base = "http://127.0.0.1:\(port)"
            profile = try OcdBinary.temporaryFolder()
            let deadline = Date().addingTimeInterval(30)
            var lastError: Error?
            while Date() < deadline {
                do {
                    let answer = try await Self.call("POST", base + "/session", [
                        "capabilities": ["alwaysMatch": ["goog:chromeOptions": [
                            "binary": browser,
                            "args": HeadlessChromium.commonArguments + ["--user-data-dir=\(profile.path)"],
                        ]]],
                    ])
                    if let value = answer["value"] as? [String: Any], let id = value["sessionId"] as? String {
                        session = id
                        return
                    }
                    lastError = Failure(description: "no session in \(answer)")
                } catch {
                    lastError = error
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            throw Failure(description: "chromedriver gave no session: \(String(describing: lastError))")
        }

        /// The port in chromedriver's "started successfully on port N." line, or nil when the driver ends
        /// its output or says nothing of the kind within `seconds`.
        private static func announcedPort(of driver: ChildProcess, seconds: Double) async -> Int? {
            let found = Mutex<Int??>(nil)
            let output = driver.output
            Thread {
                var text = ""
                while true {
                    let chunk = output.availableData
                    if chunk.isEmpty { found.withLock { $0 = .some(nil) }; return }
                    text += String(decoding: chunk, as: UTF8.self)
                    if let range = text.range(of: "started successfully on port "),
                       let line = text[range.upperBound...].split(separator: "\n").first,
                       line.hasSuffix("."), let port = Int(line.dropLast()) {
                        found.withLock { $0 = .some(port) }
                        return
                    }
                }
            }.start()
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if let answer = found.withLock({ $0 }) { return answer }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return nil
        }

        /// Loads `url` in the session's window.
        func open(_ url: String) async throws {
            _ = try await Self.call("POST", "\(base)/session/\(session)/url", ["url": url])
        }

        /// Runs `script` (a function body) in the page and returns what it returns.
        func evaluate(_ script: String) async throws -> Any? {
            let answer = try await Self.call("POST", "\(base)/session/\(session)/execute/sync", ["script": script, "args": []])
            return answer["value"]
        }

        /// Polls `script` until it returns `true`, up to `seconds`.
        ///
        /// - Throws: ``Failure`` naming the script when it never does.
        func waitUntil(_ script: String, seconds: Double = 10) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if try await evaluate(script) as? Bool == true { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw Failure(description: "not true within \(seconds) s: \(script)")
        }

        /// Ends the session and chromedriver, and any browser process the session left (chromedriver does
        /// not end the browser when it is stopped itself): those, and only those, name this session's profile.
        func close() async {
            _ = try? await Self.call("DELETE", "\(base)/session/\(session)", nil)
            driver.kill(SIGTERM)
            _ = try? driver.wait(seconds: 20)
            let marker = "--user-data-dir=\(profile.path)"
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = Int32(entry), let commandLine = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                      String(decoding: commandLine, as: UTF8.self).split(separator: "\0").contains(Substring(marker)) else { continue }
                Glibc.kill(pid, SIGKILL)
            }
            try? FileManager.default.removeItem(at: profile)
        }

        /// One WebDriver call: JSON in, JSON out (over a plain socket: chromedriver listens on loopback).
        private static func call(_ method: String, _ url: String, _ body: [String: Any]?) async throws -> [String: Any] {
            let parsed = URL(string: url)!
            let text = try body.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
            let response = try HTTPGet.request(parsed.path, port: parsed.port ?? 80, method: method, body: text)
            guard let object = try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any] else {
                throw Failure(description: "not a JSON object: \(response.body)")
            }
            if let value = object["value"] as? [String: Any], let error = value["error"] as? String {
                throw Failure(description: "\(method) \(url): \(error): \(value["message"] ?? "")")
            }
            return object
        }
    }
}
