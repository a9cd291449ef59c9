import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL
#if canImport(Glibc)
import Glibc
#endif

/// A server that stops answering without closing the connection (a network partition, a frozen host): with
/// `query_timeout` set, a statement gives up with ``StoreError/connectionLost`` instead of waiting
/// forever, and the store goes on once the server answers again.
@Suite(.enabled(if: PrivatePostgreSQLServer.isAvailable, PrivatePostgreSQLServer.skipReason))
struct PostgreSQLUnresponsiveServerTests {
    @Test func aStatementTheServerNeverAnswersTimesOut() throws {
        // A server of the test's own: its backend is frozen (SIGSTOP), which nobody else may meet.
        let server = try PrivatePostgreSQLServer()
        defer { server.remove() }
        let configuration = try PostgreSQLStoreConfiguration(url: server.url + "&query_timeout=2&pool_size=1")
        #expect(configuration.queryTimeout == 2)
        let model = try LibraryModel.make()
        let tag = model.entitiesByName["Tag"]!
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        defer { store.close() }
        try store.apply(StoreChangeSet(inserts: [PostgreSQLChangeFeedTests.tagInsert(model, key: 1, label: "a")]))
        // The pool's one connection, frozen on the server's side: the socket stays open, no reply comes.
        let backend = try #require(try store.pool.withSession { try $0.rows("SELECT pg_backend_pid()") }
            .first.flatMap { Int32.fromStoreValue($0[0]) })
        #expect(kill(backend, SIGSTOP) == 0)
        let outcome = Mutex<Result<Int, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { try store.count(entity: tag, predicate: nil) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        let answered = done.wait(timeout: .now() + 60) == .success
        _ = kill(backend, SIGCONT)
        #expect(answered, "the count waited on the frozen server past 60 s")
        if !answered { done.wait() }
        let result = try #require(outcome.withLock { $0 })
        guard case .failure(let error) = result, case StoreError.connectionLost(_, let reason) = error else {
            Issue.record("the count on a frozen server gave \(result), not connectionLost")
            return
        }
        #expect(reason.contains("2 s"), "\(reason)")
        // The frozen connection was closed; the next statement runs on a fresh one.
        #expect(try store.count(entity: tag, predicate: nil) == 1)
    }
}
