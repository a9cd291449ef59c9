import Foundation
import OpenCoreData

/// Seed 001's statistics summary: each figure is fetched by its own ``ContextOperation`` on a private
/// context, the operations run concurrently on an `OperationQueue`, and each reports on the main queue,
/// so its line appears as soon as its operation finishes (in finishing order, not listing order).
///
/// The figures are computed by SQLite, as the seed's were by Core Data: dictionary fetches whose columns
/// are ``ExpressionDescription``s (`sum:(duration)`, `average:(duration)`, `max:(duration)`), and a
/// `count:` grouped by `kind` (`propertiesToGroupBy`); no session is loaded into memory.
enum StatisticsSummary {
    /// One line of the summary: a label and the work that computes its text.
    struct Figure: Sendable {
        let label: String
        let compute: @Sendable (ManagedObjectContext) throws -> String
    }

    static let figures: [Figure] = [
        Figure(label: "Sessions") { context in
            "\(try context.count(for: FetchRequest<ManagedObject>(entityName: "Session")))"
        },
        Figure(label: "Total time") { context in
            format(minutes: try aggregate("sum:(duration)", context) / 60)
        },
        Figure(label: "Average session") { context in
            format(minutes: try aggregate("average:(duration)", context) / 60)
        },
        Figure(label: "Longest session") { context in
            format(minutes: try aggregate("max:(duration)", context) / 60)
        },
        Figure(label: "Yoga sessions") { context in "\(try sessionCountsByKind(context)["yoga"] ?? 0)" },
        Figure(label: "Meditation sessions") { context in "\(try sessionCountsByKind(context)["meditation"] ?? 0)" },
        Figure(label: "To-dos done") { context in
            let all = try context.count(for: FetchRequest<ManagedObject>(entityName: "Item"))
            return "\(all - (try MarkAllRead.unreadCount(context))) of \(all)"
        },
    ]

    /// Runs every figure's operation and prints each line as it completes; returns when all have.
    static func run(_ store: OpenedStore, indent: String = "  ") async {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2   // the seeds' machines, and our CI, have two cores
        let started = Date()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Countdown(figures.count) { continuation.resume() }
            for (index, figure) in figures.enumerated() {
                let operation = ContextOperation(coordinator: store.coordinator, work: { context in
                    ["text": try figure.compute(context)]
                }, completion: { _, result in
                    // On the main queue, as the seed's delegate is called.
                    let elapsed = String(format: "%.2fs", Date().timeIntervalSince(started))
                    switch result {
                    case .success(let values):
                        Console.line("\(indent)\(figure.label): \(values["text"] as? String ?? "?")  (after \(elapsed))")
                    case .failure(let error):
                        Console.line("\(indent)\(figure.label): failed: \(error)")
                    }
                    remaining.tick()
                })
                operation.identifier = index
                queue.addOperation(operation)
            }
        }
    }

    /// One aggregate over every session's row, computed in SQL (0 when there are no sessions).
    private static func aggregate(_ format: String, _ context: ManagedObjectContext) throws -> Double {
        let request = FetchRequest<[String: Any]>(dictionariesOf: "Session")
        request.propertiesToFetch = [ExpressionDescription(name: "value", expression: try QueryExpression(format: format),
                                                           resultType: .double)]
        let rows = try context.fetch(request)
        return rows.first.flatMap { $0["value"] as? Double } ?? 0
    }

    /// Sessions per kind: `SELECT kind, COUNT(kind) … GROUP BY kind`, as one dictionary per kind.
    private static func sessionCountsByKind(_ context: ManagedObjectContext) throws -> [String: Int64] {
        let request = FetchRequest<[String: Any]>(dictionariesOf: "Session")
        request.propertiesToFetch = ["kind", ExpressionDescription(name: "sessions", expression: try QueryExpression(format: "count:(kind)"),
                                                                   resultType: .integer64)]
        request.propertiesToGroupBy = ["kind"]
        request.sortDescriptors = [QuerySortDescriptor(key: "kind")]
        var counts: [String: Int64] = [:]
        for row in try context.fetch(request) {
            guard let kind = row["kind"] as? String else { continue }
            counts[kind] = row["sessions"] as? Int64 ?? 0
        }
        return counts
    }

    private static func format(minutes: Double) -> String {
        minutes >= 120 ? String(format: "%.1f hours", minutes / 60) : String(format: "%.1f minutes", minutes)
    }
}

/// Calls `done` once after `tick()` has been called `count` times, from any thread.
final class Countdown: @unchecked Sendable {
    // @unchecked Sendable: `left` is guarded by `lock`.
    private let lock = NSLock()
    private var left: Int
    private let done: @Sendable () -> Void

    init(_ count: Int, done: @escaping @Sendable () -> Void) {
        left = count
        self.done = done
        if count == 0 { done() }
    }

    func tick() {
        let finished = lock.withLock { () -> Bool in
            left -= 1
            return left == 0
        }
        if finished { done() }
    }
}
