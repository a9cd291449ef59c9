import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

extension InspectCommand {
    /// The first line of `ocd inspect postgresql://…`: the server, the model and what the store's
    /// `Z_METADATA` holds (opening the store has checked its version hashes against the model).
    ///
    /// - Throws: ``OCDError`` when the metadata cannot be read.
    func printStoreSummary(of opened: OpenedStore, at configuration: PostgreSQLStoreConfiguration, modelName: String) throws {
        let store = try Self.postgreSQLStore(of: opened)
        do {
            let metadata = try store.metadata()
            Console.line("\(configuration.redactedURL) (model: \(modelName), store UUID \(metadata.uuidString), "
                + "NSStoreType \(metadata.storeType); its version hashes match the model)")
        } catch {
            throw OCDError("inspect failed: \(error)")
        }
    }

    /// The last line of `ocd inspect postgresql://…`: the rows of the store's persistent history tables.
    ///
    /// - Throws: ``OCDError`` when the history tables cannot be read.
    func printHistorySummary(of opened: OpenedStore) throws {
        let store = try Self.postgreSQLStore(of: opened)
        Console.line("")
        do {
            if let history = try store.historySummary() {
                Console.line("History: \(history.transactions) transaction\(history.transactions == 1 ? "" : "s") in ATRANSACTION, "
                    + "\(history.changes) change\(history.changes == 1 ? "" : "s") in ACHANGE, \(history.strings) in ATRANSACTIONSTRING"
                    + (history.lastToken.map { "; the last is #\($0.transactionNumber)" } ?? ""))
            } else {
                Console.line("History: none (the store keeps no persistent history tables)")
            }
        } catch {
            throw OCDError("inspect failed: \(error)")
        }
    }

    private static func postgreSQLStore(of opened: OpenedStore) throws -> PostgreSQLStore {
        guard let store = opened.coordinator.postgreSQLStores.first else { throw OCDError("no PostgreSQL store is open") }
        return store
    }
}
