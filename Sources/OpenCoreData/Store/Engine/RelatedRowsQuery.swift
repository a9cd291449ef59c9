import Foundation

/// The statement that lists the rows related to some source rows through one relationship, as
/// `(Z_ENT, Z_PK)` pairs: what a batch delete reads to cascade and nullify, the same text on every store
/// (`?` placeholders, one per source key; the PostgreSQL session numbers them).
package enum RelatedRowsQuery {
    /// The `SELECT` for `keyCount` source keys of `sourceTable` through `storage`, or nil when the
    /// relationship keeps nothing to follow (an inverse stored on the other side).
    package static func sql(storage: StoreSchema.PropertyStorage, sourceTable: String, destinationTable: String,
                            keyCount: Int) -> String? {
        let list = "(" + Array(repeating: "?", count: keyCount).joined(separator: ", ") + ")"
        switch storage {
        case .toOne(let column, _, _, _):
            return "SELECT d.Z_ENT, d.Z_PK FROM \(sourceTable) s JOIN \(destinationTable) d ON d.Z_PK = s.\(column) WHERE s.Z_PK IN \(list)"
        case .toManyByForeignKey(let table, let column, _):
            return "SELECT d.Z_ENT, d.Z_PK FROM \(table) d WHERE d.\(column) IN \(list)"
        case .toManyByJoinTable(let join):
            return "SELECT d.Z_ENT, d.Z_PK FROM \(join.name) j JOIN \(destinationTable) d ON d.Z_PK = j.\(join.destinationColumn) WHERE j.\(join.sourceColumn) IN \(list)"
        default:
            return nil
        }
    }
}
