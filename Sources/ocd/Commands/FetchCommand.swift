import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd fetch <store> --model … --entity …`: a fetch request from the command line, read-only, run by a
/// context on a store file or a PostgreSQL store alike.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Run a fetch request against a store (read-only) and print the results.")

    @Argument(help: "The store file, or a postgresql:// URL (with --model, or ocd's own model it was written by).")
    var store: String

    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom); optional for stores ocd wrote or that carry their model.")
    var model: String?

    @Option(name: .long, help: "The entity to fetch.")
    var entity: String

    @Option(name: .long, help: "A predicate, in Core Data's format syntax.")
    var predicate: String?

    @Option(name: .long, help: "A sort key, with :desc for descending (repeatable; dotted keys through to-one).")
    var sort: [String] = []

    @Option(name: .long, help: "At most this many results.")
    var limit: Int?

    @Option(name: .long, help: "Skip this many results first.")
    var offset: Int?

    @Flag(name: .long, help: "Print only the number of matching objects.")
    var count = false

    @Option(name: .long, help: "Comma-separated key paths to print (through relationships; @count, @sum.k, @avg.k, @min.k, @max.k after a to-many).")
    var keys: String?

    @Flag(name: .long, help: "One JSON object per line (dates in ISO 8601 with fractional seconds).")
    var json = false

    @Flag(name: .long, help: "Print every SQL statement to stderr.")
    var sqlDebug = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit cannot be negative") }
        if let offset, offset < 0 { throw ValidationError("--offset cannot be negative") }
        for key in sort {
            let parts = key.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2, !(parts.first ?? "").isEmpty, parts.count == 1 || ["asc", "desc"].contains(parts[1]) else {
                throw ValidationError("--sort '\(key)': write key or key:desc (or key:asc)")
            }
        }
    }

    func run() async throws {
        let location = try StoreLocation(store)
        if sqlDebug { SQLLog.enable(visible: true) }
        let (opened, _) = try OpenedStore.openFindingModel(location, modelPath: model)
        defer { opened.close() }
        guard let description = opened.coordinator.managedObjectModel.entitiesByName[entity] else {
            let names = opened.coordinator.managedObjectModel.entities.map(\.name).sorted().joined(separator: ", ")
            throw OCDError("the model has no entity '\(entity)' (it has \(names))")
        }
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.sortDescriptors = sortDescriptors
        request.fetchLimit = limit ?? 0
        request.fetchOffset = offset ?? 0
        request.fetchBatchSize = 200   // results are streamed out, so read them a batch at a time
        request.predicate = try parsedPredicate()
        let keyPaths = try (keys.map { $0.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) } }
            ?? description.allProperties.compactMap { $0 as? AttributeDescription }.map(\.name))
            .map { try KeyPathReader($0, entity: description) }
        let context = opened.newContext()
        try context.performAndWait {
            do {
                if count {
                    Console.line("\(try context.count(for: request))")
                    return
                }
                for object in try context.fetch(request) {
                    printResult(try keyPaths.map { ($0.path, try $0.value(of: object)) })
                }
            } catch {
                throw OCDError("fetch failed: \(error)")
            }
        }
    }

    /// The `--sort` keys as sort descriptors (checked by `validate()`).
    var sortDescriptors: [QuerySortDescriptor] {
        sort.map { key in
            let parts = key.split(separator: ":")
            return QuerySortDescriptor(key: String(parts[0]), ascending: parts.count < 2 || parts[1] != "desc")
        }
    }

    /// `--predicate` read, nil when none is given.
    /// - Throws: `OCDError` naming the predicate and what is wrong with it.
    func parsedPredicate() throws -> QueryPredicate? {
        guard let predicate else { return nil }
        do {
            return try QueryPredicate(format: predicate)
        } catch {
            throw OCDError("--predicate '\(predicate)': \(error)")
        }
    }

    /// Prints one result: `key=value` pairs, or one JSON object with `--json`.
    func printResult(_ values: [(key: String, value: Any?)]) {
        if json {
            Console.line("{" + values.map { "\(ValueText.quoted($0.key)):\(ValueText.json($0.value))" }.joined(separator: ",") + "}")
        } else {
            Console.line(values.map { "\($0.key)=\(ValueText.plain($0.value))" }.joined(separator: "  "))
        }
    }
}
