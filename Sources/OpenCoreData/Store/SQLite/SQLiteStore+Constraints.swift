import Foundation
import GRDB

extension SQLiteStore {
    /// The stored rows of `entity` and its sub-entities whose `keys` (attributes or to-one relationships of
    /// one uniqueness constraint) hold `values` (as the store writes them: a to-one as the related row's
    /// key), as object IDs in the store's order. Empty when a key is neither (nothing can hold it).
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    package func rowIDs(of entity: EntityDescription, holding values: [StoreValue], forKeys keys: [String]) throws -> [ManagedObjectID] {
        guard let sql = StoreSchema.constraintLookupSQL(entity: entity, keys: keys) else { return [] }
        let rows = try read { db in
            try Row.fetchAll(db, sql: sql, arguments: StatementArguments(values))
                .map { (primaryKey: $0[0] as Int64, entityNumber: $0[1] as Int) }
        }
        return rows.map {
            ManagedObjectID(entity: model.entity(number: $0.entityNumber) ?? entity, primaryKey: $0.primaryKey, store: identity)
        }
    }
}

extension StoreSchema {
    /// `SELECT Z_PK, Z_ENT FROM … WHERE Z_ENT IN (…) AND <column> = ? …`: the stored rows of `entity` and its
    /// sub-entities whose uniqueness-constraint `keys` hold the values bound in `keys`' order, in key order;
    /// nil when a key is neither an attribute nor a to-one relationship. The same text on every store.
    package static func constraintLookupSQL(entity: EntityDescription, keys: [String]) -> String? {
        var conditions = ["Z_ENT IN (\(entity.entityNumbersIncludingSubentities.map(String.init).joined(separator: ", ")))"]
        for key in keys {
            guard let slot = entity.slotByName[key] else { return nil }
            switch entity.storage[slot] {
            case .attribute(let column, _), .toOne(let column, _, _, _): conditions.append("\(column) = ?")
            default: return nil
            }
        }
        // Table and column names come from the schema; the values are bound.
        return "SELECT Z_PK, Z_ENT FROM \(entity.tableName) WHERE " + conditions.joined(separator: " AND ") + " ORDER BY Z_PK"
    }

    /// `SELECT d.Z_ENT, d.Z_PK …`: the objects a to-many relationship of one object holds (its key bound),
    /// in the relationship's order; nil for storage that is not a to-many's. The same text on every store.
    package func relatedIDsSQL(relationship: RelationshipDescription, storage: PropertyStorage) -> String? {
        guard let destination = relationship.destinationEntity else { return nil }
        let numbers = destination.entityNumbersIncludingSubentities
        let entityFilter = mapping(for: destination).sharesTable
            ? " AND d.Z_ENT IN (\(numbers.map(String.init).joined(separator: ",")))" : ""
        switch storage {
        case .toManyByForeignKey(let table, let column, let orderColumn):
            return "SELECT d.Z_ENT, d.Z_PK FROM \(table) d WHERE d.\(column) = ?\(entityFilter) ORDER BY "
                + (orderColumn.map { "d.\($0), " } ?? "") + "d.Z_PK"
        case .toManyByJoinTable(let join):
            return "SELECT d.Z_ENT, d.Z_PK FROM \(join.name) j JOIN \(destination.tableName) d ON d.Z_PK = j.\(join.destinationColumn) WHERE j.\(join.sourceColumn) = ?\(entityFilter) ORDER BY "
                + (join.orderColumn.map { "j.\($0), " } ?? "") + "d.Z_PK"
        default:
            return nil
        }
    }
}
