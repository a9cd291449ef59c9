import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// The crash harness with persistent history on: the worker saves (and runs batch requests) in a loop,
    /// recording history, and is killed with SIGKILL at random moments. After each kill, besides the data
    /// checks of ``CrashRecoveryTests``, the history must hold exactly one transaction per committed save
    /// (none for a save that did not commit, none missing), and replaying every transaction's changes from an
    /// empty store must give exactly the objects the store holds.
    @Suite(.serialized) struct HistoryCrashTests {
        /// How many kills the test runs; `OCD_HISTORY_CRASH_KILLS` raises it (scripts/crash-kills.sh).
        static var kills: Int { ProcessInfo.processInfo.environment["OCD_HISTORY_CRASH_KILLS"].flatMap(Int.init) ?? 10 }

        /// What is wrong with the store's history, one line per problem (empty when it matches the data).
        static func historyProblems(store: URL, committedSaves: Int) throws -> [String] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
            try coordinator.addPersistentStore(type: .sqlite, at: store, options: StoreOptions(readOnly: true))
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            guard let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
                    as? PersistentHistoryResult else { return ["no history result"] }
            var problems: [String] = []
            let saves = result.transactions.filter { $0.author == "save" }
            if saves.count != committedSaves {
                problems.append("\(saves.count) save transactions for \(committedSaves) committed saves")
            }
            for transaction in result.transactions where transaction.author != "save" && transaction.author != "batch" {
                problems.append("transaction \(transaction.transactionNumber) by unknown author \(transaction.author ?? "nil")")
            }
            for save in saves where save.changes?.filter({ $0.changedObjectID.entity.name == "Progress" }).count != 1 {
                problems.append("save transaction \(save.transactionNumber) does not change the progress row exactly once")
            }
            // Replay: each change must fit the objects alive before it, and the end must be the store's objects.
            var live: [String: Set<Int64>] = [:]
            for transaction in result.transactions {
                let changes = transaction.changes ?? []
                if changes.isEmpty { problems.append("transaction \(transaction.transactionNumber) has no changes") }
                let deletedHere = Set(changes.filter { $0.changeType == .delete }.map(\.changedObjectID))
                var seen = Set<ManagedObjectID>()
                for change in changes where change.changeType != .update {
                    if !seen.insert(change.changedObjectID).inserted {
                        problems.append("transaction \(transaction.transactionNumber) inserts or deletes \(change.changedObjectID) twice")
                    }
                }
                for change in changes where change.changeType == .insert {
                    let id = change.changedObjectID
                    if live[id.entity.name, default: []].insert(id.primaryKey).inserted == false {
                        problems.append("transaction \(transaction.transactionNumber) inserts \(id), which exists")
                    }
                }
                for change in changes where change.changeType == .update {
                    let id = change.changedObjectID
                    if !(live[id.entity.name]?.contains(id.primaryKey) ?? false) && !deletedHere.contains(id) {
                        problems.append("transaction \(transaction.transactionNumber) updates \(id), which does not exist")
                    }
                }
                for change in changes where change.changeType == .delete {
                    let id = change.changedObjectID
                    if live[id.entity.name]?.remove(id.primaryKey) == nil {
                        problems.append("transaction \(transaction.transactionNumber) deletes \(id), which does not exist")
                    }
                }
            }
            for entity in ["Folder", "Note", "Label", "Attachment", "Progress"] {
                let stored = Set(try context.fetch(FetchRequest<ManagedObject>(entityName: entity)).map(\.objectID.primaryKey))
                let replayed = live[entity] ?? []
                if stored != replayed {
                    problems.append("\(entity): stored but not in history \(stored.subtracting(replayed).sorted().prefix(5)), "
                                    + "in history but not stored \(replayed.subtracting(stored).sorted().prefix(5))")
                }
            }
            return problems
        }

        /// The check itself catches what it is for: a save without its transaction, an orphan transaction,
        /// a change row naming an object that is not there.
        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
        func theHistoryCheckCatchesAMissingAnOrphanAndAWrongTransaction() throws {
            let directory = TemporaryDirectory()
            let store = directory.file("History.sqlite"), log = directory.file("history.log")
            #expect(try WorkerProcess.run(["run-history", store.path, log.path, "6"]).status == 0)
            #expect(try Self.historyProblems(store: store, committedSaves: 6).isEmpty)
            func damaged(_ sql: String) throws -> [String] {
                let copy = directory.file("Damaged-\(UUID().uuidString).sqlite")
                try FileManager.default.copyItem(at: store, to: copy)
                try DatabaseQueue(path: copy.path).write { try $0.execute(sql: sql) }
                return try Self.historyProblems(store: copy, committedSaves: 6)
            }
            // The last save's transaction gone (its changes with it).
            let last = "(SELECT MAX(Z_PK) FROM ATRANSACTION)"
            #expect(try !damaged("DELETE FROM ACHANGE WHERE ZTRANSACTIONID = \(last); DELETE FROM ATRANSACTION WHERE Z_PK = \(last)").isEmpty)
            // An orphan: a transaction inserting an object the store does not hold.
            #expect(try !damaged("""
                INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZTIMESTAMP)
                    SELECT MAX(Z_PK) + 1, 16002, 1, (SELECT ZAUTHORTS FROM ATRANSACTION LIMIT 1), 0 FROM ATRANSACTION;
                INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID)
                    SELECT MAX(Z_PK) + 1, 16001, 1, 0, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Label'), 999999,
                           (SELECT MAX(Z_PK) FROM ATRANSACTION) FROM ACHANGE
                """).isEmpty)
            // A change row naming another object than the one saved.
            #expect(try !damaged("UPDATE ACHANGE SET ZENTITYPK = ZENTITYPK + 1000 WHERE Z_PK = (SELECT MIN(Z_PK) FROM ACHANGE)").isEmpty)
        }

        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
        func killedHistoryWriterLeavesExactlyOneTransactionPerCommittedSave() throws {
            let directory = TemporaryDirectory()
            let store = directory.file("History.sqlite"), log = directory.file("history.log")
            var random = SystemRandomNumberGenerator()
            var reached = 0
            for round in 1...Self.kills {
                let worker = try WorkerProcess.start(["run-history", store.path, log.path])
                let delay = round <= 2 ? Double.random(in: 0.0...0.15, using: &random) : Double.random(in: 0.1...0.6, using: &random)
                Thread.sleep(forTimeInterval: delay)
                worker.kill(SIGKILL)
                try worker.wait()
                let outcome = try CrashRecoveryTests.verify(store: store, log: log, round: round)
                reached = outcome.iteration
                guard FileManager.default.fileExists(atPath: store.path) else { continue }
                let problems = try Self.historyProblems(store: store, committedSaves: outcome.iteration)
                #expect(problems.isEmpty, "round \(round), iteration \(outcome.iteration): \(problems.prefix(8))")
            }
            #expect(reached > 0)
            print("HistoryCrashTests: \(Self.kills) kills survived, store at iteration \(reached), history matching every save")
        }
    }
}
