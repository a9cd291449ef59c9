import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain HTTP/1.1 client over a loopback socket, so the tests see exactly what the server sends (status,
/// headers, bytes) with nothing in between; every read has a deadline.
enum HTTPGet {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends `method target` to 127.0.0.1:`port` with `headers` (and a `body`, JSON unless `headers` name another
    /// type), and reads the whole response.
    static func request(_ target: String, port: Int, method: String = "GET", headers: [String: String] = [:],
                        body: String? = nil) throws -> Response {
        let socket = try connected(port: port, readTimeout: timeval(tv_sec: 30, tv_usec: 0))
        defer { close(socket) }
        var text = "\(method) \(target) HTTP/1.1\r\nConnection: close\r\n"
        if headers["Host"] == nil { text += "Host: 127.0.0.1:\(port)\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body {
            if headers["Content-Type"] == nil { text += "Content-Type: application/json\r\n" }
            text += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            text += "\r\n"
        }
        let bytes = Array(text.utf8)
        guard send(socket, bytes, bytes.count, 0) == bytes.count else { throw Failure(description: "send failed") }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 { break }
            guard count > 0 else { throw Failure(description: "recv: \(String(cString: strerror(errno)))") }
            received += buffer[0..<count]
            // A server may keep the connection despite `Connection: close`: a body of a
            // stated length is whole once that many bytes are in.
            if let whole = try? parse(received, method: method), let length = whole.headers["content-length"].flatMap(Int.init),
               whole.body.utf8.count >= length { return whole }
        }
        return try parse(received, method: method)
    }

    /// A socket connected to 127.0.0.1:`port` whose reads give up after `readTimeout`.
    ///
    /// - Throws: ``Failure`` when no socket can be made or the connection is refused.
    static func connected(port: Int, readTimeout: timeval) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var timeout = readTimeout
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw Failure(description: "connect to port \(port): \(String(cString: strerror(errno)))")
        }
        return socket
    }

    /// Splits a response into status, headers (names lowercased) and body (chunked bodies joined).
    private static func parse(_ bytes: [UInt8], method: String) throws -> Response {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw Failure(description: "no header end in \(String(decoding: bytes, as: UTF8.self))")
        }
        let head = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(head[0])") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var joined = [UInt8](), index = 0
            while let lineEnd = (index..<max(index, body.count - 1)).first(where: { body[$0] == 13 && body[$0 + 1] == 10 }),
                  let size = Int(String(decoding: body[index..<lineEnd], as: UTF8.self), radix: 16), size > 0 {
                joined += body[(lineEnd + 2)..<min(body.count, lineEnd + 2 + size)]
                index = lineEnd + 2 + size + 2
            }
            body = joined
        }
        return Response(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }
}
