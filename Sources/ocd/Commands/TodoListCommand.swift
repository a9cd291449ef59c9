import ArgumentParser
import OpenCoreData

/// `ocd todo list`: the asynchronous fetch of seed 000, with progress and Ctrl-C to cancel.
struct TodoListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Fetch every item asynchronously with live progress (Ctrl-C cancels).")

    @OptionGroup var storeArguments: StoreArguments

    func run() async throws {
        storeArguments.configureLogging()
        let store = try OpenedStore.open(storeArguments.location(defaultName: TodoCommand.defaultStoreName),
                                         model: TodoModel.make(), history: storeArguments.history, creating: false)
        defer { store.close() }
        TodoListCommand.report(try await AsyncItemFetch.run(store, expected: try TodoListCommand.itemCount(store)))
    }

    /// The number of items, the asynchronous fetch's progress total (Core Data cannot know it in advance).
    static func itemCount(_ store: OpenedStore) throws -> Int {
        let context = store.newContext()
        return try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }
    }

    static func report(_ outcome: AsyncItemFetch.Outcome) {
        switch outcome {
        case .fetched(let count, let seconds, let names):
            Console.line("  Fetched \(count) records in \(String(format: "%.2f", seconds))s; first: \(names.joined(separator: ", "))")
        case .cancelled(let rows):
            Console.line("  The fetch was cancelled after \(rows) records; nothing was loaded into the context.")
        }
    }
}
