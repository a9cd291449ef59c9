import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd banks browse`: the banks table of seed 004, interactive on a terminal, plain text otherwise.
struct BanksBrowseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "Browse banks by state, newest closing first (fetchBatchSize 20); plain text without a terminal.")

    @OptionGroup var storeArguments: StoreArguments

    @Flag(name: .long, help: "Insert, edit and delete banks from a background context every second.")
    var live = false

    @Flag(name: .long, help: "Print the sections as plain text even on a terminal.")
    var plain = false

    @Option(name: .long, help: "In plain text: then wait for this many changes saved elsewhere (other processes too), printing the list again after each.")
    var follow: Int?

    func validate() throws {
        if let follow, follow <= 0 { throw ValidationError("--follow must be at least 1") }
    }

    func run() async throws {
        storeArguments.configureLogging()
        let store = try OpenedStore.open(storeArguments.location(defaultName: BanksCommand.defaultStoreName),
                                         model: BankModel.make(), history: storeArguments.history,
                                         watch: true)
        defer { store.close() }
        let context = store.newContext()
        if try BankImporter.count(in: context) == 0 {
            // A first run: fill the store, so browse works on its own.
            let records = try FailedBankRecord.records(fromCSV: BankImporter.bundledCSV())
            try BankImporter.importRecords(records, into: context)
        }
        // The list's context merges saves of other contexts on the store (the live editor's, with --live),
        // and its fetched results controller reports just the rows that changed.
        let listContext = store.newContext()
        listContext.performAndWait { listContext.automaticallyMergesChangesFromParent = true }
        let list = BankSections(context: listContext)
        try list.performFetch()
        if plain || !Console.isInteractive {
            PlainSectionsPrinter.print(list)
            if let follow { await printChanges(of: list, count: follow, in: store) }
            return
        }
        await BankBrowser(list: list).run(live: live ? LiveBankEditor(store: store) : nil)
    }

    /// `--follow`: waits for `count` changes the list's controller reports (saves of other processes,
    /// merged into the list's context as they commit) and prints each, then the list again.
    private func printChanges(of list: BankSections, count: Int, in store: OpenedStore) async {
        let (changes, continuation) = AsyncStream.makeStream(of: BankSections.Change.self)
        list.observeChanges { continuation.yield($0) }
        Console.error("Following \(store.displayName) for \(count) change\(count == 1 ? "" : "s") (Ctrl-C stops)")
        var printed = 0
        for await change in changes {
            Console.line("")
            Console.line("Changed elsewhere: \(change.summary)")
            PlainSectionsPrinter.print(list)
            printed += 1
            if printed >= count { return }
        }
    }
}
