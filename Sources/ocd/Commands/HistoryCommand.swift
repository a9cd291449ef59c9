import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd history <store>`: the store's persistent history, one transaction a line (read-only).
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print a store's persistent history, one transaction a line (read-only).",
        discussion: "Stores record history when written with --history (ocd import, todo, banks) or by an app with persistent history tracking on.")

    @Argument(help: "The store file.")
    var store: String

    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom); optional for stores ocd wrote or that carry their model.")
    var model: String?

    @Option(name: .long, help: "Only the transactions after this one (its number, as printed).")
    var after: Int64?

    @Option(name: .long, help: "Only changes of this entity (and its sub-entities).")
    var entity: String?

    @Flag(name: .long, help: "One JSON object per transaction: author, inserted, updated (with keys), deleted.")
    var json = false

    func run() async throws {
        let (opened, _) = try ModelLocator.openReadOnly(storePath: store, modelPath: model)
        let entityDescription = try TransactionText.entity(named: entity, in: opened.coordinator.managedObjectModel)
        guard try PersistentStore.hasPersistentHistory(at: opened.url) else {
            throw OCDError("\(store) has no persistent history (write it with --history, or with history tracking on)")
        }
        let context = opened.newContext()
        let identifier = opened.coordinator.persistentStores.first?.identifier ?? ""
        let token = after.map { PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: $0) }
        let result = try context.performAndWait {
            try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)) as? PersistentHistoryResult
        }
        for transaction in result?.transactions ?? [] {
            guard let shown = TransactionText.filtered(transaction, entity: entityDescription) else { continue }
            Console.line(json ? TransactionText.json(shown) : TransactionText.plain(shown))
        }
    }
}
