import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Debian's Chromium run headless against `ocd serve`: the DOM after the pages' script ran, screenshots,
/// and (through the DevTools protocol on a pipe) a page kept open while the test saves. The tests skip
/// when it is not installed (`apt-get install chromium`; `.ci/run` does).
enum HeadlessChromium {
    /// The browser, when installed.
    static let browser: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
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

    /// A headless browser kept open while a test saves, driven through the DevTools protocol over
    /// `--remote-debugging-pipe` (JSON messages, each ended by a NUL byte, on descriptors 3 and 4).
    ///
    /// No WebDriver server in between: the browser is the same program the one-shot tests above run, so a
    /// machine where those pass runs these too, and there is no port to choose, announce or connect to.
    final class Session: @unchecked Sendable {
        // @unchecked Sendable: `pending`, `nextID` and `page` are touched only inside `exchange`, one call at a time.
        private let browser: ChildProcess
        private let commands: FileHandle
        private let replies: Int32
        private let profile: URL
        private var pending = Data()
        private var nextID = 0
        private var page = ""
        /// The last few kilobytes Chromium wrote to its standard output and error, for failure messages.
        private let output = OutputTail()

        /// The end of what a program wrote, kept from several threads.
        final class OutputTail: Sendable {
            private let text = Mutex("")
            func append(_ chunk: Data) { text.withLock { $0 = String(($0 + String(decoding: chunk, as: UTF8.self)).suffix(4_000)) } }
            var value: String { text.withLock { $0 } }
        }
        /// One DevTools exchange at a time, on a thread of its own (see ``call(_:_:session:seconds:)``).
        private let exchange = DispatchQueue(label: "headless-chromium-devtools")

        /// Starts the browser and attaches to a blank page of its own.
        ///
        /// - Throws: ``Failure`` when Chromium is absent, ends, or does not answer within 30 s.
        init() async throws {
            guard let path = HeadlessChromium.browser else { throw Failure(description: "chromium is not installed") }
            profile = try OcdBinary.temporaryFolder()
            browser = try ChildProcess.start(path, HeadlessChromium.commonArguments + [
                "--user-data-dir=\(profile.path)", "--remote-debugging-pipe", "about:blank",
            ], captureErrors: true, debuggingPipe: true)
            guard let pipe = browser.debuggingPipe else { throw Failure(description: "no debugging pipe") }
            commands = pipe.commands
            replies = pipe.replies.fileDescriptor
            // Both of Chromium's outputs are drained, so that it never blocks on a full pipe, and their end kept
            // for the message of a failure.
            for handle in [browser.output, browser.errorOutput].compactMap({ $0 }) {
                let output = self.output
                Thread {
                    while true {
                        let chunk = handle.availableData
                        if chunk.isEmpty { return }
                        output.append(chunk)
                    }
                }.start()
            }
            let target = try await call("Target.createTarget", ["url": "about:blank"])
            guard let targetID = target["targetId"] as? String else { throw Failure(description: "no target in \(target)") }
            let attached = try await call("Target.attachToTarget", ["targetId": targetID, "flatten": true])
            guard let sessionID = attached["sessionId"] as? String else { throw Failure(description: "not attached: \(attached)") }
            page = sessionID
        }

        /// Loads `url` in the session's page and waits until the document is complete.
        ///
        /// - Throws: ``Failure`` when the browser refuses the address or the page does not load within 30 s.
        func open(_ url: String) async throws {
            let answer = try await call("Page.navigate", ["url": url], session: page)
            if let error = answer["errorText"] as? String { throw Failure(description: "\(url): \(error)") }
            do {
                try await waitUntil("return document.readyState === 'complete' && location.href !== 'about:blank'", seconds: 30)
            } catch {
                let state = (try? await evaluate("return location.href + ' ' + document.readyState")) ?? "unknown"
                throw Failure(description: "\(url) did not load (the page: \(String(describing: state))): \(error); "
                              + "Chromium said: \(output.value)")
            }
        }

        /// Runs `script` (a function body) in the page and returns what it returns.
        ///
        /// - Throws: ``Failure`` with the page's exception when the script throws.
        func evaluate(_ script: String) async throws -> Any? {
            let answer = try await call("Runtime.evaluate", ["expression": "(function() {\n\(script)\n})()", "returnByValue": true],
                                  session: page)
            if let exception = answer["exceptionDetails"] as? [String: Any] {
                let text = (exception["exception"] as? [String: Any])?["description"] ?? exception["text"] ?? ""
                throw Failure(description: "script threw \(text): \(script)")
            }
            return (answer["result"] as? [String: Any])?["value"]
        }

        /// Polls `script` until it returns `true`, up to `seconds`. A script that throws while the page
        /// is between documents (a form just sent) counts as not yet.
        ///
        /// - Throws: ``Failure`` naming the script (and its last error) when it never does.
        func waitUntil(_ script: String, seconds: Double = 10) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            var lastError: Error?
            while Date() < deadline {
                do {
                    if try await evaluate(script) as? Bool == true { return }
                } catch {
                    lastError = error
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw Failure(description: "not true within \(seconds) s: \(script)\(lastError.map { " (last: \($0))" } ?? "")")
        }

        /// Closes the browser, then ends any of its processes still running: those, and only those, name
        /// this session's profile.
        func close() async {
            _ = try? await call("Browser.close", [:], seconds: 10)
            if (try? browser.wait(seconds: 10)) == nil { browser.kill(SIGKILL) }
            let marker = "--user-data-dir=\(profile.path)"
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = Int32(entry), let commandLine = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                      String(decoding: commandLine, as: UTF8.self).split(separator: "\0").contains(Substring(marker)) else { continue }
                Glibc.kill(pid, SIGKILL)
            }
            try? FileManager.default.removeItem(at: profile)
        }

        /// One DevTools command and its result, skipping the events that arrive in between. The wait for the
        /// answer blocks in poll(2), so it runs on a queue of its own: blocking one of the few threads Swift's
        /// concurrency runs every test on would stall the tests running beside this one.
        private func call(_ method: String, _ parameters: [String: Any], session: String? = nil,
                          seconds: Double = 30) async throws -> [String: Any] {
            let message = try JSONSerialization.data(withJSONObject: parameters)
            return try await withCheckedThrowingContinuation { continuation in
                exchange.async {
                    do {
                        let parameters = try JSONSerialization.jsonObject(with: message) as? [String: Any] ?? [:]
                        let result = try self.blockingCall(method, parameters, session: session, seconds: seconds)
                        continuation.resume(returning: UncheckedAnswer(value: result).value)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }

        /// A JSON object handed from the exchange queue back to the caller (it is not read on both sides at once).
        private struct UncheckedAnswer: @unchecked Sendable {
            var value: [String: Any]
        }

        private func blockingCall(_ method: String, _ parameters: [String: Any], session: String?,
                                  seconds: Double) throws -> [String: Any] {
            nextID += 1
            var message: [String: Any] = ["id": nextID, "method": method, "params": parameters]
            if let session { message["sessionId"] = session }
            commands.write(try JSONSerialization.data(withJSONObject: message) + Data([0]))
            let deadline = Date().addingTimeInterval(seconds)
            while true {
                if let end = pending.firstIndex(of: 0) {
                    let text = pending[pending.startIndex..<end]
                    pending = Data(pending[(end + 1)...])
                    guard let reply = try JSONSerialization.jsonObject(with: text) as? [String: Any],
                          reply["id"] as? Int == nextID else { continue }
                    if let error = reply["error"] as? [String: Any] {
                        throw Failure(description: "\(method): \(error["message"] ?? error)")
                    }
                    return reply["result"] as? [String: Any] ?? [:]
                }
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw Failure(description: "\(method): no answer within \(seconds) s") }
                var ready = pollfd(fd: replies, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, Int32(left * 1000) + 1) > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let count = read(replies, &chunk, chunk.count)
                guard count > 0 else { throw Failure(description: "\(method): the browser closed its pipe") }
                pending.append(contentsOf: chunk[0..<count])
            }
        }
    }
}
