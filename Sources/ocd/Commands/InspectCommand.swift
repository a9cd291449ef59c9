import ArgumentParser
import Foundation
import OpenCoreDataImport
import OpenCoreData

/// `ocd inspect <store>`: the framework version that wrote the store, its persistent history and CloudKit
/// tables, then entities, row counts and sample rows of a store in Core Data's layout, opened read-only (the
/// file is never changed). On a PostgreSQL store the entities are read the same way, through a context; the
/// store's metadata and history tables come from the store itself.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show the entities, row counts and a sample of rows of a store (read-only).")

    @Argument(help: "The store file, or a postgresql:// URL (with --model, or ocd's own model it was written by).")
    var store: String

    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom); optional for stores ocd wrote or that carry their model.")
    var model: String?

    @Option(name: .long, help: "Sample rows per entity.")
    var sample = 3

    @Flag(name: .long, help: "Print every SQL statement to stderr.")
    var sqlDebug = false

    func validate() throws {
        guard sample >= 0 else { throw ValidationError("--sample cannot be negative") }
    }

    func run() async throws {
        let location = try StoreLocation(store)
        if sqlDebug { SQLLog.enable(visible: true) }
        if case .postgreSQL(let configuration) = location {
            let (opened, modelName) = try OpenedStore.openFindingModel(location, modelPath: model)
            defer { opened.close() }
            try printStoreSummary(of: opened, at: configuration, modelName: modelName)
            try printEntities(of: opened)
            try printHistorySummary(of: opened)
            return
        }
        let opened: OpenedStore, modelName: String
        do {
            (opened, modelName) = try OpenedStore.openFindingModel(location, modelPath: model)
        } catch let error where model == nil {
            // No model fits: what the store's own tables tell is still worth showing.
            guard let outline = try? StoreOutline(storeAt: URL(fileURLWithPath: store)) else { throw error }
            printOutline(outline)
            return
        }
        Console.line("\(opened.url.path) (model: \(modelName), store UUID \(opened.coordinator.persistentStores.first?.identifier ?? "?"))")
        for line in StoreSummaryText.lines(forStoreAt: opened.url) { Console.line(line) }
        for line in UnreadModelKeys.note(for: opened.coordinator.managedObjectModel) { Console.line(line) }
        try printEntities(of: opened)
    }

    /// Prints each entity through a context, the same on every kind of store: its row count and table, its
    /// properties (attributes with their type and column), and `--sample` objects with every property's value.
    private func printEntities(of opened: OpenedStore) throws {
        let context = opened.newContext()
        let model = opened.coordinator.managedObjectModel
        let entities = model.entities.sorted { $0.name < $1.name }
        try context.performAndWait {
            for entity in entities {
                let request = FetchRequest<ManagedObject>(entityName: entity.name)
                request.includesSubentities = false
                let count = try context.count(for: request)
                let parent = entity.superentity.map { " : \($0.name)" } ?? ""
                Console.line("")
                Console.line("\(entity.name)\(parent) — \(count) row\(count == 1 ? "" : "s") in \(entity.tableName)"
                    + (entity.isAbstract ? " (abstract)" : ""))
                let properties = entity.allProperties.map { property -> String in
                    if let attribute = property as? AttributeDescription {
                        let column = model.schema.columnName(of: attribute.name, in: entity).map { " (\($0))" } ?? ""
                        return "\(property.name): \(attribute.attributeType.rawValue)\(column)"
                    }
                    if let relationship = property as? RelationshipDescription {
                        return "\(property.name) → \(relationship.isToMany ? "many " : "")\(relationship.destinationEntityName)"
                    }
                    return property.name
                }
                Console.line("  " + properties.joined(separator: ", "))
                guard sample > 0, count > 0 else { continue }
                request.fetchLimit = sample
                for object in try context.fetch(request) {
                    let values = try entity.allProperties.map { property -> String in
                        "\(property.name)=\(ValueText.plain(try object.value(forKey: property.name)))"
                    }
                    Console.line("  p\(object.objectID.primaryKey): " + values.joined(separator: "  "))
                }
            }
        }
    }

    /// Prints what the store's own tables tell without a model: entities, row counts, columns and the kinds
    /// of value they hold.
    private func printOutline(_ outline: StoreOutline) {
        Console.line("\(store) (no model: entities, rows and columns from the store's own tables; "
            + "pass --model for attribute names, types and relationships)")
        for line in StoreSummaryText.lines(forStoreAt: URL(fileURLWithPath: store)) { Console.line(line) }
        for entity in outline.entities {
            let parent = entity.superentityName.map { " : \(TerminalText.escaped($0))" } ?? ""
            Console.line("")
            guard let table = entity.tableName, let count = entity.rowCount else {
                Console.line("\(TerminalText.escaped(entity.name))\(parent) — no table")
                continue
            }
            Console.line("\(TerminalText.escaped(entity.name))\(parent) — \(count) row\(count == 1 ? "" : "s") in \(TerminalText.escaped(table))")
            let held = entity.columns.filter { !$0.kinds.isEmpty }
            if !held.isEmpty {
                Console.line("  " + held.map { "\(TerminalText.escaped($0.name)): \($0.kinds.joined(separator: "/"))" }.joined(separator: ", "))
            }
            let empty = entity.columns.count - held.count
            if empty > 0 { Console.line("  (\(empty) column\(empty == 1 ? "" : "s") with no values in these rows)") }
        }
    }
}
