import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

// `ocd serve` (docs/SERVE.md) as a browser uses it: a real `ocd serve` process on the populated store, its
// table pages fetched over loopback HTTP from the first to the last, against the same page fetched directly
// from SQLite (the count and one LIMIT/OFFSET page of rows).

enum ServeScenarios {
    static let all: [Scenario] = [tablePages]

    /// How many pages one timed run asks for, spread evenly from the first to the last.
    static let pagesPerRun = 40
    /// Rows on a page (`StoreBrowser.pageSize` in `ocd`).
    static let pageSize = 50

    /// The pages a run visits for a table of `rows` rows: the first, the last, and evenly between.
    static func pages(rows: Int) -> [Int] {
        let pageCount = max(1, (rows + pageSize - 1) / pageSize)
        let visited = min(pageCount, pagesPerRun)
        guard visited > 1 else { return [1] }
        return (0..<visited).map { 1 + $0 * (pageCount - 1) / (visited - 1) }
    }

    /// (serve-1) Table pages.
    static let tablePages = Scenario(
        name: "serve-table-pages", targetRatio: nil,
        summary: "A running `ocd serve` (read-only, its own process) on the populated store of N items; timed: GET /entity/Item?page=P over loopback for 40 pages spread from the first to the last (each page counts the entity and fetches 50 objects with fetchOffset/fetchLimit, then renders HTML). Raw, for comparison: the same count and the same LIMIT 50 OFFSET rows read from SQLite directly. Figures: each page's time (target ≤ 100 ms at every size) and the server's resident memory growth over a run (flat: target ≤ 32 MB).",
        peakMemoryTargetMB: nil
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        let pages = pages(rows: size)
        let figures = Figures([
            FigureSpec("page_ms", .max, target: 100),
            FigureSpec("page_median_ms", .median),
            FigureSpec("server_rss_growth_mb", .max, target: 32, unit: "MB"),
        ])
        return ScenarioRun(rows: size, ours: {
            let model = fixtures.directory.appendingPathComponent("Bench.xcdatamodeld")
            if !FileManager.default.fileExists(atPath: model.path) {
                try fixtures.model.writeModelBundle(to: model, versionName: "Bench")
            }
            let server = try ServedStore(store: url, model: model, scratch: fixtures.freshURL("serve-output"))
            // The first page once before timing: the server's caches and the store's pages warm, its
            // memory measured from there.
            _ = try server.rowsOnPage(1)
            let baseline = server.residentMegabytes()
            return {
                defer { server.stop() }
                var rows = 0
                for page in pages {
                    let start = monotonicSeconds()
                    rows += try server.rowsOnPage(page)
                    let end = monotonicSeconds()
                    figures.recordMilliseconds("page_ms", from: start, to: end)
                    figures.recordMilliseconds("page_median_ms", from: start, to: end)
                }
                if let baseline, let now = server.residentMegabytes() { figures.record("server_rss_growth_mb", now - baseline) }
                return rows
            }
        }, raw: {
            let db = try RawConnection(path: url.path)
            let count = try db.prepare("SELECT COUNT(*) FROM ZITEM")
            let select = try db.prepare("SELECT \(RawItem.columns) FROM ZITEM LIMIT ? OFFSET ?")
            return {
                var rows = 0
                for page in pages {
                    defer { count.reset(); select.reset() }
                    _ = try count.step()
                    guard count.int64(0) == Int64(size) else {
                        throw BenchWorkerFailure(description: "the populated store holds \(count.int64(0)) items, not \(size)")
                    }
                    select.bind(1, Int64(pageSize))
                    select.bind(2, Int64((page - 1) * pageSize))
                    var items: [RawItem] = []
                    while try select.step() { items.append(RawItem(select)) }
                    rows += items.count
                }
                return rows
            }
        }, note: "\(pages.count) pages per timed run; the time column is their total", figures: figures)
    }
}

/// An `ocd serve` process on a store, started from the `ocd` built beside this benchmark.
final class ServedStore {
    private let worker: WorkerProcess
    private let port: Int
    private var stopped = false

    /// Starts `ocd serve STORE --model MODEL --port 0` and waits (up to 60 s) for the port it announces.
    ///
    /// - Throws: ``ScenarioSkipped`` when `ocd` is not built beside the benchmark; ``BenchWorkerFailure``
    ///   when it ends or announces nothing.
    init(store: URL, model: URL, scratch: URL) throws {
        let benchmark = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let ocd = URL(fileURLWithPath: benchmark).deletingLastPathComponent().appendingPathComponent("ocd").path
        guard FileManager.default.isExecutableFile(atPath: ocd) else {
            throw ScenarioSkipped(reason: "ocd is not built beside ocd-bench (swift build -c release builds both)")
        }
        let output = scratch.deletingPathExtension().appendingPathExtension("log")
        worker = try WorkerProcess.start(["serve", store.path, "--model", model.path, "--port", "0"], output: output, executable: ocd,
                                       errorsToOutput: true)
        let deadline = monotonicSeconds() + 60
        while true {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "http://127.0.0.1:"),
               let port = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                self.port = port
                return
            }
            if let ended = worker.poll() {
                throw BenchWorkerFailure(description: "ocd serve ended (status \(ended.status)): \(ended.output)")
            }
            guard monotonicSeconds() < deadline else {
                worker.kill()
                _ = worker.wait()
                throw BenchWorkerFailure(description: "ocd serve announced no port within 60 s: \(text)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    deinit { stop() }

    /// The table rows on page `page` of the Item entity.
    ///
    /// - Throws: ``BenchWorkerFailure`` when the server does not answer 200.
    func rowsOnPage(_ page: Int) throws -> Int {
        let url = URL(string: "http://127.0.0.1:\(port)/entity/Item?page=\(page)")!
        let (body, status) = try SyncScenarios.blocking {
            let (data, response) = try await URLSession.shared.data(from: url)
            return (String(decoding: data, as: UTF8.self), (response as? HTTPURLResponse)?.statusCode ?? 0)
        }
        guard status == 200 else { throw BenchWorkerFailure(description: "GET \(url): status \(status)") }
        return body.components(separatedBy: "<tr><td>").count - 1
    }

    /// The server's resident memory in MB (from /proc), nil where it cannot be read.
    func residentMegabytes() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(worker.pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kilobytes / 1024
    }

    /// Ends the server and reaps it.
    func stop() {
        guard !stopped else { return }
        stopped = true
        worker.kill()
        _ = worker.wait()
    }
}
