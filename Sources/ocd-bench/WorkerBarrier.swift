import Foundation

/// The start barrier of a scenario run by several worker processes: each worker says it is ready in a folder
/// (`ready-<index>`) once connected and then waits for `go`, so setting up is never timed and every process
/// starts working together. The parent starts the workers, says go once all are ready, and collects what
/// each one printed.
struct WorkerBarrier {
    /// The folder the workers and the parent meet in, removed by ``remove()``.
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-bench-workers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    /// Starts `count` copies of this program with `arguments(index)` plus `--worker-index` and
    /// `--worker-barrier`.
    ///
    /// - Throws: ``BenchWorkerFailure`` when a worker cannot be started.
    func start(count: Int, arguments: (Int) -> [String]) throws -> [WorkerProcess] {
        try (0..<count).map { index in
            try WorkerProcess.start(arguments(index) + ["--worker-index", String(index), "--worker-barrier", folder.path],
                                    output: folder.appendingPathComponent("worker-\(index).txt"))
        }
    }

    /// Waits until every worker has said it is ready, one has ended, or `seconds` have passed.
    func waitUntilReady(_ workers: [WorkerProcess], seconds: Double = 600) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while workers.indices.contains(where: { !FileManager.default.fileExists(atPath: folder.appendingPathComponent("ready-\($0)").path) }),
              Date() < deadline, workers.allSatisfy({ $0.isRunning }) {
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Tells every waiting worker to start.
    ///
    /// - Throws: the file system's error when the folder cannot be written.
    func go() throws { try Data().write(to: folder.appendingPathComponent("go")) }

    /// Starts `count` workers (``start(count:arguments:)``), says go once all are ready, and waits for them all.
    ///
    /// Once one worker has failed, the others get `grace` seconds to end by themselves (a server restart fails
    /// them all, but one stuck on a dead connection would keep the run waiting for ever); then they are killed
    /// and reported as such.
    ///
    /// - Returns: each worker's exit status and standard output, by index.
    /// - Throws: ``BenchWorkerFailure`` when a worker cannot be started.
    func run(count: Int, grace: Double = 30, arguments: (Int) -> [String]) throws -> [(status: Int32, output: String)] {
        let workers = try start(count: count, arguments: arguments)
        waitUntilReady(workers)
        try go()
        var results: [(status: Int32, output: String)?] = Array(repeating: nil, count: workers.count)
        var killAt: Date?
        while results.contains(where: { $0 == nil }) {
            for (index, worker) in workers.enumerated() where results[index] == nil {
                guard let result = worker.poll() else { continue }
                results[index] = result
                if result.status != 0, killAt == nil { killAt = Date(timeIntervalSinceNow: grace) }
            }
            if let deadline = killAt, Date() >= deadline {
                for (index, worker) in workers.enumerated() where results[index] == nil {
                    worker.kill()
                    let ended = worker.wait()
                    results[index] = (ended.status, ended.output + " (killed: still running \(Int(grace)) s after another worker failed)")
                }
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return results.map { $0! }
    }

    /// What the workers of a multi-process scenario printed, one line each: `done conflicts start end`
    /// (start and end in seconds since 1970).
    ///
    /// - Returns: the conflicts of all workers and the span from the first start to the last end.
    /// - Throws: ``BenchWorkerFailure`` naming every worker that failed or printed something else.
    static func summary(of outputs: [(status: Int32, output: String)]) throws -> (conflicts: Int, seconds: Double) {
        var conflicts = 0, starts: [Double] = [], ends: [Double] = [], failures: [String] = []
        for (index, (status, output)) in outputs.enumerated() {
            let fields = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
            guard status == 0, fields.count == 4 else {
                failures.append("worker \(index) exited \(status): \(output.trimmingCharacters(in: .whitespacesAndNewlines))")
                continue
            }
            conflicts += Int(fields[1])
            starts.append(fields[2])
            ends.append(fields[3])
        }
        guard failures.isEmpty else { throw BenchWorkerFailure(description: failures.joined(separator: "; ")) }
        return (conflicts, (ends.max() ?? 0) - (starts.min() ?? 0))
    }

    /// The worker's side: says `index` is ready in `folder` and waits for go.
    ///
    /// - Returns: the time it was told to start, in seconds since 1970 (so the parent can line up the
    ///   processes' clocks).
    /// - Throws: ``BenchWorkerFailure`` when no go comes within ten minutes; the file system's error when the
    ///   folder cannot be written.
    static func waitForStart(in folder: URL, index: Int) throws -> Double {
        try Data().write(to: folder.appendingPathComponent("ready-\(index)"))
        let go = folder.appendingPathComponent("go").path
        let deadline = Date(timeIntervalSinceNow: 600)
        while !FileManager.default.fileExists(atPath: go) {
            guard Date() < deadline else { throw BenchWorkerFailure(description: "worker \(index) was never told to start") }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return Date().timeIntervalSince1970
    }
}
