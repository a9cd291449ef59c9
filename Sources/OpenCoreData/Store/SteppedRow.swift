import Foundation

/// The row a query is on while the store steps it, read column by column (0-based) without copying the
/// row out: what the layers above the store read per row instead of SQLite's statement. Valid only inside
/// the closure it is handed to.
///
/// A concrete struct, not a protocol: it is read once per column of every row. On SQLite each read compiles
/// to the one SQLite call it wraps; a store that has its rows as values already (PostgreSQL, whose rows
/// arrive decoded) hands them over as a buffer, and a read is one branch and an index.
package struct SteppedRow {
    private enum Source {
        /// An SQLite statement on a row, read through ``SQLiteColumn``.
        case statement(OpaquePointer)
        case values(UnsafeBufferPointer<StoreValue>)
    }
    private let source: Source

    /// The row an SQLite statement is on (the SQLite store's stepping hands these out).
    init(sqliteStatement statement: OpaquePointer) { source = .statement(statement) }

    /// A row whose values are already read, in column order; valid only while `values` is.
    package init(values: UnsafeBufferPointer<StoreValue>) { source = .values(values) }

    /// The column's value as stored.
    @inline(__always)
    func value(at index: Int32) -> StoreValue {
        switch source {
        case .statement(let statement): SQLiteColumn.value(statement, index)
        case .values(let values): values[Int(index)]
        }
    }

    /// The column as an integer (SQLite's conversion: 0 for NULL).
    @inline(__always)
    func integer(at index: Int32) -> Int64 {
        switch source {
        case .statement(let statement): SQLiteColumn.integer(statement, index)
        case .values(let values): Self.integer(values[Int(index)])
        }
    }

    /// The column's integer when it is stored as one, else nil.
    @inline(__always)
    func storedInteger(at index: Int32) -> Int64? {
        switch source {
        case .statement(let statement): SQLiteColumn.storedInteger(statement, index)
        case .values(let values):
            if case .int64(let value) = values[Int(index)].storage { value } else { nil }
        }
    }

    /// The column's real when it is stored as one, else nil.
    @inline(__always)
    func storedReal(at index: Int32) -> Double? {
        switch source {
        case .statement(let statement): SQLiteColumn.storedReal(statement, index)
        case .values(let values):
            if case .double(let value) = values[Int(index)].storage { value } else { nil }
        }
    }

    /// SQLite's conversion of a value to an integer (`sqlite3_column_int64`): reals truncated, text read
    /// as its leading number, NULL and blobs 0.
    private static func integer(_ value: StoreValue) -> Int64 {
        switch value.storage {
        case .int64(let integer): integer
        case .double(let real): real.isNaN ? 0 : real >= 9.223372036854775807e18 ? .max : real <= -9.223372036854775808e18 ? .min : Int64(real)
        case .string(let text): Int64(text.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber || $0 == "-" || $0 == "+" }) ?? 0
        case .blob, .null: 0
        }
    }
}
