import Foundation

/// A progress bar redrawn in place on a terminal, and a few plain lines (every 10%) otherwise, so CI logs
/// stay readable.
final class ProgressBar: @unchecked Sendable {
    // @unchecked Sendable: state is guarded by `lock`; updates may come from any thread.
    private let title: String
    private let total: Int
    private let lock = NSLock()
    private var lastTenth = -1
    private var lastDraw = Date.distantPast

    init(title: String, total: Int) {
        self.title = title
        self.total = max(total, 1)
    }

    func update(_ done: Int) {
        lock.withLock {
            let fraction = min(1, Double(done) / Double(total))
            if Console.stdoutIsTerminal {
                // Redraw at most 20 times a second, and always at the end.
                guard done >= total || Date().timeIntervalSince(lastDraw) > 0.05 else { return }
                lastDraw = Date()
                let width = 30
                let filled = Int(fraction * Double(width))
                let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
                Console.raw("\r\(title) \(bar) \(Int(fraction * 100))% \(done)/\(total)")
            } else {
                let tenth = Int(fraction * 10)
                guard tenth > lastTenth else { return }
                lastTenth = tenth
                Console.line("\(title) \(tenth * 10)% \(done)/\(total)")
            }
        }
    }

    /// Ends the in-place line.
    func finish() {
        if Console.stdoutIsTerminal { Console.line() }
    }
}
