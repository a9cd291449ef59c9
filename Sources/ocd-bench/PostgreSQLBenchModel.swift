import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

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

    /// The attribute values of the object with `key`, written by `writer` (the same on both sides).
    static func values(key: Int64, writer: Int) -> (name: String, value: Int64, created: Date) {
        ("item \(key) of writer \(writer)", key &* 7919 % 1_000_003, Date(timeIntervalSinceReferenceDate: Double(key)))
    }

    /// The row of the object with `key`, written by `writer`: Z_PK, Z_ENT, Z_OPT 1, then the attributes.
    static func row(_ model: ManagedObjectModel, key: Int64, writer: Int) -> RowValues {
        let item = model.entitiesByName["Item"]!
        let columns = table(model).columns
        func position(of attribute: String) -> Int { columns.firstIndex(of: model.schema.columnName(of: attribute, in: item)!)! }
        let object = values(key: key, writer: writer)
        var row = [StoreValue](repeating: .null, count: columns.count)
        row[0] = key.storeValue
        row[1] = Int64(item.entityNumber).storeValue
        row[2] = 1.storeValue
        row[position(of: "name")] = object.name.storeValue
        row[position(of: "value")] = object.value.storeValue
        row[position(of: "created")] = object.created.timeIntervalSinceReferenceDate.storeValue
        return RowValues(values: row)
    }

    /// `base` with a new schema of the bench's own (`ocd_bench_` and 12 hex digits, so it is safe to name in
    /// SQL), which the scenario drops when done.
    static func scratchSchema(of base: PostgreSQLStoreConfiguration) -> PostgreSQLStoreConfiguration {
        var configuration = base
        configuration.schema = "ocd_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)
        return configuration
    }
}
