import Foundation
import Testing
import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Store URLs and the environment, read without a server.
struct PostgreSQLStoreConfigurationTests {
    @Test func readsEveryPartOfAURL() throws {
        let configuration = try PostgreSQLStoreConfiguration(
            url: "postgresql://app%40eu:p%2Fss@db.example.com:6432/shop%20one?schema=tenant_1&sslmode=require&pool_size=12&connect_timeout=2.5&query_timeout=30&application_name=web")
        #expect(configuration.username == "app@eu")
        #expect(configuration.password == "p/ss")
        #expect(configuration.host == "db.example.com")
        #expect(configuration.port == 6432)
        #expect(configuration.database == "shop one")
        #expect(configuration.schema == "tenant_1")
        #expect(configuration.transportSecurity == .require)
        #expect(configuration.poolSize == 12)
        #expect(configuration.connectTimeout == 2.5)
        #expect(configuration.queryTimeout == 30)
        #expect(configuration.applicationName == "web")
        #expect(!configuration.redactedURL.contains("p/ss"))
    }

    @Test func defaultsAndOtherSpellings() throws {
        let configuration = try PostgreSQLStoreConfiguration(url: "postgres://ocd@[::1]/ocd")
        #expect(configuration.host == "::1")
        #expect(configuration.port == 5432)
        #expect(configuration.schema == nil)
        #expect(configuration.transportSecurity == .prefer)
        #expect(configuration.poolSize == 4)
        #expect(configuration.redactedURL == "postgresql://ocd@[::1]:5432/ocd")
    }

    /// Each malformed URL is refused with a reason naming the culprit, and the password never appears.
    @Test(arguments: [
        ("mysql://a@h/d", "scheme"),
        ("postgresql://a@/d", "no host"),
        ("postgresql://h/d", "no user"),
        ("postgresql://a@h", "no database"),
        ("postgresql://a@h/d/e", "no database"),
        ("postgresql://a@h:0/d", "port 0"),
        ("postgresql://a:secret@h/d?sslmod=disable", "unknown parameter 'sslmod'"),
        ("postgresql://a:secret@h/d?sslmode=always", "sslmode 'always'"),
        ("postgresql://a@h/d?pool_size=0", "pool_size '0'"),
        ("postgresql://a@h/d?pool_size=x", "pool_size 'x'"),
        ("postgresql://a@h/d?connect_timeout=-1", "connect_timeout '-1'"),
        ("postgresql://a@h/d?query_timeout=0", "query_timeout '0'"),
        ("postgresql://a@h/d?schema=a;drop", "schema 'a;drop'"),
        ("postgresql://a@h/d?schema=1abc", "schema '1abc'"),
        ("postgresql://a@h/d?schema=a&schema=b", "given twice"),
        // A NUL would end the name early in the startup message and let the rest add parameters of its own.
        ("postgresql://a%00options@h/d", "user"),
        ("postgresql://a:se%00cret@h/d", "password"),
        ("postgresql://a@h/d%00replication", "database"),
        ("postgresql://a@h/d?application_name=x%00role", "application_name"),
        ("postgresql://a@h/d?application_name=x%0Ay", "application_name"),
        ("postgresql://a@h%00x/d", "host"),
        // Ports URLComponents cannot hold must not quietly become 5432.
        ("postgresql://a@h:65536/d", "port 65536"),
        ("postgresql://a@h:99999999999999999999/d", "port"),
        ("postgresql://a@h:12ab/d", "not a URL"),
        ("postgresql://a@[::1]:70000/d", "port 70000"),
        // Malformed URLs with a password: the password is never echoed.
        ("postgresql://a:secret@h:x y/d", "not a URL"),
        ("postgresql://a:secret@[::1/d", "not a URL"),
        ("postgresql ://a:secret@h/d", "not a URL"),
        // Found by FuzzPostgreSQLURL: URLs URLComponents reads without a password, shown whole. A scheme before
        // `postgresql://` (as JDBC writes), and a `?` in the password (libpq ends the user at the first `@`;
        // URLComponents reads host `a`, port 1234 and a query).
        ("jdbc:postgresql://a:secret@h/d", "scheme"),
        ("po3tg:secresql://a:secret@[::3/d", "scheme"),
        ("postgresql://a:1234?secret@h/d", "no user"),
        // URLComponents reads the first `//` as the authority and rewrites the text after it (`h://` becomes
        // `h//`), so the password's `://` is gone from what was redacted.
        ("//u:pass@h://a:secret@h/d?x=postgresql://b:c@e", "scheme"),
        // A combining mark after `:` or `@` joins it into another Character; URL readers still see the delimiter.
        ("postgresql://a:\u{301}secret@h/d?sslmod=disable", "unknown parameter 'sslmod'"),
        ("postgresql://a:secret@\u{301}h/d", "not a URL"),
        // Also found by it: an IPv6 literal with nothing inside was taken for an empty host name.
        ("postgresql://a@[]/d", "no host"),
    ])
    func refusesWithTheCulprit(url: String, culprit: String) {
        do {
            _ = try PostgreSQLStoreConfiguration(url: url)
            Issue.record("accepted \(url)")
        } catch let error as StoreError {
            guard case .invalidURL(let shown, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains(culprit), "\(reason)")
            #expect(!shown.contains("secret"))
            #expect(!error.description.contains("secret"))
        } catch {
            Issue.record("untyped error \(error)")
        }
    }

    @Test func readsTheEnvironment() throws {
        #expect(try PostgreSQLStoreConfiguration.fromEnvironment([:]) == nil)
        let fromURL = try PostgreSQLStoreConfiguration.fromEnvironment(["DATABASE_URL": "postgresql://u@h:7/d", "PGHOST": "other"])
        #expect(fromURL?.host == "h" && fromURL?.port == 7)
        let fromVariables = try PostgreSQLStoreConfiguration.fromEnvironment(
            ["PGHOST": "db", "PGPORT": "5433", "PGUSER": "u", "PGPASSWORD": "pw", "PGDATABASE": "d"])
        #expect(fromVariables == PostgreSQLStoreConfiguration(host: "db", port: 5433, username: "u", password: "pw", database: "d"))
        #expect(throws: StoreError.self) { try PostgreSQLStoreConfiguration.fromEnvironment(["PGHOST": "db", "PGPORT": "x", "PGUSER": "u"]) }
    }

    @Test func numbersPlaceholdersOutsideQuotes() {
        let (sql, count) = PostgreSQLStatementText.numberingPlaceholders(#"SELECT '?', "a?b" FROM t WHERE x = ? AND y IN (?, ?)"#)
        #expect(sql == #"SELECT '?', "a?b" FROM t WHERE x = $1 AND y IN ($2, $3)"#)
        #expect(count == 3)
    }
}
