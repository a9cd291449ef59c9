import ArgumentParser
import OpenCoreData

/// `ocd todo stats`: seed 001's statistics summary from background operations.
struct TodoStatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "A statistics summary computed by background operations, line by line.")

    @OptionGroup var storeArguments: StoreArguments

    func run() async throws {
        storeArguments.configureLogging()
        let store = try OpenedStore.open(storeArguments.location(defaultName: TodoCommand.defaultStoreName),
                                         model: TodoModel.make(), history: storeArguments.history)
        defer { store.close() }
        await StatisticsSummary.run(store, indent: "")
    }
}
