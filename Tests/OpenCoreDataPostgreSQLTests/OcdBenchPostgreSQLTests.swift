import Foundation
import Testing

/// `ocd-bench --store postgresql://…` run as the built binary: every context scenario and the feed latency
/// between two processes complete against the server, ours and raw doing the same work (the bench fails a
/// scenario whose checksums differ), and the feed scenario hears every save of the other process. Figures are
/// not checked: timing is the command's job, not the tests'.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable && OcdBenchProgram.path != nil,
                "needs a built ocd-bench and OCD_POSTGRES_URL: export OCD_POSTGRES_URL=$(scripts/postgres-server.sh start) to run these"))
struct OcdBenchPostgreSQLTests {
    /// Runs the bench with `arguments` after `--store URL`, and returns its JSON results by scenario name.
    static func runBench(_ arguments: [String]) throws -> (status: Int32, output: String, results: [String: [String: Any]]) {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-bench-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let (status, stdout, stderr) = try TestProgram.run(OcdBenchProgram.path!, ["--store", PostgreSQLTestServer.url!, "--json", json.path] + arguments,
                                                            seconds: 600)
        let objects = (try? JSONSerialization.jsonObject(with: Data(contentsOf: json))) as? [[String: Any]] ?? []
        let results = Dictionary(objects.compactMap { object in (object["scenario"] as? String).map { ($0, object) } },
                                 uniquingKeysWith: { first, _ in first })
        return (status, stdout + stderr, results)
    }

    @Test func everyContextScenarioRunsWithOursAndRawDoingTheSameWork() throws {
        let (status, output, results) = try Self.runBench(["--quick", "--scenario", "pg-", "--rows", "400", "--processes", "1"])
        #expect(status == 0, "\(output)")
        let expected = ["pg-insert-save", "pg-fetch-all", "pg-fetch-predicate-sort", "pg-load-batch-by-id", "pg-count-predicate",
                        "pg-update-per-object", "pg-frc-fetch", "pg-frc-batch-on-access", "pg-feed-latency",
                        "pg-batch-update-count", "pg-batch-update-ids", "pg-batch-delete", "pg-async-fetch-all",
                        "pg-fetch-residual"]
        #expect(Set(results.keys) == Set(expected), "\(output)")
        for name in expected where name != "pg-feed-latency" {
            #expect(results[name]?["status"] as? String == "ok", "\(name): \(output)")
            #expect(results[name]?["raw_median_s"] is Double, "\(name) has a raw side: \(output)")
        }
    }

    @Test func feedLatencyHearsEveryOtherProcessSave() throws {
        let (status, output, results) = try Self.runBench(["--quick", "--scenario", "pg-feed-latency", "--rows", "300"])
        #expect(status == 0, "\(output)")
        let feed = try #require(results["pg-feed-latency"], "\(output)")
        #expect(feed["status"] as? String == "ok", "\(output)")
        // Both runs (memory and timed) hear 200 saves each; the timed ones are the figure's samples.
        #expect(feed["feed_latency_ms_samples"] as? Int == 200, "\(output)")
    }

    /// Processes incrementing shared counters through contexts: every conflict caught and retried, so the
    /// counters' sum is the number of increments (the bench exits non-zero otherwise).
    @Test func contendedUpdatesAcrossProcessesLoseNothing() throws {
        let (status, output, _) = try Self.runBench(["--scenario", "pg-contended-update", "--rows", "240", "--processes", "1,3"])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("1 ") || $0.hasPrefix("3 ") }
        #expect(lines.count == 4 && lines.allSatisfy { $0.hasSuffix("ok") }, "\(output)")
    }

    @Test func commaSeparatedScenarioTextsSelectEachMatchingScenario() throws {
        let (status, output, results) = try Self.runBench(["--quick", "--scenario", "pg-frc-fetch, pg-count-predicate", "--rows", "200"])
        #expect(status == 0, "\(output)")
        #expect(Set(results.keys) == ["pg-frc-fetch", "pg-count-predicate"], "\(output)")
    }

    @Test func anUnknownScenarioNameIsRefusedWithTheListOfNames() throws {
        let (status, stdout, stderr) = try TestProgram.run(OcdBenchProgram.path!, ["--store", PostgreSQLTestServer.url!, "--scenario", "no-such-thing"])
        #expect(status == 64)
        #expect(stderr.contains("pg-feed-latency") && stderr.contains("pg-multi-writer") && stderr.contains("pg-contended-update"),
                "\(stdout)\(stderr)")
    }
}

/// The built `ocd-bench` (.build/debug/ocd-bench of this package).
enum OcdBenchProgram {
    /// Its path, nil when it is not built.
    static var path: String? {
        let path = TestProgram.packageRoot.appendingPathComponent(".build/debug/ocd-bench").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
}
