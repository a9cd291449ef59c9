import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

extension FetchCommand {
    /// `ocd fetch postgresql://… --model M --entity E …`: the fetch run by the store itself. `--keys` takes
    /// the entity's attributes (key paths through relationships need contexts on the store, not there yet).
    func fetch(_ configuration: PostgreSQLStoreConfiguration) throws {
        let (store, _) = try PostgreSQLStoreOpener.open(configuration, modelPath: model)
        defer { store.close() }
        guard let description = store.model.entitiesByName[entity] else {
            let names = store.model.entities.map(\.name).sorted().joined(separator: ", ")
            throw OCDError("the model has no entity '\(entity)' (it has \(names))")
        }
        let columns = StoredAttributeColumns(entity: description, model: store.model)
        let shown = try (keys.map { $0.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) } } ?? columns.columns.map(\.name))
            .map { key in
                guard let column = columns.column(named: key) else {
                    throw OCDError("--keys '\(key)': on a PostgreSQL store only the attributes of \(entity) can be printed "
                        + "(\(columns.columns.map(\.name).joined(separator: ", ")))")
                }
                return column
            }
        let query = try parsedPredicate()
        do {
            if count {
                Console.line("\(try store.count(entity: description, predicate: query))")
                return
            }
            for row in try store.fetchRows(entity: description, predicate: query, sortDescriptors: sortDescriptors,
                                           limit: limit ?? 0, offset: offset ?? 0) {
                printResult(shown.map { ($0.name, columns.value(of: $0, in: row)) })
            }
        } catch {
            throw OCDError("fetch failed: \(error)")
        }
    }
}
