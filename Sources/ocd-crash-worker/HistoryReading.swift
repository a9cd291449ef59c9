import Foundation
import OpenCoreData

/// A history reader in its own process, for the pruning tests: it registers under a name, reads what it
/// has not seen, and says so, as an app's indexer or sync agent would.
enum HistoryReading {
    static func readUnseen(storePath: String, reader: String) throws {
        let driver = try StoreDriver(storePath: storePath, history: true)
        let coordinator = driver.coordinator
        let mark = try coordinator.persistentHistoryReaders().first { $0.name == reader }?.seenThrough
        let context = driver.context()
        guard let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: mark)) as? PersistentHistoryResult else {
            fail("the history request returned no history result")
        }
        say((["read"] + result.transactions.map { String($0.transactionNumber) }).joined(separator: " "))
        try coordinator.registerPersistentHistoryReader(named: reader, seenThrough: result.transactions.last?.token ?? mark)
    }
}
