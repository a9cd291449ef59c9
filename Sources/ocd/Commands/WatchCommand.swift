import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd watch <store>`: one line per transaction any process commits to the store, as it happens.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each transaction any process commits to a store, as it happens (read-only; Ctrl-C stops).",
        discussion: "With persistent history in the store, each line says who committed and what changed; without it, only that the store changed.")

    @Argument(help: "The store file, or a postgresql:// URL (with --model, or ocd's own model it was written by).")
    var store: String

    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom); optional for stores ocd wrote or that carry their model.")
    var model: String?

    @Option(name: .long, help: "Only changes of this entity (and its sub-entities).")
    var entity: String?

    @Option(name: .long, help: "Stop after this many lines.")
    var count: Int?

    @Flag(name: .long, help: "Plain text instead of one JSON object a line.")
    var plain = false

    func validate() throws {
        if let count, count <= 0 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        if case .postgreSQL(let configuration) = try StoreLocation(store) { return try await watch(configuration) }
        let (opened, _) = try ModelLocator.openFindingModel(storePath: store, modelPath: model, watch: true)
        let entityDescription = try TransactionText.entity(named: entity, in: opened.coordinator.managedObjectModel)
        let changes = opened.coordinator.remoteChanges
        var last = try opened.coordinator.currentPersistentHistoryToken()
        Console.error("Watching \(opened.url.path)\(entity.map { " for \($0)" } ?? "") (Ctrl-C stops)")
        let context = opened.newContext()
        var printed = 0
        for await change in changes {
            var lines: [String] = []
            if let token = change.historyToken {
                if let seen = last, token.transactionNumber < seen.transactionNumber {
                    // The numbers went backwards (history cleared, the file replaced): every transaction
                    // the store holds now is new to this watch.
                    last = nil
                }
                let after = last
                let result = try context.performAndWait {
                    try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: after)) as? PersistentHistoryResult
                }
                for transaction in result?.transactions ?? [] {
                    last = transaction.token
                    guard let shown = TransactionText.filtered(transaction, entity: entityDescription) else { continue }
                    lines.append(plain ? TransactionText.plain(shown) : TransactionText.json(shown))
                }
            } else {
                lines.append(plain ? "the store changed (it keeps no history: write it with --history for details)"
                                   : "{\"changed\":true,\"history\":false}")
            }
            for line in lines {
                Console.line(line)
                printed += 1
                if let count, printed >= count { return }
            }
        }
    }
}
