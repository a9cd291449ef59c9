import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import PostgresNIO

/// postgres-nio alone, no store: the "raw" side of the PostgreSQL scenarios, and the checks that count
/// what a run wrote. One connection, each statement waited for on the calling thread (as the store does).
final class RawPostgreSQL {
    let connection: PostgresConnection
    private let logger = Logger(label: "ocd-bench.raw")

    /// Connects with the store URL's settings, its `schema` as the search path.
    init(_ configuration: PostgreSQLStoreConfiguration) throws {
        let tls: PostgresConnection.Configuration.TLS = configuration.transportSecurity == .disable
            ? .disable : .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        var settings = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: tls)
        var parameters = [("application_name", configuration.applicationName)]
        if let schema = configuration.schema { parameters.append(("search_path", schema)) }
        settings.options.additionalStartupParameters = parameters
        connection = try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                    configuration: settings, id: 1, logger: logger).wait()
    }

    /// Runs one statement with `$1…` placeholders and the values bound, and returns its rows.
    ///
    /// - Throws: the server's error, or ``BenchWorkerFailure`` when the connection closes before the reply.
    @discardableResult
    func run(_ sql: String, _ values: [StoreValue] = []) throws -> PostgresQueryResult {
        let reply = connection.query(PostgresQuery(unsafeSQL: sql, binds: PostgreSQLValueCoding.bindings(values)), logger: logger)
        // postgres-nio can leave a query unanswered for ever when the server restarts under it (the store's
        // session guards its waits the same way): look at the connection every second.
        let answered = DispatchSemaphore(value: 0)
        reply.whenComplete { _ in answered.signal() }
        while answered.wait(timeout: .now() + 1) == .timedOut {
            if connection.isClosed, answered.wait(timeout: .now() + 1) == .timedOut {
                throw BenchWorkerFailure(description: "lost the connection to the server before its reply")
            }
        }
        return try reply.wait()
    }

    func close() { try? (connection.close() as EventLoopFuture<Void>).wait() }
}
