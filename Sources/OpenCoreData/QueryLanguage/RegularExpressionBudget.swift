import Foundation
import Synchronization

/// The time the `MATCHES` comparisons of one query may still spend in the regular-expression engine, and the
/// fetch's cancellation, which a long match checks too.
///
/// A store query installs one for the statement it steps (``withCurrent(_:)``), so every row's match
/// draws on the same ``QueryLanguageLimits/regularExpressionTimeLimit``; an evaluation outside a query gets
/// a budget of its own per match. SQLite cannot interrupt a function call from its progress handler, so the
/// match itself watches the budget through ICU's progress callback.
final class RegularExpressionBudget: Sendable {
    /// The budget of the query running on this thread, if any.
    @TaskLocal static var current: RegularExpressionBudget?

    private let cancellation: CancellationFlag?
    private let state = Mutex<State>(State())

    private struct State {
        var spent: Duration = .zero
        /// The first error a match gave inside SQLite, where only a message gets through: the store throws
        /// this instead (a typed error naming the limit, or `ObjectGraphError.cancelled`).
        var failure: (any Error)?
    }

    init(cancellation: CancellationFlag? = nil) {
        self.cancellation = cancellation
    }

    /// Runs `body` with this budget installed for the thread's queries.
    func withCurrent<T>(_ body: () throws -> T) rethrows -> T {
        try RegularExpressionBudget.$current.withValue(self) { try body() }
    }

    /// The error a match recorded while SQLite ran the statement, if any.
    var failure: (any Error)? { state.withLock { $0.failure } }

    /// Keeps the first error for the store to throw once SQLite reports the failed statement.
    func record(_ error: any Error) {
        state.withLock { if $0.failure == nil { $0.failure = error } }
    }

    /// Whether the whole subject matches `expression` (a pattern already anchored at both ends).
    ///
    /// - Throws: ``QueryLanguageError`` naming ``QueryLanguageLimits/regularExpressionTimeLimit`` when the
    ///   query's matches ran out of time; `ObjectGraphError.cancelled` when the fetch was cancelled meanwhile;
    ///   ``QueryLanguageError`` when ICU gave up on the match (its backtracking stack is full): never "no match".
    func matches(_ subject: String, _ expression: NSRegularExpression, pattern: String) throws -> Bool {
        let clock = ContinuousClock()
        let start = clock.now
        let allowed = QueryLanguageLimits.regularExpressionTimeLimit - state.withLock { $0.spent }
        enum Outcome { case undecided, matched, timedOut, tooMuchWork, cancelled, engineFailed }
        var outcome = Outcome.undecided
        var reports = 0
        if allowed <= .zero {
            outcome = .timedOut
        } else {
            let range = NSRange(subject.startIndex..., in: subject)
            let cancellation = self.cancellation
            expression.enumerateMatches(in: subject, options: [.anchored, .reportProgress, .reportCompletion],
                                        range: range) { result, flags, stop in
                if result != nil {
                    outcome = .matched
                    stop.pointee = true
                } else if flags.contains(.internalError) {
                    outcome = .engineFailed
                } else if flags.contains(.progress) {
                    reports += 1
                    if reports > QueryLanguageLimits.regularExpressionWorkLimit {
                        outcome = .tooMuchWork
                        stop.pointee = true
                    } else if cancellation?.isCancelled == true {
                        outcome = .cancelled
                        stop.pointee = true
                    } else if clock.now - start > allowed {
                        outcome = .timedOut
                        stop.pointee = true
                    }
                }
            }
        }
        state.withLock { $0.spent += clock.now - start }
        switch outcome {
        case .matched: return true
        case .undecided: return false
        case .timedOut: throw QueryLanguageError.regularExpressionTimeExceeded(pattern: pattern)
        case .tooMuchWork:
            throw QueryLanguageError.regularExpressionWorkExceeded(pattern: pattern, subjectLength: subject.utf16.count)
        case .cancelled: throw ObjectGraphError.cancelled
        case .engineFailed:
            throw QueryLanguageError.semantic(
                "MATCHES '\(pattern.prefix(100))': the regular-expression engine gave up on a subject of "
                    + "\(subject.utf16.count) UTF-16 units (its backtracking stack is full)")
        }
    }
}
