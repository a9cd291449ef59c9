import Foundation
import Testing

/// A PostgreSQL server of a test's own, in a temporary folder on a port in 54400–54499, that the test may
/// stop and start (the shared server `OCD_POSTGRES_URL` names must never be stopped). Started with
/// `scripts/postgres-server.sh`, as a developer starts one.
///
/// Runs only where the shared server's tests run (`OCD_POSTGRES_URL` set) and PostgreSQL's programs are
/// installed; otherwise the suites using it are skipped with one line.
final class PrivatePostgreSQLServer {
    static let skipReason: Comment = """
        needs PostgreSQL's programs (initdb, pg_ctl) and OCD_POSTGRES_URL: \
        export OCD_POSTGRES_URL=$(scripts/postgres-server.sh start) to run these
        """

    static let script = TestProgram.packageRoot.appendingPathComponent("scripts/postgres-server.sh").path

    /// Whether a server of one's own can be made here: the tests are asked for, and initdb is installed
    /// where the script looks for it.
    static var isAvailable: Bool {
        guard PostgreSQLTestServer.isAvailable else { return false }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.contains { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb") }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let folder: URL
    let port: Int
    /// The store URL of the server's `ocd` database.
    let url: String

    /// Creates a cluster in a new temporary folder and starts it, trying a few ports of the range (other
    /// tests and developers may hold some).
    ///
    /// - Throws: ``Failure`` when no port of the range would do.
    init() throws {
        folder = URL(fileURLWithPath: "/tmp/ocd-pg-private-\(UUID().uuidString.prefix(8).lowercased())")
        var tried: [Int] = []
        for _ in 0..<6 {
            let candidate = Int.random(in: 54_400...54_499)
            tried.append(candidate)
            if Self.run("start", folder.path, String(candidate)) == 0 {
                port = candidate
                url = "postgresql://ocd@127.0.0.1:\(candidate)/ocd?sslmode=disable"
                return
            }
        }
        _ = Self.run("stop", folder.path)
        try? FileManager.default.removeItem(at: folder)
        throw Failure(description: "no server of its own could be started on ports \(tried) (see \(folder.path)/server.log)")
    }

    /// Stops the server the way an administrator's restart does (`pg_ctl stop -m fast`: running transactions
    /// are rolled back and every connection is closed), and waits until it is down.
    func stop() throws {
        guard Self.run("stop", folder.path) == 0 else { throw Failure(description: "the server in \(folder.path) did not stop") }
    }

    /// Starts the stopped server again, on the same port.
    func start() throws {
        guard Self.run("start", folder.path, String(port)) == 0 else {
            throw Failure(description: "the server in \(folder.path) did not start again on port \(port)")
        }
    }

    /// Stops the server and removes its folder.
    func remove() {
        _ = Self.run("stop", folder.path)
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs the script with `arguments` and returns its exit status (-1 when it cannot be run).
    private static func run(_ arguments: String...) -> Int32 {
        (try? TestProgram.run("/bin/bash", [script] + arguments, seconds: 300).status) ?? -1
    }
}
