import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// `ocd history <store>`: the store's persistent history, one transaction a line (read-only).
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print a store's persistent history, one transaction a line (read-only).",
        discussion: """
            Stores record history when written with --history (ocd import, todo, banks) or by an app with persistent \
            history tracking on. A reader that registers (--register NAME) keeps pruning, by any process, from \
            deleting what it has not seen: each run with --register marks the newest transaction it read as seen. \
            --readers lists the registered readers; --unregister NAME removes one (a reader that stops for good must).
            """)

    @Argument(help: "The store file, or a postgresql:// URL (with --model, or ocd's own model it was written by).")
    var store: String

    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom); optional for stores ocd wrote or that carry their model.")
    var model: String?

    @Option(name: .long, help: "Only the transactions after this one (its number, as printed).")
    var after: Int64?

    @Option(name: .long, help: "Only changes of this entity (and its sub-entities).")
    var entity: String?

    @Flag(name: .long, help: "One JSON object per transaction: author, inserted, updated (with keys), deleted.")
    var json = false

    @Option(name: .long, help: "Register (or move) the history reader NAME: it has seen every transaction through the newest this run reads.")
    var register: String?

    @Flag(name: .long, help: "List the registered history readers (name, last transaction seen, when) instead of the history.")
    var readers = false

    @Option(name: .long, help: "Unregister the history reader NAME, so pruning no longer keeps history for it.")
    var unregister: String?

    func validate() throws {
        let actions = [register != nil, readers, unregister != nil].filter { $0 }.count
        guard actions <= 1 else { throw ValidationError("--register, --readers and --unregister go one at a time") }
        if readers || unregister != nil, after != nil || entity != nil {
            throw ValidationError("--after and --entity choose transactions to print; --readers and --unregister print none")
        }
    }

    func run() async throws {
        let location = try StoreLocation(store)
        let (opened, _) = try OpenedStore.openFindingModel(location, modelPath: model)
        defer { opened.close() }
        let entityDescription = try TransactionText.entity(named: entity, in: opened.coordinator.managedObjectModel)
        guard try opened.keepsHistory(at: location) else {
            throw OCDError("\(store) has no persistent history (write it with --history, or with history tracking on)")
        }
        if readers { return try listReaders(opened) }
        if let unregister { return try self.unregister(unregister, location, opened) }
        let context = opened.newContext()
        let identifier = try opened.coordinator.currentPersistentHistoryToken()?.storeIdentifier ?? ""
        let token = after.map { PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: $0) }
        let result = try context.performAndWait {
            try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token)) as? PersistentHistoryResult
        }
        let transactions = result?.transactions ?? []
        for transaction in transactions {
            guard let shown = TransactionText.filtered(transaction, entity: entityDescription) else { continue }
            Console.line(json ? TransactionText.json(shown) : TransactionText.plain(shown))
        }
        if let register {
            // Seen: every transaction read (the entity filter chooses what is printed, not what is read).
            let seen = transactions.last?.token ?? token
            try writing(location, opened) { try $0.registerPersistentHistoryReader(named: register, seenThrough: seen) }
            Console.error("registered reader '\(register)', seen through \(seen.map { String($0.transactionNumber) } ?? "nothing")")
        }
    }

    private func listReaders(_ opened: OpenedStore) throws {
        let registered: [PersistentHistoryReaderRegistration]
        do {
            registered = try opened.coordinator.persistentHistoryReaders()
        } catch {
            throw OCDError("cannot read the history readers of \(store): \(error)")
        }
        for reader in registered {
            let updated = DateText.iso8601(reader.updated)
            if json {
                Console.line("{\"name\":\(ValueText.quoted(reader.name)),\"seenThrough\":\(reader.seenThrough.transactionNumber),"
                             + "\"updated\":\(ValueText.quoted(updated))}")
            } else {
                Console.line("\(reader.name): seen through \(reader.seenThrough.transactionNumber), updated \(updated)")
            }
        }
    }

    private func unregister(_ name: String, _ location: StoreLocation, _ opened: OpenedStore) throws {
        var removed = false
        try writing(location, opened) { removed = try $0.unregisterPersistentHistoryReader(named: name) }
        guard removed else { throw OCDError("\(store) has no history reader named '\(name)'") }
        Console.error("unregistered reader '\(name)'")
    }

    /// Runs `body` on the store reopened for writing, with history tracking (what the reader registry needs),
    /// with the model the read-only open found.
    private func writing(_ location: StoreLocation, _ opened: OpenedStore, _ body: (PersistentStoreCoordinator) throws -> Void) throws {
        let model = opened.coordinator.managedObjectModel
        opened.coordinator.persistentStores.forEach(opened.coordinator.remove)
        opened.close()
        let writable = try OpenedStore.open(location, model: model, history: true)
        defer {
            writable.coordinator.persistentStores.forEach(writable.coordinator.remove)
            writable.close()
        }
        do {
            try body(writable.coordinator)
        } catch {
            throw OCDError("cannot change the history readers of \(store): \(error)")
        }
    }
}
