import ArgumentParser
import Foundation
import OpenCoreDataPostgreSQL
#if canImport(Glibc)
import Glibc
#endif

// The command line: options, their checks, and the loop over scenarios and sizes.

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ocd-bench",
        abstract: "Runs OpenCoreData's benchmark scenarios against raw SQLite and GRDB's record layer doing the same work.",
        discussion: """
            Each scenario runs through OpenCoreData ("ours") and through SQLite's C API with prepared \
            statements ("raw") and through GRDB's record layer as its guide writes it ("peer"), \
            interleaved, several times; ours/raw medians are compared against the scenario's target ratio, \
            and ours/peer is reported beside it. Stores are files in WAL mode with synchronous = NORMAL on every side.
            """)

    static let fullSizes = [10_000, 100_000, 1_000_000]
    static let quickSize = 2_000

    @Option(name: .long, help: "Write the results as JSON to this file.")
    var json: String?

    @Option(name: .long, help: "Run only the scenarios whose name contains this text (several texts: separated by commas).")
    var scenario: String?

    @Option(name: .long, help: "Run every scenario at this one size (rows).")
    var rows: Int?

    @Option(name: .long, help: "Comma-separated sizes, e.g. 10000,100000 (default: 10000,100000,1000000).")
    var sizes: String?

    @Option(name: .customLong("repeat"), help: "Timed runs per side, after each side's untimed memory run (default: 5, 3 at 1,000,000 rows or more, and more for short runs, up to 15 or about 2 s of timed work; 1 with --quick).")
    var repetitions: Int?

    @Flag(name: .long, help: "A small smoke run (2,000 rows, one run per side): checks it works, not how fast.")
    var quick = false

    @Option(name: .long, help: "Where store files go (default: a new folder in the temporary directory).")
    var workDirectory: String?

    @Flag(name: .long, help: "Also print the results as a Markdown table.")
    var markdown = false

    @Option(name: .long, help: "A postgresql:// URL: run the PostgreSQL scenarios (the pg-… context scenarios, pg-feed-latency, pg-multi-writer, pg-contended-update) against that server instead of the SQLite ones.")
    var store: String?

    @Option(name: .long, help: "With --store: the process counts of pg-multi-writer and pg-contended-update (default: 1,2,4,8).")
    var processes: String?

    // A copy of the bench started by pg-multi-writer as one of its writers (PostgreSQLWriterWorker).
    @Option(name: .long, help: .hidden) var worker: String?
    @Option(name: .long, help: .hidden) var workerSchema: String?
    @Option(name: .long, help: .hidden) var workerBatch = 1_000
    @Option(name: .long, help: .hidden) var workerIndex = 0
    @Option(name: .long, help: .hidden) var workerBarrier: String?
    // With --worker: a process of pg-contended-update (PostgreSQLContendedWorker) rather than of pg-multi-writer.
    @Flag(name: .long, help: .hidden) var workerContended = false
    // A copy of the bench started by pg-feed-latency as its writing instance (PostgreSQLFeedWriter).
    @Flag(name: .long, help: .hidden) var feedWriter = false

    /// The sizes to run, after the checks in `validate()`.
    func resolvedSizes() throws -> [Int] {
        if let rows { return [rows] }
        if let sizes { return try Self.parseSizes(sizes) }
        return quick ? [Self.quickSize] : (store == nil ? Self.fullSizes : Self.postgreSQLSizes)
    }

    /// The default sizes on a server: every row crosses the network, and pg-insert-save sends one INSERT per row.
    static let postgreSQLSizes = [10_000, 100_000]

    /// With `--store`: the context scenarios to run (`--scenario` filters them as on SQLite).
    func selectedPostgreSQLScenarios() -> [PostgreSQLScenario] {
        PostgreSQLScenarios.all.filter { isSelected($0.name) }
    }

    /// With `--store`: whether pg-multi-writer is selected.
    var runsMultiWriter: Bool {
        isSelected(PostgreSQLScenarios.multiWriterName)
    }

    /// Whether `--scenario` selects the scenario `name`: no filter, or one of its comma-separated texts in the name.
    func isSelected(_ name: String) -> Bool {
        guard let scenario, !scenario.isEmpty else { return true }
        return scenario.split(separator: ",").contains { text in
            let text = text.trimmingCharacters(in: .whitespaces)
            return !text.isEmpty && name.localizedCaseInsensitiveContains(text)
        }
    }

    /// With `--store`: whether pg-contended-update is selected.
    var runsContendedUpdate: Bool {
        isSelected(PostgreSQLContendedUpdate.name)
    }

    static func parseSizes(_ text: String) throws -> [Int] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "") }
        guard !parts.isEmpty else { throw ValidationError("--sizes needs at least one size") }
        return try parts.map { part in
            guard let value = Int(part), value > 0 else {
                throw ValidationError("--sizes: '\(part)' is not a positive whole number of rows")
            }
            return value
        }
    }

    func repetitions(for size: Int) -> Int {
        if let repetitions { return repetitions }
        if quick { return 1 }
        return size >= 1_000_000 ? 3 : 5
    }

    /// Most timed runs per side when runs are short and `--repeat` is not given: a run of a few milliseconds
    /// swings with the machine more than a long one, so it gets more samples for its median.
    static let shortRunRepetitionLimit = 15
    /// Timed work (both sides) under which a scenario keeps adding runs, up to the limit above.
    static let shortRunBudgetSeconds = 2.0

    /// Whether another run of each side is worth it after `done` runs that took `seconds` in all.
    func wantsAnotherRun(after done: Int, seconds: Double, size: Int) -> Bool {
        if done < repetitions(for: size) { return true }
        guard repetitions == nil, !quick else { return false }
        return done < Self.shortRunRepetitionLimit && seconds < Self.shortRunBudgetSeconds
    }

    func selectedScenarios() -> [Scenario] {
        Scenarios.all.filter { isSelected($0.name) }
    }

    /// The writer process counts of pg-multi-writer.
    func resolvedProcessCounts() throws -> [Int] {
        guard let processes else { return [1, 2, 4, 8] }
        return try processes.split(separator: ",").map { part in
            guard let count = Int(part.trimmingCharacters(in: .whitespaces)), (1...64).contains(count) else {
                throw ValidationError("--processes: '\(part)' is not a process count from 1 to 64")
            }
            return count
        }
    }

    func validate() throws {
        if feedWriter {
            guard store != nil, workerSchema != nil, rows != nil, workerBarrier != nil else {
                throw ValidationError("--feed-writer is ocd-bench's own (pg-feed-latency starts its writer with it)")
            }
            return
        }
        if let worker {
            guard PostgreSQLWriterWorker.Side(rawValue: worker) != nil, store != nil, workerSchema != nil, rows != nil,
                  workerBarrier != nil else {
                throw ValidationError("--worker is ocd-bench's own (pg-multi-writer starts its writers with it)")
            }
            return
        }
        if let store {
            guard store.lowercased().hasPrefix("postgresql://") || store.lowercased().hasPrefix("postgres://") else {
                throw ValidationError("--store takes a postgresql:// URL")
            }
            _ = try resolvedProcessCounts()
        }
        if let rows, rows <= 0 { throw ValidationError("--rows must be a positive number of rows, not \(rows)") }
        if rows != nil && sizes != nil { throw ValidationError("use either --rows or --sizes, not both") }
        if let sizes { _ = try Self.parseSizes(sizes) }
        if let repetitions, repetitions <= 0 {
            throw ValidationError("--repeat must be at least 1, not \(repetitions)")
        }
        if let json, json.isEmpty { throw ValidationError("--json needs a file path") }
        if store != nil {
            if selectedPostgreSQLScenarios().isEmpty && !runsMultiWriter && !runsContendedUpdate {
                throw ValidationError("no PostgreSQL scenario name contains '\(scenario ?? "")'; they are: \(PostgreSQLScenarios.names.joined(separator: ", "))")
            }
        } else if selectedScenarios().isEmpty {
            let names = Scenarios.all.map(\.name).joined(separator: ", ")
            throw ValidationError("no scenario name contains '\(scenario ?? "")'; the scenarios are: \(names)")
        }
    }

    func run() throws {
        if let worker, let side = PostgreSQLWriterWorker.Side(rawValue: worker), let store, let workerSchema, let rows,
           let workerBarrier {
            if workerContended {
                return try PostgreSQLContendedWorker(side: side, url: store, schema: workerSchema, increments: rows, worker: workerIndex,
                                                     barrier: URL(fileURLWithPath: workerBarrier)).run()
            }
            return try PostgreSQLWriterWorker(side: side, url: store, schema: workerSchema, rows: rows, batch: workerBatch,
                                              writer: workerIndex, barrier: URL(fileURLWithPath: workerBarrier)).run()
        }
        if feedWriter, let store, let workerSchema, let rows, let workerBarrier {
            return try PostgreSQLFeedWriter(url: store, schema: workerSchema, saves: rows,
                                            barrier: URL(fileURLWithPath: workerBarrier)).run()
        }
        if let store {
            return try runPostgreSQL(url: store)
        }
        let sizes = try resolvedSizes()
        let scenarios = selectedScenarios()
        let ownsDirectory = workDirectory == nil
        let directory = workDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("ocd-bench-\(UUID().uuidString)")
        let fixtures = try Fixtures(directory: directory)
        defer {
            fixtures.removeScratch()
            if ownsDirectory { try? FileManager.default.removeItem(at: directory) }
        }

        print("ocd-bench: \(scenarios.count) scenario(s) × sizes \(sizes.map(ScenarioResult.grouped).joined(separator: ", "))\(quick ? " (quick smoke run)" : "")")
        print("stores in \(directory.path); WAL, synchronous = NORMAL on every side; peak MB = RSS growth in each side's memory run (heap trimmed first; its time not counted)")
        print("")
        print(ScenarioResult.header)

        var results: [ScenarioResult] = []
        for size in sizes {
            for scenario in scenarios {
                let result = runScenario(scenario, size: size, fixtures: fixtures)
                printResult(result)
                results.append(result)
            }
        }
        try report(results)
    }

    /// Prints one result's line, with its note and figures under it.
    func printResult(_ result: ScenarioResult) {
        print(result.line)
        if let note = result.note, result.status == .ok { print("    note: \(note)") }
        if let missing = result.peerMissing, result.status == .ok { print("    no peer: \(missing)") }
        if result.status == .ok {
            for figure in result.allFigures { print("    \(figure.line)") }
        }
        // Show each line at once even when the output goes to a file (fflush(NULL): every stream).
        fflush(nil)
    }

    /// The Markdown table and JSON file when asked for.
    ///
    /// - Throws: ``BenchFailure`` when a scenario failed; the file system's error when the JSON cannot be written.
    func report(_ results: [ScenarioResult]) throws {
        if markdown {
            print("")
            print(Report.markdown(results))
        }
        if let json {
            try Report.writeJSON(results, to: json)
            print("")
            print("wrote \(json)")
        }
        let failures = results.filter { $0.status == .failed }
        if !failures.isEmpty {
            throw BenchFailure(count: failures.count)
        }
    }

    /// The sides of a scenario's run, in the order the first repetition runs them.
    enum Side: CaseIterable {
        case ours, raw, peer
    }

    /// The PostgreSQL scenarios against the server at `url`: the selected context scenarios at each size, each
    /// in schemas of its own dropped afterwards, then pg-multi-writer when selected.
    ///
    /// - Throws: ``BenchFailure`` when a scenario failed; pg-multi-writer's errors.
    func runPostgreSQL(url: String) throws {
        let scenarios = selectedPostgreSQLScenarios()
        var results: [ScenarioResult] = []
        if !scenarios.isEmpty {
            let sizes = try resolvedSizes()
            let model = try BenchModel.make()
            print("ocd-bench: \(scenarios.count) PostgreSQL scenario(s) × sizes \(sizes.map(ScenarioResult.grouped).joined(separator: ", "))\(quick ? " (quick smoke run)" : "")")
            let server = try PostgreSQLStoreConfiguration(url: url).redactedURL
            print("server \(server); each scenario in schemas of its own, dropped after it; raw = postgres-nio alone, the same statements")
            print("")
            print(ScenarioResult.header)
            for size in sizes {
                for scenario in scenarios {
                    var fixtures: PostgreSQLFixtures?
                    let result = runScenario(name: scenario.name, targetRatio: scenario.targetRatio, size: size,
                                             peerMissing: "GRDB is SQLite's: no peer on a server") {
                        let made = try PostgreSQLFixtures(url: url, model: model)
                        fixtures = made
                        return try scenario.make(size, made)
                    } afterEachRun: {}
                    fixtures?.dropAll()
                    printResult(result)
                    results.append(result)
                }
            }
        }
        if runsMultiWriter {
            if !scenarios.isEmpty { print("") }
            try PostgreSQLMultiWriter(url: url, objects: rows ?? (quick ? Self.quickSize : 100_000),
                                      processCounts: try resolvedProcessCounts()).run()
        }
        if runsContendedUpdate {
            if !scenarios.isEmpty || runsMultiWriter { print("") }
            try PostgreSQLContendedUpdate(url: url, increments: rows ?? (quick ? 400 : 4_000),
                                          processCounts: try resolvedProcessCounts()).run()
        }
        try report(results)
    }

    /// Runs one scenario at one size: ours, raw and the peer interleaved (rotating which goes first).
    func runScenario(_ scenario: Scenario, size: Int, fixtures: Fixtures) -> ScenarioResult {
        var result = runScenario(name: scenario.name, targetRatio: scenario.targetRatio, size: size,
                                 peerMissing: PeerBaselines.missing[scenario.name] ?? "no peer side",
                                 make: { try scenario.make(size, fixtures) },
                                 afterEachRun: { fixtures.removeScratch() })
        result.peakMemoryTargetMB = scenario.peakMemoryTargetMB
        return result
    }

    /// Runs a scenario `make` sets up, at one size: ours, raw and the peer interleaved (rotating which goes
    /// first); `afterEachRun` clears what one run of a side left behind.
    func runScenario(name: String, targetRatio: Double?, size: Int, peerMissing: String,
                     make: () throws -> ScenarioRun, afterEachRun: () -> Void) -> ScenarioResult {
        var result = ScenarioResult(scenario: name, size: size, rows: size, targetRatio: targetRatio, status: .ok)
        do {
            let run = try make()
            result.rows = run.rows
            result.note = run.note
            result.perRunDivisor = run.perRunDivisor
            if run.peer == nil { result.peerMissing = peerMissing }
            let bodies: [(Side, PreparedRun)] = [(.ours, run.ours)] + (run.raw.map { [(.raw, $0)] } ?? [])
                + (run.peer.map { [(.peer, $0)] } ?? [])
            // One run of one side; scratch files go afterwards, whatever happened.
            func runSide(_ kind: RunKind, _ body: PreparedRun) throws -> RunSample {
                defer { afterEachRun() }
                return try measure(kind, body)
            }
            func checkSameWork(_ checksums: [(Side, Int)]) throws {
                guard let (_, expected) = checksums.first else { return }
                if let (side, other) = checksums.first(where: { $0.1 != expected }) {
                    throw ChecksumMismatch(ours: expected, other: other, side: side)
                }
            }
            // Each side's memory run first (see `RunKind`): its peak is the figure, its time is not counted.
            var memoryChecksums: [(Side, Int)] = []
            for (side, body) in bodies {
                let sample = try runSide(.memory, body)
                switch side {
                case .ours: result.oursPeakBytes = sample.peakBytes
                case .raw: result.rawPeakBytes = sample.peakBytes
                case .peer: result.peerPeakBytes = sample.peakBytes
                }
                memoryChecksums.append((side, sample.checksum))
            }
            try checkSameWork(memoryChecksums)
            var repetition = 0
            var timedSeconds = 0.0
            while wantsAnotherRun(after: repetition, seconds: timedSeconds, size: size) {
                defer { repetition += 1 }
                // Rotate the order, so no side always runs first (or right after another's writes).
                let shift = repetition % bodies.count
                var checksums: [(Side, Int)] = []
                for (side, body) in bodies[shift...] + bodies[..<shift] {
                    let sample = try runSide(.timed, body)
                    timedSeconds += sample.seconds
                    switch side {
                    case .ours: result.oursSeconds.append(sample.seconds)
                    case .raw: result.rawSeconds.append(sample.seconds)
                    case .peer: result.peerSeconds.append(sample.seconds)
                    }
                    checksums.append((side, sample.checksum))
                }
                checksums.sort { Side.allCases.firstIndex(of: $0.0)! < Side.allCases.firstIndex(of: $1.0)! }
                try checkSameWork(checksums)
            }
            result.figures = run.figures?.results() ?? []
        } catch let skipped as ScenarioSkipped {
            result.status = .skipped
            result.message = skipped.reason
            result.oursSeconds = []
            result.rawSeconds = []
            result.peerSeconds = []
        } catch {
            result.status = .failed
            result.message = "\(error)"
        }
        return result
    }
}

struct ChecksumMismatch: Error, CustomStringConvertible {
    var ours: Int
    var other: Int
    var side: BenchCommand.Side
    var description: String { "ours and \(side) did different work (checksum \(ours) vs \(other))" }
}

struct BenchFailure: Error, CustomStringConvertible {
    var count: Int
    var description: String { "\(count) scenario run(s) failed" }
}
