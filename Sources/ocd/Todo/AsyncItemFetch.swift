import Foundation
import OpenCoreData

/// Seed 000: an asynchronous fetch of every item, sorted by creation date, showing "Fetched N records"
/// as rows arrive (Linux has no KVO, so the request's `progressHandler` stands in for observing
/// `progress.completedUnitCount`), and cancelled cleanly by Ctrl-C.
enum AsyncItemFetch {
    enum Outcome: Sendable {
        case fetched(count: Int, seconds: Double, firstNames: [String])
        case cancelled(afterRows: Int64)
    }

    static func run(_ store: OpenedStore, expected: Int) async throws -> Outcome {
        let context = store.newContext()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "createdAt", ascending: true)]
        let started = Date()
        let latest = LatestCount()
        let interrupt = InterruptHandler()
        defer { interrupt.stop() }

        let outcome: Outcome = try await withCheckedThrowingContinuation { continuation in
            let asynchronous = AsynchronousFetchRequest(fetchRequest: request) { result in
                // On the context's queue: only plain values leave it.
                if let items = result.finalResult {
                    let names = items.prefix(3).compactMap { try? $0.value(forKey: "name") as? String }
                    continuation.resume(returning: .fetched(count: items.count, seconds: Date().timeIntervalSince(started),
                                                            firstNames: names))
                } else if let error = result.operationError, !isCancellation(error) {
                    continuation.resume(throwing: OCDError("the asynchronous fetch failed: \(error)"))
                } else {
                    continuation.resume(returning: .cancelled(afterRows: latest.value))
                }
            }
            asynchronous.estimatedResultCount = expected
            // A terminal line is redrawn in place, so report often; plain output gets about ten lines.
            asynchronous.progressInterval = Console.stdoutIsTerminal ? 500 : max(500, expected / 10)
            asynchronous.progressHandler = { count in
                // The last rows are reported more than once (read, then registered); print each count once.
                guard latest.advance(to: count) else { return }
                if Console.stdoutIsTerminal {
                    Console.raw("\r  Fetched \(count) records")
                } else {
                    Console.line("  Fetched \(count) records")
                }
            }
            context.perform {
                do {
                    let result = try context.execute(asynchronous)
                    interrupt.start {
                        result.cancel()
                        if Console.stdoutIsTerminal { Console.raw("\n") }
                        Console.line("cancelled")
                    }
                } catch {
                    continuation.resume(throwing: OCDError("cannot start the asynchronous fetch: \(error)"))
                }
            }
        }
        if Console.stdoutIsTerminal, case .fetched = outcome { Console.line() }
        return outcome
    }

    private static func isCancellation(_ error: Error) -> Bool {
        if case ObjectGraphError.cancelled = error { return true }
        return "\(error)".contains("cancelled") || "\(error)".contains("interrupted")
    }
}

/// The last progress count, written by the progress handler's thread and read by the completion.
final class LatestCount: @unchecked Sendable {
    // @unchecked Sendable: guarded by `lock`.
    private let lock = NSLock()
    private var stored: Int64 = 0
    var value: Int64 { lock.withLock { stored } }

    /// Records `count` if it is higher than the last one; returns whether it was.
    func advance(to count: Int64) -> Bool {
        lock.withLock {
            guard count > stored else { return false }
            stored = count
            return true
        }
    }
}
