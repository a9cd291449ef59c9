import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd banks import`: loads the FDIC list (bundled, or `--csv`) into seed 004's model.
struct BanksImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import the FDIC failed-bank list (CERT is stored in `zip`: the list has no ZIP codes).")

    @OptionGroup var storeArguments: StoreArguments

    @Option(name: .long, help: "A CSV in the FDIC list's format (default: the list shipped with ocd).")
    var csv: String?

    @Flag(name: .long, help: "Delete the banks already in the store first.")
    var replace = false

    func run() async throws {
        storeArguments.configureLogging()
        let text: String
        if let csv {
            guard let contents = try? String(contentsOfFile: csv, encoding: .utf8) else {
                throw OCDError("\(csv): cannot be read as UTF-8 text")
            }
            text = contents
        } else {
            text = try BankImporter.bundledCSV()
        }
        let records: [FailedBankRecord]
        do {
            records = try FailedBankRecord.records(fromCSV: text)
        } catch {
            throw OCDError("\(csv ?? "failed-banks.csv"): \(error)")
        }
        let store = try OpenedStore.open(storeArguments.location(defaultName: BanksCommand.defaultStoreName),
                                         model: BankModel.make(), history: storeArguments.history)
        defer { store.close() }
        let context = store.newContext()
        context.transactionAuthor = "ocd banks import"   // what the store's history says made these changes
        let existing = try BankImporter.count(in: context)
        if existing > 0 {
            guard replace else {
                throw OCDError("\(store.displayName) already holds \(existing) banks; pass --replace to import again")
            }
            try context.performAndWait {
                let delete = BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "FailedBankInfo"))
                _ = try context.execute(delete)
            }
        }
        let count = try BankImporter.importRecords(records, into: context)
        Console.line("Imported \(count) banks into \(store.displayName).")
    }
}
