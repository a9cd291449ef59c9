import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

extension InspectCommand {
    /// `ocd inspect postgresql://… --model M`: the store's metadata, each entity's row count, columns and a
    /// sample of rows, and its history tables.
    func inspect(_ configuration: PostgreSQLStoreConfiguration) throws {
        let (store, modelName) = try PostgreSQLStoreOpener.open(configuration, modelPath: model)
        defer { store.close() }
        do {
            let metadata = try store.metadata()
            Console.line("\(configuration.redactedURL) (model: \(modelName), store UUID \(metadata.uuidString), "
                + "NSStoreType \(metadata.storeType); its version hashes match the model)")
            for entity in store.model.entities.sorted(by: { $0.name < $1.name }) {
                let count = try store.count(entity: entity, predicate: nil, includesSubentities: false)
                let parent = entity.superentity.map { " : \($0.name)" } ?? ""
                Console.line("")
                Console.line("\(entity.name)\(parent) — \(count) row\(count == 1 ? "" : "s") in \(entity.tableName)"
                    + (entity.isAbstract ? " (abstract)" : ""))
                let columns = StoredAttributeColumns(entity: entity, model: store.model)
                let properties = entity.allProperties.map { property -> String in
                    if let column = columns.column(named: property.name) {
                        return "\(property.name): \(column.type.rawValue) (\(column.columnName))"
                    }
                    if let relationship = property as? RelationshipDescription {
                        return "\(property.name) → \(relationship.isToMany ? "many " : "")\(relationship.destinationEntityName)"
                    }
                    return property.name
                }
                Console.line("  " + properties.joined(separator: ", "))
                guard sample > 0, count > 0 else { continue }
                for row in try store.fetchRows(entity: entity, predicate: nil, includesSubentities: false, limit: sample) {
                    let values = columns.columns.map { "\($0.name)=\(ValueText.plain(columns.value(of: $0, in: row)))" }
                    Console.line("  p\(columns.primaryKey(of: row)): " + values.joined(separator: "  "))
                }
            }
            Console.line("")
            if let history = try store.historySummary() {
                Console.line("History: \(history.transactions) transaction\(history.transactions == 1 ? "" : "s") in ATRANSACTION, "
                    + "\(history.changes) change\(history.changes == 1 ? "" : "s") in ACHANGE, \(history.strings) in ATRANSACTIONSTRING"
                    + (history.lastToken.map { "; the last is #\($0.transactionNumber)" } ?? ""))
            } else {
                Console.line("History: none (the store keeps no persistent history tables)")
            }
        } catch {
            throw OCDError("inspect failed: \(error)")
        }
    }
}
