import Foundation
import GRDB
import PostgresNIO

/// The one boundary between the store's cell values (`DatabaseValue`, as SQLite rows give them) and
/// PostgreSQL's wire format, both ways.
///
/// The layout uses five PostgreSQL types, one per SQLite storage class (docs/POSTGRESQL.md): `BIGINT`,
/// `DOUBLE PRECISION`, `NUMERIC` (decimal attributes, read back as SQLite's NUMERIC affinity gives them: an
/// integer when the value is whole and fits, a double otherwise), `TEXT` and `BYTEA`. Reading any other type
/// is a typed error naming the column, never a guess.
package enum PostgreSQLValueCoding {
    /// `values` as a statement's bindings, in order.
    package static func bindings(_ values: [DatabaseValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { append(value, to: &bindings) }
        return bindings
    }

    static func append(_ value: DatabaseValue, to bindings: inout PostgresBindings) {
        switch value.storage {
        case .null: bindings.appendNull()
        case .int64(let number): bindings.append(number)
        case .double(let number): bindings.append(number)
        case .string(let text): bindings.append(text)
        case .blob(let data): bindings.append(ByteBuffer(bytes: data))
        }
    }

    /// One cell as the store's value.
    ///
    /// - Throws: ``PostgreSQLStoreError/unexpectedValue(column:type:)`` for a type the layout never uses, or a
    ///   cell whose bytes do not decode as its type says.
    static func value(of cell: PostgresCell) throws -> DatabaseValue {
        guard cell.bytes != nil else { return .null }
        func failed() -> PostgreSQLStoreError { .unexpectedValue(column: cell.columnName, type: "\(cell.dataType)") }
        do {
            switch cell.dataType {
            case .int8: return try cell.decode(Int64.self).databaseValue
            case .int4: return Int64(try cell.decode(Int32.self)).databaseValue
            case .int2: return Int64(try cell.decode(Int16.self)).databaseValue
            case .bool: return (try cell.decode(Bool.self) ? 1 : 0 as Int64).databaseValue
            case .float8: return try cell.decode(Double.self).databaseValue
            case .float4: return Double(try cell.decode(Float.self)).databaseValue
            case .numeric: return numericValue(try cell.decode(Decimal.self))
            case .text, .varchar, .bpchar, .name: return try cell.decode(String.self).databaseValue
            case .bytea:
                var buffer = try cell.decode(ByteBuffer.self)
                return Data(buffer.readBytes(length: buffer.readableBytes) ?? []).databaseValue
            default: throw failed()
            }
        } catch let error as PostgreSQLStoreError {
            throw error
        } catch {
            throw failed()
        }
    }

    /// A NUMERIC as SQLite's NUMERIC affinity stores it: a whole number that fits 64 bits as an integer,
    /// anything else as a double.
    static func numericValue(_ decimal: Decimal) -> DatabaseValue {
        var rounded = Decimal()
        var copy = decimal
        NSDecimalRound(&rounded, &copy, 0, .plain)
        if rounded == decimal, decimal >= Decimal(Int64.min), decimal <= Decimal(Int64.max) {
            return NSDecimalNumber(decimal: decimal).int64Value.databaseValue
        }
        return NSDecimalNumber(decimal: decimal).doubleValue.databaseValue
    }

    /// One row's cells, in order.
    ///
    /// - Throws: ``PostgreSQLStoreError/unexpectedValue(column:type:)`` as ``value(of:)`` does.
    static func values(of row: PostgresRow) throws -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        values.reserveCapacity(row.count)
        for cell in row { values.append(try value(of: cell)) }
        return values
    }
}
