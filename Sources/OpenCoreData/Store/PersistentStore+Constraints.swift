import Foundation
import GRDB

extension PersistentStore {
    /// The stored rows of `entity` and its sub-entities whose `keys` (attributes or to-one relationships of
    /// one uniqueness constraint) hold `values` (as the store writes them: a to-one as the related row's
    /// key), as object IDs in the store's order. Empty when a key is neither (nothing can hold it).
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    func rowIDs(of entity: EntityDescription, holding values: [DatabaseValue], forKeys keys: [String]) throws -> [ManagedObjectID] {
        var conditions = ["Z_ENT IN (\(entity.entityNumbersIncludingSubentities.map(String.init).joined(separator: ", ")))"]
        for key in keys {
            guard let slot = entity.slotByName[key] else { return [] }
            switch entity.storage[slot] {
            case .attribute(let column, _), .toOne(let column, _, _, _): conditions.append("\(column) = ?")
            default: return []
            }
        }
        // Table and column names come from the schema; the values are bound.
        let sql = "SELECT Z_PK, Z_ENT FROM \(entity.tableName) WHERE " + conditions.joined(separator: " AND ")
        let rows = try read { db in
            try Row.fetchAll(db, sql: sql, arguments: StatementArguments(values))
                .map { (primaryKey: $0[0] as Int64, entityNumber: $0[1] as Int) }
        }
        return rows.map {
            ManagedObjectID(entity: model.entity(number: $0.entityNumber) ?? entity, primaryKey: $0.primaryKey, store: identity)
        }
    }
}
