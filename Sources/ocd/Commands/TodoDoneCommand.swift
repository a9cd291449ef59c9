import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd todo done`: seed 003's batch update marking every unread item read, optionally next to the
/// per-object way.
struct TodoDoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "done", abstract: "Mark every unread item read with one batch update.")

    @OptionGroup var storeArguments: StoreArguments

    @Flag(name: .long, help: "Also time the per-object way (items are marked unread again between the two).")
    var compare = false

    func run() async throws {
        storeArguments.configureLogging()
        let store = try OpenedStore.open(storeArguments.location(defaultName: TodoCommand.defaultStoreName),
                                         model: TodoModel.make(), history: storeArguments.history)
        defer { store.close() }
        try TodoDoneCommand.markAllRead(store, compare: compare, indent: "")
    }

    /// Runs the batch update (after the per-object way, if comparing) and prints the figures side by side.
    static func markAllRead(_ store: OpenedStore, compare: Bool, indent: String) throws {
        var perObject: MarkAllRead.Measurement?
        if compare {
            perObject = try MarkAllRead.perObject(store)
            try MarkAllRead.markAllUnread(store)
        }
        let (batch, unread) = try MarkAllRead.batch(store)
        Console.line("\(indent)Batch update: marked \(batch.updated) of \(unread) unread items read in \(seconds(batch.seconds)), memory +\(megabytes(batch.residentGrowthMB))")
        if let perObject {
            Console.line("\(indent)Per object:   marked \(perObject.updated) items read in \(seconds(perObject.seconds)), memory +\(megabytes(perObject.residentGrowthMB))")
            let ratio = batch.seconds > 0 ? perObject.seconds / batch.seconds : 0
            Console.line("\(indent)The batch update was \(String(format: "%.0f", ratio))× faster: one UPDATE statement, no objects loaded.")
        }
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.3fs", value) }
    private static func megabytes(_ value: Double) -> String { String(format: "%.1f MB", max(0, value)) }
}
