import ArgumentParser
import OpenCoreData

/// `ocd todo populate`: inserts to-do items (and sessions) with a progress bar.
struct TodoPopulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "populate", abstract: "Insert to-do items (and a quarter as many yoga/meditation sessions).")

    @OptionGroup var storeArguments: StoreArguments

    @Option(name: .long, help: "How many items (seed 000 uses 1000000).")
    var count = 20_000

    func validate() throws {
        guard count > 0 else { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        storeArguments.configureLogging()
        let store = try OpenedStore.open(storeArguments.location(defaultName: TodoCommand.defaultStoreName),
                                         model: TodoModel.make(), history: storeArguments.history)
        defer { store.close() }
        let (items, sessions) = try TodoPopulation.populate(store, count: count,
                                                           progress: ProgressBar(title: "Inserting", total: count))
        Console.line("Inserted \(items) items and \(sessions) sessions into \(store.displayName).")
    }
}
