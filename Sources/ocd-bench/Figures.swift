import Foundation
import Synchronization

// Scenario-specific figures: latencies, bytes per row, memory above baseline. A scenario records samples
// while it runs (from any thread); after all runs each figure is summarized (median or p99) and checked
// against its own target. They appear as extra JSON keys and as lines under the scenario in the table.

/// How the samples of one figure are summarized.
enum FigureSummary: String, Sendable {
    case median
    /// The 99th percentile, nearest rank (with fewer than 100 samples: the largest or next-to-largest).
    case p99
    /// The largest sample.
    case max
}

/// What one figure means: its JSON key, how it is summarized, and its target (an upper bound), if any.
struct FigureSpec: Sendable {
    var key: String
    var summary: FigureSummary
    var target: Double?
    var unit: String
    /// The runs whose samples count: latencies come from timed runs, memory from the memory run.
    var measuredIn: RunKind

    init(_ key: String, _ summary: FigureSummary = .median, target: Double? = nil, unit: String = "ms",
         measuredIn: RunKind = .timed) {
        self.key = key
        self.summary = summary
        self.target = target
        self.unit = unit
        self.measuredIn = measuredIn
    }
}

/// A figure after the runs.
struct FigureResult: Sendable {
    var spec: FigureSpec
    var value: Double?
    var samples: Int
    var meetsTarget: Bool? {
        guard let target = spec.target, let value else { return nil }
        return value <= target
    }

    var line: String {
        let valueText = value.map { String(format: $0 < 10 ? "%.3f" : "%.1f", $0) } ?? "-"
        var text = "\(spec.key) = \(valueText) \(spec.unit) (\(spec.summary.rawValue) of \(samples))"
        if let target = spec.target {
            text += String(format: ", target ≤ %g %@: ", target, spec.unit) + ((meetsTarget ?? false) ? "ok" : "MISSES TARGET")
        }
        return text
    }
}

/// Samples recorded by one scenario at one size, across all its runs. Thread-safe.
final class Figures: Sendable {
    let specs: [FigureSpec]
    private let samples = Mutex<[String: [Double]]>([:])

    init(_ specs: [FigureSpec]) { self.specs = specs }

    /// Keeps a sample if the run in progress is of the kind the figure is measured in.
    func record(_ key: String, _ value: Double) {
        if let spec = specs.first(where: { $0.key == key }), spec.measuredIn != RunKind.current { return }
        samples.withLock { $0[key, default: []].append(value) }
    }

    /// Records milliseconds between two `monotonicSeconds()` readings.
    func recordMilliseconds(_ key: String, from start: Double, to end: Double) {
        record(key, (end - start) * 1000)
    }

    func results() -> [FigureResult] {
        let all = samples.withLock { $0 }
        return specs.map { spec in
            let values = all[spec.key] ?? []
            return FigureResult(spec: spec, value: Self.summarize(values, spec.summary), samples: values.count)
        }
    }

    static func summarize(_ values: [Double], _ summary: FigureSummary) -> Double? {
        guard !values.isEmpty else { return nil }
        switch summary {
        case .median: return median(values)
        case .max: return values.max()
        case .p99:
            let sorted = values.sorted()
            let rank = Int((0.99 * Double(sorted.count)).rounded(.up))
            return sorted[max(0, min(sorted.count - 1, rank - 1))]
        }
    }
}

/// Blocks the calling thread until `signal()` (a one-shot latch for completions on other queues).
final class Latch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func signal() { semaphore.signal() }
    /// Waits at most `seconds`; throws when it runs out (a hung scenario fails instead of hanging the run).
    func wait(seconds: Double = 600, what: String) throws {
        if semaphore.wait(timeout: .now() + seconds) == .timedOut {
            throw LatchTimeout(what: what, seconds: seconds)
        }
    }
}

struct LatchTimeout: Error, CustomStringConvertible {
    var what: String
    var seconds: Double
    var description: String { "timed out after \(Int(seconds)) s waiting for \(what)" }
}

/// A value handed across threads when the caller knows the hand-off is safe (one writer, then readers
/// after a latch).
final class Shared<Value>: @unchecked Sendable {
    // @unchecked Sendable: guarded by `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
    func update<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&stored) } }
}
