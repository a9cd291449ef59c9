import Foundation

extension StoreChangeSet {
    /// A change set that only inserts the given rows (each in its table's column order, `Z_PK`, `Z_ENT`,
    /// `Z_OPT` first): for writers outside this module that lay out rows themselves, such as the benchmark's
    /// side of the PostgreSQL store.
    package init(insertingRows rows: [(id: ManagedObjectID, table: String, row: RowValues)]) {
        self.init(inserts: rows.map { Insert(id: $0.id, table: $0.table, row: $0.row) })
    }
}
