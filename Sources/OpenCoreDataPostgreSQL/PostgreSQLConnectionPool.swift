import Foundation
import OpenCoreData
import Logging
import PostgresNIO

/// The store's connections to its server: at most `poolSize` open, handed to one piece of work at a time.
///
/// A blocking pool because the store's callers are synchronous (context queues); postgres-nio's own pool is
/// asynchronous. A connection that dropped is closed and replaced on the next checkout, so a server restart
/// costs the work that was running, not the store.
final class PostgreSQLConnectionPool: @unchecked Sendable {
    // @unchecked Sendable: `idle`, `openCount` and `pinned` change only under `condition`.
    let configuration: PostgreSQLStoreConfiguration
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var openCount = 0
    private var nextID = 0
    private var isClosed = false
    private let logger = Logger(label: "OpenCoreData.PostgreSQL")
    /// A session this pool hands out instead of connections of its own (nil for an ordinary pool), one
    /// piece of work at a time; re-entrant, as work may start more work on its thread.
    private let borrowed: PostgreSQLSession?
    private let borrowedLock = NSRecursiveLock()
    /// Sessions pinned to a thread (``withPinnedSession(_:)``), by thread; changed only under `condition`.
    private var pinned: [ObjectIdentifier: PostgreSQLSession] = [:]
    /// How long a checkout waits for a busy pool before giving up with a typed error (never a hang).
    static let checkoutTimeout: TimeInterval = 60

    init(configuration: PostgreSQLStoreConfiguration) {
        self.configuration = configuration
        borrowed = nil
    }

    /// A pool of one session someone else owns and keeps open (a migration's, in its transaction): every
    /// piece of work runs on it, its transactions as savepoints of the one under way. Closing the pool
    /// leaves the session open; dedicated connections are refused.
    init(borrowing session: PostgreSQLSession, configuration: PostgreSQLStoreConfiguration) {
        self.configuration = configuration
        borrowed = session
    }

    /// Runs `body` with a connection of its own, returned to the pool afterwards.
    ///
    /// - Throws: ``StoreError/connectionFailed(server:reason:)`` when no connection can be opened
    ///   (or the pool stays busy past ``checkoutTimeout``), or what `body` throws.
    @discardableResult
    func withSession<Result>(_ body: (PostgreSQLSession) throws -> Result) throws -> Result {
        if let session = pinnedSession() { return try body(session) }
        if let borrowed {
            borrowedLock.lock()
            defer { borrowedLock.unlock() }
            condition.lock()
            let closed = isClosed
            condition.unlock()
            if closed { throw StoreError.connectionFailed(server: configuration.redactedURL, reason: "the store is closed") }
            return try body(borrowed)
        }
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(PostgreSQLSession(connection: connection, server: configuration.redactedURL, logger: logger,
                                          queryTimeout: configuration.queryTimeout))
    }

    /// Runs `body` with one session that every piece of work this thread starts on the pool meanwhile
    /// (``withSession(_:)``) also runs on, so they share its transaction (one snapshot); other threads' work
    /// keeps to connections of its own. When this thread has one pinned already, `body` gets that one.
    ///
    /// - Throws: as ``withSession(_:)``.
    func withPinnedSession<Result>(_ body: (PostgreSQLSession) throws -> Result) throws -> Result {
        if let session = pinnedSession() { return try body(session) }
        return try withSession { session in
            let thread = ObjectIdentifier(Thread.current)
            condition.lock()
            pinned[thread] = session
            condition.unlock()
            defer {
                condition.lock()
                pinned[thread] = nil
                condition.unlock()
            }
            return try body(session)
        }
    }

    /// The session pinned to the calling thread, if any.
    private func pinnedSession() -> PostgreSQLSession? {
        condition.lock()
        defer { condition.unlock() }
        // Empty but while a snapshot is under way: no thread lookup on the ordinary path.
        return pinned.isEmpty ? nil : pinned[ObjectIdentifier(Thread.current)]
    }

    /// Closes every connection; later checkouts fail.
    func close() {
        condition.lock()
        isClosed = true
        let connections = idle
        idle = []
        openCount -= connections.count
        condition.broadcast()
        condition.unlock()
        for connection in connections { let closing: EventLoopFuture<Void> = connection.close(); try? closing.wait() }
    }

    private func checkOut() throws -> PostgresConnection {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: Self.checkoutTimeout)
        while true {
            if isClosed {
                condition.unlock()
                throw StoreError.connectionFailed(server: configuration.redactedURL, reason: "the store is closed")
            }
            if let connection = idle.popLast() {
                if connection.isClosed {
                    openCount -= 1
                    continue
                }
                condition.unlock()
                return connection
            }
            if openCount < configuration.poolSize { break }
            if !condition.wait(until: deadline) {
                condition.unlock()
                throw StoreError.connectionFailed(
                    server: configuration.redactedURL,
                    reason: "all \(configuration.poolSize) connections stayed busy for \(Int(Self.checkoutTimeout)) s")
            }
        }
        openCount += 1
        nextID += 1
        let id = nextID
        condition.unlock()
        do {
            return try connect(id: id)
        } catch {
            condition.lock()
            openCount -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        condition.lock()
        if connection.isClosed || isClosed {
            openCount -= 1
            if !connection.isClosed { try? (connection.close() as EventLoopFuture<Void>).wait() }
        } else {
            idle.append(connection)
        }
        condition.signal()
        condition.unlock()
    }

    /// A connection of its own, outside the pool (a listener keeps one open for as long as it listens).
    ///
    /// - Throws: ``StoreError/connectionFailed(server:reason:)``.
    func openDedicatedConnection() throws -> PostgresConnection {
        if borrowed != nil {
            throw StoreError.connectionFailed(server: configuration.redactedURL,
                                                        reason: "a store working inside a migration has no connection of its own")
        }
        condition.lock()
        nextID += 1
        let id = nextID
        condition.unlock()
        return try connect(id: id)
    }

    /// What went wrong opening a connection, in words a person can act on: the server's own refusal
    /// (authentication, no such database) with its SQLSTATE, or, before the server answered, whether the
    /// address refused, timed out or did not resolve, with the host and port tried.
    static func connectionFailureReason(_ error: PSQLError, host: String, port: Int) -> String {
        if let info = error.serverInfo {
            let message = info[.message] ?? "\(error.code)"
            let state = info[.sqlState] ?? ""
            switch state {
            case "28P01", "28000": return "authentication failed: \(message) (SQLSTATE \(state))"
            case "3D000": return "no such database: \(message) (SQLSTATE \(state))"
            case "": return message
            default: return "\(message) (SQLSTATE \(state))"
            }
        }
        let target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard let underlying = error.underlying else { return "\(error.code) at \(target)" }
        if let channelError = underlying as? ChannelError, case .connectTimeout(let limit) = channelError {
            return "timed out after \(Double(limit.nanoseconds) / 1e9) s connecting to \(target) (connect_timeout)"
        }
        let text = String(describing: underlying)
        if text.range(of: "refused", options: .caseInsensitive) != nil {
            return "connection refused at \(target): no server is listening there"
        }
        if let connectionError = underlying as? NIOConnectionError,
           connectionError.dnsAError != nil || connectionError.dnsAAAAError != nil {
            return "the host name \(host) did not resolve"
        }
        return "\(text) (connecting to \(target))"
    }

    private func connect(id: Int) throws -> PostgresConnection {
        let server = configuration.redactedURL
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch configuration.transportSecurity {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            throw StoreError.connectionFailed(server: server, reason: "TLS set-up failed: \(error)")
        }
        var settings = PostgresConnection.Configuration(host: configuration.host, port: configuration.port,
                                                        username: configuration.username, password: configuration.password,
                                                        database: configuration.database, tls: tls)
        settings.options.connectTimeout = .milliseconds(Int64(configuration.connectTimeout * 1000))
        settings.options.additionalStartupParameters = [("application_name", configuration.applicationName)]
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                        configuration: settings, id: id, logger: logger).wait()
        } catch let error as PSQLError {
            throw StoreError.connectionFailed(
                server: server, reason: Self.connectionFailureReason(error, host: configuration.host, port: configuration.port))
        } catch {
            throw StoreError.connectionFailed(server: server, reason: "\(error)")
        }
        if let schema = configuration.schema {
            // The schema name was checked to be a plain name (PostgreSQLStoreConfiguration.isSchemaName).
            let session = PostgreSQLSession(connection: connection, server: server, logger: logger,
                                            queryTimeout: configuration.queryTimeout)
            do {
                try session.execute("CREATE SCHEMA IF NOT EXISTS \(schema)")
                try session.execute("SET search_path TO \(schema)")
            } catch {
                try? (connection.close() as EventLoopFuture<Void>).wait()
                // Two stores creating one schema at once: the loser's CREATE fails on the catalog's unique index.
                if case StoreError.serverError(let state, _, _) = error, state == "23505" || state == "42P06" {
                    return try connect(id: id)
                }
                throw error
            }
        }
        return connection
    }
}
