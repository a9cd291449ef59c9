import Foundation

/// Stores this library wrote before it named a to-one's entity-number column as Core Data does. When the
/// destination of a to-one has sub-entities, the row also keeps the destination's entity number, in
/// `Z<n>_<NAME>`: Core Data takes `n` from the destination entity (`ZPAGE.Z1_BOOK` for `Page.book`), where
/// this library took it from the relationship's own entity (`Z4_BOOK`). A store with the earlier name has
/// the column renamed when it is opened writable, in the open's transaction; opened read-only, it is refused
/// with a difference saying so.
package enum EarlierEntityColumnNames {
    /// A column a store may have under its earlier name.
    package struct Renaming: Equatable, Sendable {
        package let table: String
        package let earlier: String
        package let current: String
    }

    /// The entity-number columns whose name differs between the two layouts of `model`, in table order.
    static func candidates(of model: ManagedObjectModel) -> [Renaming] {
        // Laying the model out again costs what its first layout did; most models have no such column, and
        // every open asks, so they are told apart first.
        let differs = model.entitiesByNumber.contains { entity in
            entity.properties.contains { property in
                guard let relationship = property as? RelationshipDescription, !relationship.isToMany,
                      let destination = relationship.destinationEntity else { return false }
                return !destination.subentities.isEmpty && destination.entityNumber != entity.entityNumber
            }
        }
        guard differs, let earlier = try? StoreSchema(model: model, entityColumnsNamedBySource: true) else { return [] }
        var renamings: [Renaming] = []
        for (current, old) in zip(model.schema.tables, earlier.tables) where current.name == old.name {
            for (column, oldColumn) in zip(current.columns, old.columns) where column.name != oldColumn.name {
                renamings.append(Renaming(table: current.name, earlier: oldColumn.name, current: column.name))
            }
        }
        return renamings
    }

    /// The renamings a store needs: each column whose table has it under its earlier name only.
    /// `columnsByTable` holds the store's tables' column names in upper case.
    package static func needed(by model: ManagedObjectModel, columnsByTable: [String: Set<String>]) -> [Renaming] {
        candidates(of: model).filter { renaming in
            guard let columns = columnsByTable[renaming.table] else { return false }
            return columns.contains(renaming.earlier) && !columns.contains(renaming.current)
        }
    }

    /// Renames the columns in `session`'s transaction (the names come from the two layouts, never from the
    /// store).
    ///
    /// - Throws: the session's errors.
    package static func rename(_ renamings: [Renaming], in session: any SQLSession) throws {
        for renaming in renamings {
            try session.execute("ALTER TABLE \(renaming.table) RENAME COLUMN \(renaming.earlier) TO \(renaming.current)", [])
        }
    }

    /// `differences` (an open's list) with each "column … is missing" of a column still under its earlier
    /// name saying so: what a read-only open, which renames nothing, reports.
    package static func explained(_ differences: [String], _ renamings: [Renaming]) -> [String] {
        differences.map { difference in
            guard let renaming = renamings.first(where: { difference == "column \($0.table).\($0.current) is missing" }) else {
                return difference
            }
            return "column \(renaming.table).\(renaming.current) is \(renaming.earlier) here, the name this library gave it before it followed Core Data's naming; open the store writable once to rename it"
        }
    }
}
