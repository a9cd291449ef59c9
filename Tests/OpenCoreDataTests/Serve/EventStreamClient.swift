import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A reader of `ocd serve`'s `/events` over a plain loopback socket: it sends the request, then hands out
/// the `change` events as they arrive, each wait bounded by a deadline.
final class EventStreamClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private var socket: Int32
    /// What has arrived and not been handed out yet (the head, chunk sizes and events alike).
    private(set) var received = ""

    /// Connects to `/events` on 127.0.0.1:`port` and waits (up to `seconds`) until the server says the
    /// stream is open, so that nothing saved afterwards can be missed.
    ///
    /// - Throws: ``Failure`` when the connection fails or the stream does not open in time.
    init(port: Int, seconds: Double = 10) throws {
        // Short reads, so a wait can check its deadline.
        socket = try HTTPGet.connected(port: port, readTimeout: timeval(tv_sec: 0, tv_usec: 200_000))
        let request = Array("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n".utf8)
        guard send(socket, request, request.count, 0) == request.count else { throw Failure(description: "send failed") }
        _ = try wait(seconds: seconds) { $0.contains(": connected\n") }
    }

    deinit { disconnect() }

    /// Closes the connection, as a browser leaving the page does.
    func disconnect() {
        if socket >= 0 { close(socket) }
        socket = -1
    }

    /// The JSON of the next `change` event that names a changed entity, waiting up to `seconds` for it.
    /// Events that only say the store changed are passed over: another coordinator opening a store without
    /// history writes its metadata, a commit that changes no count and that the server cannot tell from an
    /// update.
    ///
    /// - Throws: ``Failure`` when none arrives in time or the server closes the stream.
    func nextChange(seconds: Double = 10) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let json = try nextEvent(seconds: max(0.1, deadline.timeIntervalSinceNow))
            if !json.contains("\"changes\":[]") { return json }
        }
    }

    /// The JSON of the next `change` event, waiting up to `seconds` for it.
    ///
    /// - Throws: ``Failure`` when none arrives in time or the server closes the stream.
    func nextEvent(seconds: Double = 10) throws -> String {
        let marker = "event: change\ndata: "
        let text = try wait(seconds: seconds) { text in
            guard let start = text.range(of: marker) else { return false }
            return text[start.upperBound...].contains("\n")
        }
        let start = text.range(of: marker)!
        let end = text[start.upperBound...].firstIndex(of: "\n")!
        received = String(text[end...])
        return String(text[start.upperBound..<end])
    }

    /// Whether the server ends the stream (the socket reads end of file) within `seconds`.
    func endsWithin(seconds: Double) -> Bool {
        _ = try? wait(seconds: seconds) { _ in false }
        return endOfFile
    }

    private var endOfFile = false

    /// Reads until `done` holds for what has arrived, or `seconds` pass.
    private func wait(seconds: Double, until done: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(received) {
            guard Date() < deadline else { throw Failure(description: "nothing in \(seconds) s; received: \(received)") }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 {
                endOfFile = true
                throw Failure(description: "the server closed the stream; received: \(received)")
            }
            if count > 0 { received += String(decoding: buffer[0..<count], as: UTF8.self) }
        }
        return received
    }
}
