import ArgumentParser
import Foundation
import OpenCoreDataImport
import OpenCoreData

/// `ocd import <store> --model … --entity … (--csv … | --jsonl …)`: rows of a CSV or JSON Lines file
/// become objects of one entity, in one save of a context (on a store file or a PostgreSQL store alike). A bad row refuses the whole file unless
/// `--skip-bad-rows` is given; then the other rows are imported and each refused row is listed.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a CSV or JSON Lines file into one entity of a store (created if needed).",
        discussion: """
            Columns (CSV header names) or JSON keys fill the attributes of the same name, ignoring case; \
            --map column=attribute overrides. Values are converted to the attribute's type: numbers, \
            booleans (yes/no, true/false, 1/0), dates (ISO 8601, 21-Oct-11, or seconds since 2001), UUIDs, \
            URLs, base64 for binary data, any JSON value (arrays and objects too) for a transformable \
            attribute whose transformer archives property lists (NSSecureUnarchiveFromData). All rows are saved in one transaction: a bad row refuses the \
            whole file unless --skip-bad-rows is given.
            """)

    @Argument(help: "The store file (created if it does not exist), or a postgresql:// URL (a store is created in an empty schema).")
    var store: String

    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom).")
    var model: String

    @Option(name: .long, help: "The entity the rows become.")
    var entity: String

    @Option(name: .long, help: "A CSV file with a header row.")
    var csv: String?

    @Option(name: .long, help: "A JSON Lines file: one JSON object a line.")
    var jsonl: String?

    @Option(name: .long, help: "column=attribute: fill an attribute from a differently named column (repeatable).")
    var map: [String] = []

    @Flag(name: .long, help: "Import the good rows and list the bad ones, instead of refusing the file.")
    var skipBadRows = false

    @Flag(name: .long, help: "Print every SQL statement to stderr.")
    var sqlDebug = false

    @Flag(name: .long, help: "Record persistent history in the store (kept on for stores that already have it).")
    var history = false

    @Option(name: .long, help: "The transaction author the history records (with --history).")
    var author = "ocd import"

    func validate() throws {
        guard (csv == nil) != (jsonl == nil) else { throw ValidationError("give exactly one of --csv and --jsonl") }
    }

    func run() async throws {
        let location = try StoreLocation(store)
        if sqlDebug { SQLLog.enable(visible: true) }
        // An existing store file may number its entities differently from ours: its numbers are used. A
        // PostgreSQL store numbers them as the model does (opening it refuses one that does not).
        let loaded: ManagedObjectModel
        if case .file(let path) = location, FileManager.default.fileExists(atPath: path) {
            loaded = try ModelLocator.load(modelPath: model, numberedLike: path)
        } else {
            loaded = try ModelLocator.load(modelPath: model)
        }
        guard let description = loaded.entitiesByName[entity] else {
            let names = loaded.entities.map(\.name).sorted().joined(separator: ", ")
            throw OCDError("the model has no entity '\(entity)' (it has \(names))")
        }
        guard !description.isAbstract else { throw OCDError("\(entity) is abstract: import into one of its sub-entities") }

        let path = csv ?? jsonl ?? ""
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw OCDError("\(path): cannot read it as UTF-8 text")
        }
        let (columns, records) = csv != nil ? try ImportRecordReader.csv(text) : ImportRecordReader.jsonLines(text)
        guard !records.isEmpty else { throw OCDError("\(path) has no rows to import") }
        let mapping = try ColumnMapping(columns: columns, entity: description, overrides: map)
        guard !mapping.attributes.isEmpty else {
            throw OCDError("no column of \(path) matches an attribute of \(entity); use --map column=attribute")
        }
        if !mapping.ignored.isEmpty {
            Console.line("Ignoring columns that match no attribute: \(mapping.ignored.joined(separator: ", "))")
        }

        let (rows, refused) = RecordImporter.convert(records, mapping: mapping, entity: description)
        if let first = refused.first, !skipBadRows {
            let more = refused.count > 1 ? " (and \(refused.count - 1) more bad row\(refused.count == 2 ? "" : "s"))" : ""
            throw OCDError("\(first.description)\(more); nothing was imported (--skip-bad-rows imports the other rows)")
        }
        let opened = try OpenedStore.open(location, model: loaded, history: history)
        defer { opened.close() }
        if !rows.isEmpty {
            let context = opened.newContext()
            context.transactionAuthor = author
            let bar = ProgressBar(title: "Importing", total: rows.count)
            try RecordImporter.insert(rows, entity: entity, into: context) { bar.update($0) }
            bar.finish()
        }
        Console.line("Imported \(rows.count) row\(rows.count == 1 ? "" : "s") into \(entity) (\(opened.displayName)).")
        if !refused.isEmpty {
            Console.line("Refused \(refused.count) row\(refused.count == 1 ? "" : "s"):")
            for row in refused { Console.line("  \(row.description)") }
        }
    }
}
