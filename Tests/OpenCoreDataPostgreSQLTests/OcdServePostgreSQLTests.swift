import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL
#if canImport(Glibc)
import Glibc
#endif

/// `ocd serve` on a `postgresql://` URL: another instance's commit reaches `/events` through the change feed,
/// and an object's page lists its changes from the database's history.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable && TestProgram.ocd != nil,
                "needs a built ocd and OCD_POSTGRES_URL: export OCD_POSTGRES_URL=$(scripts/postgres-server.sh start) to run these"))
struct OcdServePostgreSQLTests {
    @Test func anotherInstancesCommitReachesEventsAndTheObjectPageShowsItsHistory() throws {
        let fixture = try OcdPostgreSQLCommandTests.Fixture()
        defer { fixture.remove() }
        let server = try TestProgram(TestProgram.ocd!, ["serve", fixture.url, "--model", fixture.modelPath, "--port", "0"])
        var port: Int?
        #expect(PostgreSQLChangeFeedTests.eventually(60) {
            guard let range = server.stdout.range(of: "http://127.0.0.1:") else { return false }
            port = Int(server.stdout[range.upperBound...].prefix { $0.isNumber })
            return port != nil
        }, "\(server.stdout) \(server.stderr)")
        let served = try #require(port)

        let events = try EventSocket(port: served)
        // The stream is open (its headers came) before the other instance commits.
        #expect(events.read(until: "text/event-stream", seconds: 30) != nil)
        try fixture.save(label: "cherry", key: 4, author: "another instance")
        let change = try #require(events.read(until: "\n\n", after: "event: change", seconds: 30), "no change event: \(server.stderr)")
        #expect(change.contains("Tag: 1 inserted"), "\(change)")
        #expect(change.contains("\"history\":true"), "\(change)")

        let page = try EventSocket.get("/object/Tag/4", port: served)
        #expect(page.contains("cherry"))
        #expect(page.contains("<h2>History</h2>") && page.contains("<td>inserted</td>") && page.contains("another instance"), "\(page)")
    }
}

/// A plain loopback HTTP connection read as it arrives (a server-sent event stream, or a page).
private final class EventSocket {
    let socket: Int32
    private var received = ""

    /// Opens `GET /events` on `port`.
    init(port: Int, path: String = "/events") throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestProgram.Failure(description: "cannot connect to port \(port)") }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
    }

    deinit { close(socket) }

    /// What arrived up to the first `marker` after `after` (the text from `after` on), or nil when it did not
    /// come within `seconds` or the server closed the connection.
    func read(until marker: String, after: String = "", seconds: Double) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            if let start = after.isEmpty ? received.startIndex : received.range(of: after)?.lowerBound,
               let end = received[start...].range(of: marker) {
                return String(received[start..<end.upperBound])
            }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 { return nil }
            if count > 0 { received += String(decoding: buffer[0..<count], as: UTF8.self) }
        }
        return nil
    }

    /// The whole response to `GET path`.
    static func get(_ path: String, port: Int) throws -> String {
        let connection = try EventSocket(port: port, path: path)
        return connection.read(until: "</html>", seconds: 30) ?? connection.received
    }
}
