import Foundation

/// Turns Ctrl-C into a call instead of killing the process, while a cancellable step runs.
///
/// SIGINT is ignored at the process level (so the default action does not run) and delivered through a
/// dispatch source; `stop()` puts the default action back.
final class InterruptHandler: @unchecked Sendable {
    // @unchecked Sendable: `source` is set in `start` and cleared in `stop`, guarded by `lock`.
    private let lock = NSLock()
    private var source: DispatchSourceSignal?

    func start(_ action: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler(handler: action)
        source.resume()
        lock.withLock { self.source = source }
    }

    func stop() {
        let current = lock.withLock { () -> DispatchSourceSignal? in
            defer { source = nil }
            return source
        }
        if let current {
            current.cancel()
            signal(SIGINT, SIG_DFL)
        }
    }
}
