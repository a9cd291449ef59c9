import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Persistent history and the change feed on a real server: every save by any instance reaches every
/// listener once, in commit order, with its changes; a listener that lost its connection catches up.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLChangeFeedTests {
    /// Waits (polling, bounded) until `condition` holds; false when it never did.
    static func eventually(_ seconds: Double = 20, _ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    static func tagInsert(_ model: ManagedObjectModel, key: Int64, label: String) -> StoreChangeSet.Insert {
        let tag = model.entitiesByName["Tag"]!
        let table = model.schema.table(named: "ZTAG")!
        var row = RowValues(repeating: .null, count: table.columns.count)
        row[0] = key.storeValue; row[1] = Int64(tag.entityNumber).storeValue; row[2] = 1.storeValue
        row[table.columnIndexByName["ZLABEL"]!] = label.storeValue
        return .init(id: ManagedObjectID(entity: tag, primaryKey: key, store: nil), table: "ZTAG", row: row)
    }

    /// A save with history on records its transaction and changes in Core Data's tables, in the same
    /// transaction as the data: a refused save records nothing.
    @Test func savesRecordTheirTransactionWithTheirData() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let store = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true)
        defer { store.close() }
        let tag = model.entitiesByName["Tag"]!
        let labelSlot = tag.allProperties.firstIndex { $0.name == "label" }!
        try store.apply(StoreChangeSet(inserts: [Self.tagInsert(model, key: 1, label: "a"), Self.tagInsert(model, key: 2, label: "b")]),
                        history: HistoryEntry(author: "importer", contextName: "background", changes: [
                            .init(type: .insert, entityNumber: tag.entityNumber, primaryKey: 1),
                            .init(type: .insert, entityNumber: tag.entityNumber, primaryKey: 2)]))
        let label = model.schema.table(named: "ZTAG")!.columnIndexByName["ZLABEL"]!
        try store.apply(StoreChangeSet(updates: [.init(id: ManagedObjectID(entity: tag, primaryKey: 1, store: nil), table: "ZTAG",
                                                       expectedVersion: 1, values: [(label, "c".storeValue)])],
                                       deletes: [.init(id: ManagedObjectID(entity: tag, primaryKey: 2, store: nil), table: "ZTAG", expectedVersion: 1)]),
                        history: HistoryEntry(author: "editor", changes: [
                            .init(type: .update, entityNumber: tag.entityNumber, primaryKey: 1, updatedSlots: [labelSlot])]))
        // Refused (U+0000): neither data nor history.
        #expect(throws: StoreError.self) {
            try store.apply(StoreChangeSet(inserts: [Self.tagInsert(model, key: 3, label: "\u{0}")]),
                            history: HistoryEntry(author: "bad", changes: [.init(type: .insert, entityNumber: tag.entityNumber, primaryKey: 3)]))
        }
        let transactions = try store.pool.withSession {
            try PostgreSQLHistory.transactions(after: 0, limit: 100, model: model, storeIdentifier: store.identifier, in: $0)
        }
        #expect(transactions.map(\.author) == ["importer", "editor"])
        #expect(transactions[0].contextName == "background")
        #expect(transactions[0].changes?.map(\.changeType) == [.insert, .insert])
        #expect(transactions[1].changes?.map(\.changeType) == [.update, .delete])
        #expect(transactions[1].changes?[0].updatedProperties == ["label"])
        #expect(transactions[1].changes?[1].changedObjectID.primaryKey == 2)
        #expect(transactions[1].transactionNumber > transactions[0].transactionNumber)
    }

    /// Four instances save at once while two listeners in other instances listen: each listener gets every
    /// transaction exactly once, in increasing order, with the changes each save made.
    @Test func everyListenerGetsEveryTransactionOnceInOrder() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let tag = model.entitiesByName["Tag"]!
        let listeningStores = try (0..<2).map { _ in try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true) }
        defer { listeningStores.forEach { $0.close() } }
        let received = (0..<2).map { _ in Received() }
        let listeners = try listeningStores.indices.map { index in
            try PostgreSQLChangeListener(store: listeningStores[index], after: nil) { batch in
                received[index].items.withLock { $0 += batch }
            }
        }
        defer { listeners.forEach { $0.stop() } }

        let writers = 4, saves = 25
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            do {
                let store = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true)
                defer { store.close() }
                for save in 0..<saves {
                    let key = try store.reservePrimaryKeys(root: tag, count: 1)
                    try store.apply(StoreChangeSet(inserts: [Self.tagInsert(model, key: key, label: "\(writer)-\(save)")]),
                                    history: HistoryEntry(author: "writer\(writer)", changes: [.init(type: .insert, entityNumber: tag.entityNumber, primaryKey: key)]))
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        for index in received.indices {
            #expect(Self.eventually { received[index].items.withLock { $0.count } >= writers * saves })
            let transactions = received[index].items.withLock { $0 }
            let numbers = transactions.map(\.transactionNumber)
            #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "delivered out of order or twice")
            #expect(transactions.count == writers * saves)
            #expect(transactions.allSatisfy { $0.changes?.count == 1 && $0.changes?[0].changeType == .insert })
            let keys = transactions.compactMap { $0.changes?.first?.changedObjectID.primaryKey }
            #expect(Set(keys).count == writers * saves)
        }
    }

    /// The server closes the listener's connection (as a restart or a network cut would); saves made while it
    /// was away arrive after it reconnects, none lost, none twice.
    @Test func listenerCatchesUpAfterLosingItsConnection() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let tag = model.entitiesByName["Tag"]!
        let store = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true)
        defer { store.close() }
        let received = Mutex<[Int64]>([])
        let listener = try PostgreSQLChangeListener(store: store, after: nil) { batch in
            received.withLock { $0 += batch.map(\.transactionNumber) }
        }
        defer { listener.stop() }
        func save(_ key: Int64) throws {
            try store.apply(StoreChangeSet(inserts: [Self.tagInsert(model, key: key, label: "x")]),
                            history: HistoryEntry(changes: [.init(type: .insert, entityNumber: tag.entityNumber, primaryKey: key)]))
        }
        try save(1)
        #expect(Self.eventually { received.withLock { $0.count } == 1 })
        // Cut every listening connection of this schema's channel from the server side.
        let cut = try store.pool.withSession { session in
            try session.rows("""
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE pid <> pg_backend_pid() AND datname = current_database() AND query = ?
                """, ["LISTEN \(store.historyChannel)".storeValue])
        }
        #expect(!cut.isEmpty, "no listening connection was found to cut: the test did not test")
        for key in 2...6 { try save(Int64(key)) }
        #expect(Self.eventually { received.withLock { $0.count } == 6 })
        let numbers = received.withLock { $0 }
        #expect(numbers == numbers.sorted() && Set(numbers).count == 6)
        #expect(listener.reconnections >= 1)
    }

    @Test func listenerRefusesAStoreWithoutHistoryAndAForeignToken() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let plain = try PostgreSQLStore(model: model, configuration: configuration)
        #expect(throws: StoreError.self) { _ = try PostgreSQLChangeListener(store: plain, after: nil) { _ in } }
        plain.close()
        let tracked = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true)
        defer { tracked.close() }
        #expect(throws: StoreError.self) {
            _ = try PostgreSQLChangeListener(store: tracked, after: PersistentHistoryToken(storeIdentifier: "OTHER", transactionNumber: 1)) { _ in }
        }
    }

    /// What one listener received (`Mutex` is not copyable, so each lives in an object of its own).
    private final class Received: Sendable {
        let items = Mutex<[PersistentHistoryTransaction]>([])
    }
}
