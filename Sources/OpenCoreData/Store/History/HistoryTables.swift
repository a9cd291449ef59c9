import Foundation

/// Core Data's persistent-history layout (docs/HISTORY.md): `ATRANSACTION` (one row per commit),
/// `ACHANGE` (one row per object changed), `ATRANSACTIONSTRING` (author, context and process names,
/// each stored once), with entity numbers 16001–16003 in `Z_PRIMARYKEY`, where their keys are reserved
/// so that transaction numbers only ever count up, even after pruning.
///
/// The tables are created the first time a store opened with history tracking commits, never on open.
package enum HistoryTables {
    package static let transactionTable = "ATRANSACTION"
    package static let changeTable = "ACHANGE"
    static let stringTable = "ATRANSACTIONSTRING"

    /// Core Data's entity numbers for its history rows (`Z_ENT` in each table, a row each in Z_PRIMARYKEY).
    package static let changeEntity = 16001
    package static let transactionEntity = 16002
    package static let stringEntity = 16003
    /// Entity numbers from here up are Core Data's own, never a model's.
    package static let firstReservedEntityNumber = 16000

    /// Every table name the history layout uses (tolerated in any store, written only by this layer).
    static let tableNames: Set<String> = [transactionTable, changeTable, stringTable]

    /// `ZTOMBSTONE0`…: one column per preserved attribute, as many as the entity with the most has.
    package static func tombstoneColumn(_ index: Int) -> String { "ZTOMBSTONE\(index)" }

    /// The attributes whose values a delete keeps in its change row, in tombstone-column order: the
    /// entity's attributes marked `preservesValueInHistoryOnDeletion`, by name.
    package static func preservedAttributes(of entity: EntityDescription) -> [AttributeDescription] {
        entity.allProperties.compactMap { $0 as? AttributeDescription }
            .filter { $0.preservesValueInHistoryOnDeletion && !$0.isTransient }
            .sorted { $0.name < $1.name }
    }

    /// The entity's table columns that hold its preserved attributes, in tombstone-column order (what a
    /// delete reads into the tombstone).
    package static func preservedColumns(of entity: EntityDescription) -> [String] {
        preservedAttributes(of: entity).compactMap { attribute in
            guard let slot = entity.slotByName[attribute.name], case .attribute(let column, _) = entity.storage[slot] else { return nil }
            return column
        }
    }

    /// How many tombstone columns the model needs: as many as its entity with the most preserved attributes.
    package static func tombstoneCount(_ model: ManagedObjectModel) -> Int {
        model.entitiesByNumber.map { preservedAttributes(of: $0).count }.max() ?? 0
    }

    /// A delete change's tombstone from its row's tombstone columns (`count` of them), as both stores read
    /// it: each preserved attribute of `entity` by name, from the column at its position; nil when the
    /// entity preserves nothing.
    package static func tombstone(of entity: EntityDescription, columnCount count: Int,
                                  value: (Int) throws -> PersistentHistoryChange.TombstoneValue)
        rethrows -> [String: PersistentHistoryChange.TombstoneValue]? {
        let preserved = preservedAttributes(of: entity)
        guard !preserved.isEmpty else { return nil }
        var values: [String: PersistentHistoryChange.TombstoneValue] = [:]
        for (index, attribute) in preserved.enumerated() where index < count {
            values[attribute.name] = try value(index)
        }
        return values
    }
}
