import Foundation
import GRDB
import GRDBSQLite

/// A column of the row an SQLite statement is on, read with the one SQLite call each read needs: what a
/// ``SteppedRow`` on SQLite compiles to (inlined, so the row's reads cost no more than the calls).
enum SQLiteColumn {
    /// The column's value as stored.
    @inline(__always)
    static func value(_ statement: SQLiteStatement, _ index: Int32) -> StoreValue {
        StoreValue(sqliteStatement: statement, index: index)
    }

    /// The column as an integer (SQLite's conversion: 0 for NULL).
    @inline(__always)
    static func integer(_ statement: SQLiteStatement, _ index: Int32) -> Int64 {
        sqlite3_column_int64(statement, index)
    }

    /// The column's integer when it is stored as one, else nil.
    @inline(__always)
    static func storedInteger(_ statement: SQLiteStatement, _ index: Int32) -> Int64? {
        sqlite3_column_type(statement, index) == SQLITE_INTEGER ? sqlite3_column_int64(statement, index) : nil
    }

    /// The column's real when it is stored as one, else nil.
    @inline(__always)
    static func storedReal(_ statement: SQLiteStatement, _ index: Int32) -> Double? {
        sqlite3_column_type(statement, index) == SQLITE_FLOAT ? sqlite3_column_double(statement, index) : nil
    }
}
