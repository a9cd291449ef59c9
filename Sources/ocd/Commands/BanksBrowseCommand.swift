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

    func run() async throws {
        storeArguments.configureLogging()
        let store = try OpenedStore.open(path: storeArguments.path(defaultName: BanksCommand.defaultStoreName),
                                         model: BankModel.make(), history: storeArguments.history,
                                         watch: true)
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
            return
        }
        await BankBrowser(list: list).run(live: live ? LiveBankEditor(store: store) : nil)
    }
}
