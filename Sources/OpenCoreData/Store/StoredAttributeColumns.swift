import Foundation
import GRDB

/// Where each attribute of an entity lives in its table's rows, and how a stored cell reads back as the
/// attribute's Swift value: for tools that read rows a store hands over directly (a store without contexts
/// on it yet, such as the PostgreSQL store), with the same conversion faults use.
package struct StoredAttributeColumns: Sendable {
    /// One attribute of the entity with its column.
    package struct Column: Sendable {
        /// The attribute's name.
        package var name: String
        /// The attribute's type.
        package var type: AttributeType
        /// The column's name in the table.
        package var columnName: String
        /// The column's position in the table's rows (as `fetchRows` returns them).
        package var columnIndex: Int
    }

    /// The entity's stored attributes, in its property order (relationships and transient attributes left out).
    package let columns: [Column]

    /// The attribute columns of `entity` in `model`'s layout.
    package init(entity: EntityDescription, model: ManagedObjectModel) {
        let mapping = model.schema.mapping(for: entity)
        var columns: [Column] = []
        for (slot, property) in entity.allProperties.enumerated() {
            guard let attribute = property as? AttributeDescription,
                  case .attribute(let column, let index) = mapping.storage[slot] else { continue }
            columns.append(Column(name: attribute.name, type: attribute.attributeType, columnName: column, columnIndex: index))
        }
        self.columns = columns
    }

    /// The column of the attribute called `name`, if the entity stores one by that name.
    package func column(named name: String) -> Column? { columns.first { $0.name == name } }

    /// The row's primary key (`Z_PK`, the first column of every entity table).
    package func primaryKey(of row: RowValues) -> Int64 { row.primaryKey }

    /// The value `row` holds for `column`, as the attribute's Swift type gives it (nil for NULL).
    package func value(of column: Column, in row: RowValues) -> Any? {
        ValueConversion.swiftValue(row[column.columnIndex], for: column.type)
    }
}
