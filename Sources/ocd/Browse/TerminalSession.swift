import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal in "application" state for the browser: keys arrive one at a time without echo, the
/// alternate screen is shown and the cursor hidden; `restore()` puts everything back.
final class TerminalSession: @unchecked Sendable {
    // @unchecked Sendable: `saved` is written once in init and read in restore.
    private var saved = termios()
    private var active = false

    init() {
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return }
        active = true
        Console.raw("\u{1B}[?1049h\u{1B}[?25l")
    }

    func restore() {
        guard active else { return }
        active = false
        Console.raw("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    /// Rows and columns of the terminal (24×80 if unknown).
    static func size() -> (rows: Int, columns: Int) {
        var size = winsize()
        #if os(Linux)
        let request = UInt(TIOCGWINSZ)
        #else
        let request = TIOCGWINSZ
        #endif
        guard ioctl(STDOUT_FILENO, request, &size) == 0, size.ws_row > 0, size.ws_col > 0 else { return (24, 80) }
        return (Int(size.ws_row), Int(size.ws_col))
    }
}
