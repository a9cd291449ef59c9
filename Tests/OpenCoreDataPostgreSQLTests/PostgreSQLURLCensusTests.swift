import Foundation
import Testing
import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// The PostgreSQL URL row of docs/RELIABILITY.md's hostile-input table (no server needed): `postgresql://`
/// URLs built from random parts, each with a password no other part holds, with hostile pieces put into the
/// other parts (NUL written raw and as `%00`, control characters, escapes, line breaks, ports past 65,535,
/// empty hosts, repeated and unknown parameters, a second scheme). Every URL is either accepted, with each
/// connection parameter free of NUL and control characters and in range, or refused with
/// `StoreError.invalidURL`, whose message never shows the password. `OCD_HOSTILE_INPUTS` sets how many
/// (default 400); `OCD_HOSTILE_TABLE=path` appends the table row there.
@Suite struct PostgreSQLURLCensusTests {
    static let hostile = ["%00", "\u{0}", "\u{1B}[2J", "\n", "\r\n", "%0A", "%1B", "\u{7F}", "%", "%zz", "@", ":", "/",
                          "?", "#", "[", "]", "&options=-c%20search_path%3Devil", "&replication=database", "%26role%3Dadmin",
                          "\u{2028}", "é", "\u{301}", " "]

    static func pick<T>(_ values: [T], _ random: inout SeededGenerator) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

    /// One URL and the password it carries (nil when it has none).
    static func url(_ random: inout SeededGenerator) -> (text: String, password: String?) {
        func part(_ plain: String) -> String {
            guard Int.random(in: 0..<6, using: &random) == 0 else { return plain }
            var text = plain
            let at = text.index(text.startIndex, offsetBy: Int.random(in: 0...text.count, using: &random))
            text.insert(contentsOf: pick(hostile, &random), at: at)
            return text
        }
        let password = Bool.random(using: &random)
            ? "Pw" + String((0..<Int.random(in: 6...14, using: &random)).map { _ in pick(Array("abcdefghjkmnpqrstuvwxyz23456789"), &random) })
            : nil
        let user = part(pick(["ocd", "app", "a.b", "user_1"], &random))
        let host = part(pick(["127.0.0.1", "db.internal", "[::1]", "localhost", "127.0.0.1", "db.internal", ""], &random))
        let port = pick(["", ":5432", ":65535", "", ":5432", ":65536", ":99999999999", ":0", ":-1", ":54a"], &random)
        let database = part(pick(["ocd", "notes", "x"], &random))
        var parameters: [String] = []
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            parameters.append(part(pick(["schema=app", "sslmode=disable", "application_name=census", "pool_size=4",
                                         "connect_timeout=5", "schema=app", "sslmode=disable", "query_timeout=0", "schema=a-b", "unknown=1"], &random)))
        }
        let scheme = pick(["postgresql://", "postgres://", "postgresql://", "postgres://", "postgresql://", "postgresql://postgresql://", "http://"], &random)
        let credentials = user + (password.map { ":" + $0 } ?? "") + "@"
        let query = parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
        return (scheme + credentials + host + port + "/" + database + query, password)
    }

    /// Why an accepted configuration is wrong, nil when it is right. `password` is the one the URL was made
    /// with (a hostile `:` in the user may make another, which may be a letter the URL shows elsewhere).
    static func problem(in configuration: PostgreSQLStoreConfiguration, password: String?) -> String? {
        var parameters = [("host", configuration.host), ("user", configuration.username),
                          ("database", configuration.database), ("application_name", configuration.applicationName)]
        if let schema = configuration.schema { parameters.append(("schema", schema)) }
        for (name, value) in parameters where value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "\(name) \(value.debugDescription) holds a NUL or control character"
        }
        if configuration.host.isEmpty || configuration.username.isEmpty || configuration.database.isEmpty { return "an empty host, user or database" }
        if configuration.password?.unicodeScalars.contains("\0") == true { return "a password with a NUL" }
        if !(1...65_535).contains(configuration.port) { return "port \(configuration.port)" }
        if let schema = configuration.schema, !PostgreSQLStoreConfiguration.isSchemaName(schema) { return "schema \(schema.debugDescription)" }
        if let password, configuration.redactedURL.contains(password) { return "the redacted URL shows the password" }
        return nil
    }

    @Test func everyURLIsAcceptedCleanOrRefusedWithoutItsPassword() throws {
        let count = ProcessInfo.processInfo.environment["OCD_HOSTILE_INPUTS"].flatMap(Int.init) ?? 400
        var random = SeededGenerator(seed: 8)
        var accepted = 0, refused = 0, slowest = 0.0
        var wrong: [String] = []
        for _ in 0..<count {
            let (text, password) = Self.url(&random)
            let started = Date()
            do {
                let configuration = try PostgreSQLStoreConfiguration(url: text)
                if let problem = Self.problem(in: configuration, password: password) { wrong.append("\(text.debugDescription): \(problem)") } else { accepted += 1 }
            } catch let error as StoreError {
                if case .invalidURL = error {
                    if let password, error.description.contains(password) {
                        wrong.append("\(text.debugDescription): the refusal shows the password: \(error.description.debugDescription)")
                    } else {
                        refused += 1
                    }
                } else {
                    wrong.append("\(text.debugDescription): \(error), not invalidURL")
                }
            } catch {
                wrong.append("\(text.debugDescription): \(type(of: error)) \(error)")
            }
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        let row = "| PostgreSQL URLs | \(count) | \(accepted) | \(refused) | 0 | 0 | \(wrong.count) | \(String(format: "%.1f", slowest * 1000)) ms |"
        print(row)
        if let path = ProcessInfo.processInfo.environment["OCD_HOSTILE_TABLE"], let handle = FileHandle(forWritingAtPath: path) {
            handle.seekToEndOfFile()
            handle.write(Data((row + "\n").utf8))
            try handle.close()
        }
        #expect(accepted > count / 10 && refused > count / 10, "the generator should make both kinds: \(accepted) accepted, \(refused) refused")
        #expect(wrong.isEmpty, "\(wrong.count) wrong, e.g. \(wrong.prefix(3))")
    }
}
