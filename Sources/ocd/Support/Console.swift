import Foundation
import OpenCoreDataImport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to stdout and stderr unbuffered-enough for live progress, and knows whether each is a terminal.
///
/// Under strict concurrency the C `stdout` global is not touchable, so this writes to the file
/// descriptors directly; each call is one `write`, so lines from different threads do not interleave.
enum Console {
    /// Whether stdout is a terminal (ANSI cursor tricks allowed).
    static let stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
    /// Whether stdin and stdout are both terminals (the interactive browser is possible).
    static let isInteractive = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1

    /// Prints a line to stdout. Every line ocd prints passes here or through ``error(_:)``, the one place
    /// where control characters are escaped (tabs kept, as column separators): text from a store, a model,
    /// a file or an error message can neither forge lines nor drive the terminal.
    static func line(_ text: String = "") { emit(TerminalText.escaped(text, keepingTabs: true) + "\n", to: STDOUT_FILENO) }

    /// Prints ocd's own text to stdout as it is, without a newline: terminal control (progress, the
    /// browser's screen, styles), never text read from elsewhere unescaped.
    static func raw(_ text: String) { emit(text, to: STDOUT_FILENO) }

    /// Prints a line to stderr, escaped as ``line(_:)`` is.
    static func error(_ text: String) { emit(TerminalText.escaped(text, keepingTabs: true) + "\n", to: STDERR_FILENO) }

    private static func systemWrite(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        write(descriptor, buffer, count)
    }

    private static func emit(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                systemWrite(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written <= 0 { return }
            offset += written
        }
    }
}
