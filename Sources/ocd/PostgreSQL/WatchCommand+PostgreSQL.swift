import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

extension WatchCommand {
    /// `ocd watch postgresql://… --model M`: each transaction any instance commits from now on, from the
    /// store's change feed (LISTEN/NOTIFY, caught up from the history tables after a lost connection).
    func watch(_ configuration: PostgreSQLStoreConfiguration) async throws {
        let store = try PostgreSQLStoreOpener.store(configuration, model: PostgreSQLStoreOpener.model(model, for: configuration).model,
                                                    requiringHistory: true)
        defer { store.close() }
        let entityDescription = try TransactionText.entity(named: entity, in: store.model)
        let (transactions, continuation) = AsyncStream.makeStream(of: PersistentHistoryTransaction.self)
        let listener: PostgreSQLChangeListener
        do {
            let start = try store.historySummary()?.lastToken
            listener = try PostgreSQLChangeListener(store: store, after: start) { batch in
                for transaction in batch { continuation.yield(transaction) }
            }
        } catch {
            throw OCDError("cannot watch \(configuration.redactedURL): \(error)")
        }
        defer { listener.stop() }
        Console.error("Watching \(configuration.redactedURL)\(entity.map { " for \($0)" } ?? "") (Ctrl-C stops)")
        var printed = 0
        for await transaction in transactions {
            guard let shown = TransactionText.filtered(transaction, entity: entityDescription) else { continue }
            Console.line(plain ? TransactionText.plain(shown) : TransactionText.json(shown))
            printed += 1
            if let count, printed >= count { return }
        }
    }
}
