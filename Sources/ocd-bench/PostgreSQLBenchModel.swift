import Foundation
import GRDB
import OpenCoreData

/// The model the PostgreSQL scenarios write: one entity, `Item`, with a name, a number and a date, and
/// its rows as the store lays them out (the same rows for ours and raw, so both write the same bytes).
enum PostgreSQLBenchModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [EntityDescription(name: "Item", properties: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "value", type: .integer64),
            AttributeDescription(name: "created", type: .date),
        ])])
    }

    /// The table's name and columns, in the store's row order.
    static func table(_ model: ManagedObjectModel) -> (name: String, columns: [String]) {
        let item = model.entitiesByName["Item"]!
        let table = model.schema.table(named: item.tableName)!
        return (table.name, table.columns.map(\.name))
    }

    /// The row of the object with `key`, written by `writer`: Z_PK, Z_ENT, Z_OPT 1, then the attributes.
    static func row(_ model: ManagedObjectModel, key: Int64, writer: Int) -> RowValues {
        let item = model.entitiesByName["Item"]!
        let columns = StoredAttributeColumns(entity: item, model: model)
        var row = [DatabaseValue](repeating: .null, count: table(model).columns.count)
        row[0] = key.databaseValue
        row[1] = Int64(item.entityNumber).databaseValue
        row[2] = 1.databaseValue
        row[columns.column(named: "name")!.columnIndex] = "item \(key) of writer \(writer)".databaseValue
        row[columns.column(named: "value")!.columnIndex] = (key &* 7919 % 1_000_003).databaseValue
        row[columns.column(named: "created")!.columnIndex] = Double(key).databaseValue
        return RowValues(values: row)
    }
}
