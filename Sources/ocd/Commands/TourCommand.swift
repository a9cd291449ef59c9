import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd tour`: one narrated pass through every seed on a fresh store.
struct TourCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tour",
        abstract: "A narrated pass through every seed tutorial on fresh stores.")

    @Option(name: .long, help: "How many to-do items (the seeds' full size: 1000000).")
    var count = 20_000

    @Option(name: .long, help: "The folder for the stores (default: a temporary folder, removed afterwards).")
    var folder: String?

    func validate() throws {
        guard count > 0 else { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        // Trace SQL from the start (the library decides once), but show it only in the banks step.
        SQLLog.enable(visible: false)
        let directory = try makeFolder()
        defer { if folder == nil { try? FileManager.default.removeItem(at: directory) } }
        let started = Date()
        Console.line("OpenCoreData tour: Core Data's API on Linux, stores in \(directory.path)")

        heading("1. Populate (seed 000): \(count) to-do items with batch inserts")
        let todo = try OpenedStore.open(path: directory.appendingPathComponent("Todo.sqlite").path, model: TodoModel.make())
        let (items, sessions) = try TodoPopulation.populate(todo, count: count, progress: ProgressBar(title: "  Inserting", total: count))
        Console.line("  \(items) items and \(sessions) yoga/meditation sessions saved.")

        heading("2. Asynchronous fetch (seed 000): the fetch runs in the background; Ctrl-C cancels it")
        TodoListCommand.report(try await AsyncItemFetch.run(todo, expected: items))

        heading("3. Background fetch of IDs (seed 002): IDs cross threads, objects stay in their context")
        let ids = try await BackgroundIDFetch.run(todo, show: 3)
        Console.line("  \(ids.ids) IDs in \(String(format: "%.3f", ids.seconds))s; the newest: \(ids.names.joined(separator: ", "))")

        heading("4. Batch update (seed 003): mark every unread item read, next to the per-object way")
        try TodoDoneCommand.markAllRead(todo, compare: true, indent: "  ")

        heading("5. Statistics (seed 001): one background operation per line, printed as each finishes")
        await StatisticsSummary.run(todo)

        heading("6. Failed banks (seed 004): sections by state, newest closing first, fetchBatchSize 20")
        let banks = try OpenedStore.open(path: directory.appendingPathComponent("FailedBanks.sqlite").path,
                                         model: BankModel.make())
        let context = banks.newContext()
        let imported = try BankImporter.importRecords(FailedBankRecord.records(fromCSV: BankImporter.bundledCSV()),
                                                      into: context)
        Console.line("  Imported \(imported) banks from the FDIC list. The SQL (stderr) shows IDs fetched first, then rows 20 at a time:")
        // A fresh coordinator, as a new launch of the app would have: nothing cached from the import.
        let relaunched = try OpenedStore.open(path: banks.url.path, model: BankModel.make())
        let list = BankSections(context: relaunched.newContext())
        SQLLog.isVisible = true
        try list.performFetch()
        PlainSectionsPrinter.print(list, sectionLimit: 3, rowsPerSection: 4, indent: "  ")
        SQLLog.isVisible = false
        Console.line("  … \(list.sections.count) states in all. Browse them: swift run ocd banks browse")

        heading("7. An app update: a store written by the old version of its model opens with the new one")
        try JournalUpgrade.run(storePath: directory.appendingPathComponent("Journal.sqlite").path, indent: "  ")
        Console.line("  By hand: swift run ocd migrate STORE --model M.xcdatamodeld --dry-run prints a plan and its SQL.")

        Console.line("")
        Console.line("Tour finished in \(String(format: "%.1f", Date().timeIntervalSince(started)))s.")
    }

    private func makeFolder() throws -> URL {
        let url = folder.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("ocd-tour-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw OCDError("cannot create the folder \(url.path): \(error.localizedDescription)")
        }
        for name in ["Todo.sqlite", "FailedBanks.sqlite", "Journal.sqlite"] {
            for suffix in ["", "-wal", "-shm"] where folder != nil {
                // A given folder may hold an earlier tour: start fresh.
                try? FileManager.default.removeItem(at: url.appendingPathComponent(name + suffix))
            }
        }
        return url
    }

    private func heading(_ text: String) {
        Console.line("")
        Console.raw(Console.stdoutIsTerminal ? "\u{1B}[1m\(text)\u{1B}[0m\n" : text + "\n")
    }
}
