import Foundation
import Logging
import Synchronization

/// Routes the library's swift-log output (the `OCD_SQL_DEBUG` statement log) to stderr, Core Data style.
///
/// The library decides once per process whether to trace SQL (it reads `OCD_SQL_DEBUG` when the first
/// store opens), so ocd turns tracing on early and shows or hides lines with ``isVisible``: the tour uses
/// this to show the SQL of one step only.
enum SQLLog {
    private static let visible = Atomic<Bool>(false)
    private static let bootstrapped = Mutex<Bool>(false)

    /// Whether SQL lines are printed now.
    static var isVisible: Bool {
        get { visible.load(ordering: .relaxed) }
        set { visible.store(newValue, ordering: .relaxed) }
    }

    /// Turns tracing on for this process (before any store opens) and installs the stderr handler.
    static func enable(visible: Bool) {
        setenv("OCD_SQL_DEBUG", "1", 1)
        isVisible = visible
        let alreadyDone = bootstrapped.withLock { done in
            defer { done = true }
            return done
        }
        if !alreadyDone {
            LoggingSystem.bootstrap { label in SQLLogHandler(label: label) }
        }
    }
}

/// Prints library log lines to stderr as `CoreData: sql: …`, while ``SQLLog/isVisible`` is on.
struct SQLLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard SQLLog.isVisible || event.level >= .warning else { return }
        let prefix = event.level >= .warning ? "CoreData: warning:" : "CoreData: sql:"
        Console.error("\(prefix) \(event.message)")
    }
}
