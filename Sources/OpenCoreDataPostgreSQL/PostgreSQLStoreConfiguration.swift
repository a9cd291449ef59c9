import Foundation
import OpenCoreData

/// Where a PostgreSQL store lives and how to reach it: a server, a database, optionally a schema inside it,
/// and the size of the store's connection pool.
///
/// Made from a URL in the form every PostgreSQL tool reads,
/// `postgresql://user[:password]@host[:port]/database[?parameter=value&…]`, or from the environment:
///
/// ```swift
/// let configuration = try PostgreSQLStoreConfiguration(url: "postgresql://app@127.0.0.1:5432/shop?schema=tenant1")
/// let fromEnvironment = try PostgreSQLStoreConfiguration.fromEnvironment()   // DATABASE_URL, then PG* variables
/// ```
///
/// URL parameters: `schema` (the schema the store's tables live in; created when missing; default `public`),
/// `sslmode` (`disable`, `prefer` or `require`; default `prefer`), `pool_size` (connections the store may
/// open, 1–100; default 4), `connect_timeout` (seconds; default 10), `query_timeout` (seconds a statement may
/// wait for the server's reply before its connection is given up; default none), `application_name`. Any other parameter
/// is refused by name rather than ignored, so a misspelt option never silently does nothing.
public struct PostgreSQLStoreConfiguration: Sendable, Equatable {
    /// Whether the connection is encrypted.
    public enum TransportSecurity: String, Sendable, Equatable {
        /// Plain TCP (loopback and trusted networks).
        case disable
        /// TLS when the server offers it, plain TCP otherwise.
        case prefer
        /// TLS, or no connection.
        case require
    }

    /// The server's host name or address.
    public var host: String
    /// The server's TCP port.
    public var port: Int
    /// The role the store connects as.
    public var username: String
    /// The role's password, when the server asks for one.
    public var password: String?
    /// The database on the server.
    public var database: String
    /// The schema inside the database that holds the store's tables; `nil` for `public`.
    public var schema: String?
    /// Whether the connection is encrypted.
    public var transportSecurity: TransportSecurity
    /// How many connections the store keeps open at most.
    public var poolSize: Int
    /// How long opening one connection may take, in seconds.
    public var connectTimeout: Double
    /// How long one statement may wait for the server's reply, in seconds, before its connection is closed
    /// and the statement fails with ``StoreError/connectionLost(server:reason:)``; `nil` waits as
    /// long as the connection lives. It is what ends the wait on a server that stops answering without
    /// closing the connection (a network partition, a frozen host), so set it above the longest statement.
    public var queryTimeout: Double?
    /// The name the server shows for the store's connections (`pg_stat_activity.application_name`).
    public var applicationName: String

    /// A configuration from its parts.
    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String,
                schema: String? = nil, transportSecurity: TransportSecurity = .prefer, poolSize: Int = 4,
                connectTimeout: Double = 10, queryTimeout: Double? = nil, applicationName: String = "OpenCoreData") {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.schema = schema
        self.transportSecurity = transportSecurity
        self.poolSize = poolSize
        self.connectTimeout = connectTimeout
        self.queryTimeout = queryTimeout
        self.applicationName = applicationName
    }

    /// The URL parameters the store understands.
    static let knownParameters: Set<String> = ["schema", "sslmode", "pool_size", "connect_timeout", "query_timeout",
                                                    "application_name"]

    /// Reads a `postgresql://` (or `postgres://`) URL.
    ///
    /// - Throws: ``StoreError/invalidURL(_:reason:)`` naming what is wrong: another scheme, no host,
    ///   no user, no database, a port or parameter value out of range, an unknown or repeated parameter.
    public init(url text: String) throws {
        func invalid(_ reason: String) -> StoreError { .invalidURL(Self.redacted(text), reason: reason) }
        guard let components = URLComponents(string: text) else { throw invalid("it is not a URL") }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgresql" || scheme == "postgres" else {
            throw invalid("the scheme must be postgresql:// or postgres://")
        }
        // An IPv6 literal may come with its brackets; the host is what is inside, so `[]` names none either.
        let host = components.host.map { $0.hasPrefix("[") ? String($0.dropFirst().dropLast()) : $0 } ?? ""
        guard !host.isEmpty else { throw invalid("it names no host") }
        guard let user = components.user, !user.isEmpty else { throw invalid("it names no user") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.isEmpty, !path.contains("/") else { throw invalid("it names no database (…/DATABASE)") }
        // URLComponents drops a port it cannot hold (above Int's range on some platforms, or not digits), and
        // 5432 would then be used in its place: read the written port from the text itself.
        var port = 5432
        if let written = Self.writtenPort(in: text), !written.isEmpty {
            guard let number = Int(written), (1...65_535).contains(number) else {
                throw invalid("port \(written.prefix(24)) is out of range (1-65535)")
            }
            port = number
        }
        // URLComponents gives `user` and `password` percent-decoded.
        let database = path.removingPercentEncoding ?? path
        // Each of these travels as a NUL-terminated string in the startup or password message: a NUL inside
        // would end it early and let the rest pass as parameters of the URL's choosing (options, role,
        // replication). Control characters have no place in a name either.
        for (part, value) in [("host", host), ("user", user), ("database", database)] where Self.hasControlCharacter(value) {
            throw invalid("the \(part) holds a NUL or control character")
        }
        if let password = components.password, password.utf8.contains(0) {
            throw invalid("the password holds a NUL character")
        }
        self.init(host: host, port: port,
                  username: user, password: components.password, database: database)
        var seen: Set<String> = []
        for item in components.queryItems ?? [] {
            guard Self.knownParameters.contains(item.name) else {
                throw invalid("unknown parameter '\(item.name)' (known: \(Self.knownParameters.sorted().joined(separator: ", ")))")
            }
            guard seen.insert(item.name).inserted else { throw invalid("parameter '\(item.name)' is given twice") }
            let value = item.value ?? ""
            switch item.name {
            case "schema":
                guard Self.isSchemaName(value) else {
                    throw invalid("schema '\(value)' is not a plain name (letters, digits, _; at most 63 bytes)")
                }
                schema = value
            case "sslmode":
                guard let mode = TransportSecurity(rawValue: value) else {
                    throw invalid("sslmode '\(value)' is not one of disable, prefer, require")
                }
                transportSecurity = mode
            case "pool_size":
                guard let size = Int(value), (1...100).contains(size) else {
                    throw invalid("pool_size '\(value)' is not a number from 1 to 100")
                }
                poolSize = size
            case "connect_timeout":
                guard let seconds = Double(value), seconds > 0, seconds <= 3600 else {
                    throw invalid("connect_timeout '\(value)' is not a number of seconds from 0 to 3600")
                }
                connectTimeout = seconds
            case "query_timeout":
                guard let seconds = Double(value), seconds > 0, seconds <= 86_400 else {
                    throw invalid("query_timeout '\(value)' is not a number of seconds from 0 to 86400")
                }
                queryTimeout = seconds
            default:
                guard !Self.hasControlCharacter(value) else {
                    throw invalid("application_name holds a NUL or control character")
                }
                applicationName = value
            }
        }
    }

    /// The configuration the environment gives: `DATABASE_URL` when set, otherwise libpq's variables
    /// (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`) when `PGHOST` is set; `nil` when neither is.
    ///
    /// - Throws: ``StoreError/invalidURL(_:reason:)`` for a malformed `DATABASE_URL`, or for `PG*`
    ///   variables without a user or with a port that is not a number.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgreSQLStoreConfiguration? {
        if let url = environment["DATABASE_URL"], !url.isEmpty { return try PostgreSQLStoreConfiguration(url: url) }
        guard let host = environment["PGHOST"], !host.isEmpty else { return nil }
        let description = "the PG* environment variables"
        guard let user = environment["PGUSER"] ?? environment["USER"], !user.isEmpty else {
            throw StoreError.invalidURL(description, reason: "PGUSER is not set")
        }
        var port = 5432
        if let text = environment["PGPORT"] {
            guard let number = Int(text), (1...65_535).contains(number) else {
                throw StoreError.invalidURL(description, reason: "PGPORT '\(text)' is not a port number")
            }
            port = number
        }
        return PostgreSQLStoreConfiguration(host: host, port: port, username: user, password: environment["PGPASSWORD"],
                                            database: environment["PGDATABASE"] ?? user)
    }

    /// The configuration as a URL, the password left out.
    public var redactedURL: String {
        var text = "postgresql://\(username)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
        if let schema { text += "?schema=\(schema)" }
        return text
    }

    /// Whether `name` can be a schema name pasted into SQL: a letter or `_`, then letters, digits and `_`,
    /// in ASCII, at most 63 bytes (PostgreSQL's identifier limit). Stored unquoted, so PostgreSQL folds it
    /// to lower case like every other name of the layout.
    static func isSchemaName(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 63,
              first == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first | 0x20) else { return false }
        return name.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "_") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
        }
    }

    /// `text` with any password replaced and control characters escaped, for error messages and logs.
    ///
    /// Everything between the first `:` after the first `//` and the last `@` is hidden: any reader's user
    /// information starts after a `//` and ends at an `@`, and its password follows the first `:`, so this
    /// hides the password however the URL is read. Readers disagree on malformed URLs: libpq ends the user
    /// information at the first `@` (`postgresql://u:12?pw@h/d` has the password `12?pw`, where URLComponents
    /// reads a port and a query), a scheme written before `postgresql://` (`jdbc:postgresql://u:pw@h/d`)
    /// leaves URLComponents no password, and URLComponents may read an earlier `//` as the authority and
    /// rewrite the text around it. Hiding more than the password of a refused URL costs little; showing it
    /// would put it in logs.
    ///
    /// The delimiters are found among unicode scalars, as URL readers find them among bytes: a combining mark
    /// right after `@` or `:` makes one `Character` of the two, which a `Character` search passes over.
    static func redacted(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        let authority = scalars.indices.dropLast().first { scalars[$0] == "/" && scalars[$0 + 1] == "/" }.map { $0 + 2 } ?? 0
        var shown = scalars
        if let at = scalars[authority...].lastIndex(of: "@"), let colon = scalars[authority..<at].firstIndex(of: ":") {
            shown = Array(scalars[...colon]) + Array("***".unicodeScalars) + Array(scalars[at...])
        }
        return shown.map { scalar in
            scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
    }

    /// The port as written in the URL's authority (`…@host:PORT/…`, `…@[v6]:PORT/…`), or nil when none is.
    static func writtenPort(in text: String) -> Substring? {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        let hostAndPort = authority[(authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex)...]
        let afterHost = hostAndPort.hasPrefix("[")
            ? hostAndPort[(hostAndPort.firstIndex(of: "]").map { hostAndPort.index(after: $0) } ?? hostAndPort.endIndex)...]
            : hostAndPort[(hostAndPort.firstIndex(of: ":") ?? hostAndPort.endIndex)...]
        guard afterHost.first == ":" else { return nil }
        return afterHost.dropFirst()
    }

    /// Whether `text` holds a NUL or another C0 control character, or DEL.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}
