import Foundation

/// Core Data's bookkeeping rows beside the model's tables, read and written once for every store:
/// `Z_PRIMARYKEY` (each entity's number, name, super-entity and highest key handed out) and `Z_METADATA`
/// (the store's UUID and metadata property list), and the token a results controller's cache compares.
package enum StoreBookkeeping {
    /// Writes a new store's rows: one `Z_PRIMARYKEY` row per entity with no keys handed out, and the
    /// `Z_METADATA` row holding `metadata`.
    ///
    /// - Throws: what the session throws, or ``StoreError`` when the metadata cannot be written as a property list.
    package static func writeInitialRows(model: ManagedObjectModel, metadata: StoreMetadata, in session: some SQLSession) throws {
        for entity in model.entitiesByNumber {
            try session.execute("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)",
                                [entity.entityNumber.storeValue, entity.name.storeValue,
                                 (entity.superentity?.entityNumber ?? 0).storeValue])
        }
        try session.execute("INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (?, ?, ?)",
                            [StoreMetadata.rowVersion.storeValue, metadata.uuidString.storeValue,
                             try metadata.plistData().storeValue])
    }

    /// The stored entity names by number, below the numbers Core Data keeps for itself (persistent history
    /// from 16000 up); rows whose number or name is not readable are left out.
    ///
    /// - Throws: what the session throws.
    package static func entityNames(in session: some SQLSession) throws -> [Int: String] {
        var nameByNumber: [Int: String] = [:]
        for row in try session.rows("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
                                    [HistoryTables.firstReservedEntityNumber.storeValue]) {
            if let number = Int.fromStoreValue(row[0]), let name = String.fromStoreValue(row[1]) { nameByNumber[number] = name }
        }
        return nameByNumber
    }

    /// How the stored entity numbering differs from the model's, each difference named. Core Data's
    /// lightweight migration of a renamed entity keeps the old name in `Z_PRIMARYKEY` (alemar11's
    /// `SampleModel_V2.sqlite`: `ExpensiveSportCar` for `LuxuryCar`), so an entity's renaming identifier
    /// names it too.
    package static func numberingDifferences(model: ManagedObjectModel, stored nameByNumber: [Int: String]) -> [String] {
        var differences: [String] = []
        for entity in model.entitiesByNumber {
            if let stored = nameByNumber[entity.entityNumber] {
                if stored != entity.name && stored != entity.renamingIdentifier {
                    differences.append("entity number \(entity.entityNumber) is '\(stored)' in the store, '\(entity.name)' in the model")
                }
            } else {
                differences.append("entity '\(entity.name)' is not in the store")
            }
        }
        let modelNames = Set(model.entities.map(\.name))
        for (number, name) in nameByNumber.sorted(by: { $0.key < $1.key }) where !modelNames.contains(name)
            && model.entity(number: number)?.renamingIdentifier != name {
            differences.append("the store has entity '\(name)', which the model does not")
        }
        if !differences.isEmpty && Set(nameByNumber.values) == modelNames {
            differences.append("the store numbers the same entities differently: load the model with ManagedObjectModel(contentsOf:numberedLikeStoreAt:) or pass entityNumbers")
        }
        return differences
    }

    /// A token that changes whenever the rows of `tables` may have: the store's identifier, every entity's
    /// `Z_MAX`, and each table's row count, highest key and sum of `Z_OPT` (a row changed in place bumps its
    /// `Z_OPT`). Table names come from the schema.
    ///
    /// - Throws: what the session throws.
    package static func dataToken(storeIdentifier: String, tables: [String], in session: some SQLSession) throws -> String {
        var parts = [storeIdentifier]
        for row in try session.rows("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT", []) {
            parts.append("\(Int64.fromStoreValue(row[0]) ?? 0):\(Int64.fromStoreValue(row[1]) ?? 0)")
        }
        for table in tables {
            guard let row = try session.rows("SELECT COUNT(*), COALESCE(MAX(Z_PK), 0), COALESCE(SUM(Z_OPT), 0) FROM \(table)", []).first
            else { continue }
            // A sum past Int64 (PostgreSQL's SUM is NUMERIC) is kept in its own spelling.
            parts.append("\(table):" + row.map { value in Int64.fromStoreValue(value).map(String.init) ?? "\(value)" }
                .joined(separator: ":"))
        }
        return parts.joined(separator: "|")
    }
}
