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
    /// `--worker-barrier`, says go once all are ready (or one has ended, or ten minutes have passed), and
    /// waits for them all.
    ///
    /// - Returns: each worker's exit status and standard output, by index.
    /// - Throws: ``BenchWorkerFailure`` when a worker cannot be started.
    func run(count: Int, arguments: (Int) -> [String]) throws -> [(status: Int32, output: String)] {
        let workers = try (0..<count).map { index in
            try WorkerProcess.start(arguments(index) + ["--worker-index", String(index), "--worker-barrier", folder.path],
                                    output: folder.appendingPathComponent("worker-\(index).txt"))
        }
        let deadline = Date(timeIntervalSinceNow: 600)
        while (0..<count).contains(where: { !FileManager.default.fileExists(atPath: folder.appendingPathComponent("ready-\($0)").path) }),
              Date() < deadline, workers.allSatisfy({ $0.isRunning }) {
            Thread.sleep(forTimeInterval: 0.005)
        }
        try Data().write(to: folder.appendingPathComponent("go"))
        return workers.map { $0.wait() }
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
