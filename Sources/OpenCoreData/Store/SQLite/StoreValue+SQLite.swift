import Foundation
import GRDB
import GRDBSQLite

/// The SQLite session's edge: a ``StoreValue`` binds as GRDB's value and reads back from one, so that GRDB's
/// statements, rows and arguments take the library's values directly and nothing above `Store/SQLite` needs GRDB.
extension StoreValue: DatabaseValueConvertible {
    /// The same value in GRDB's type, for binding.
    package var databaseValue: DatabaseValue {
        switch storage {
        case .null: return .null
        case .int64(let value): return value.databaseValue
        case .double(let value): return value.databaseValue
        case .string(let value): return value.databaseValue
        case .blob(let value): return value.databaseValue
        }
    }

    /// The value GRDB read, in the library's type; never nil.
    package static func fromDatabaseValue(_ value: DatabaseValue) -> StoreValue? { StoreValue(value) }

    /// The value GRDB read, in the library's type.
    package init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let integer): self.init(storage: .int64(integer))
        case .double(let real): self.init(storage: .double(real))
        case .string(let text): self.init(storage: .string(text))
        case .blob(let bytes): self.init(storage: .blob(bytes))
        }
    }

    /// The value of column `index` of the statement's current row, read straight from SQLite; text is read
    /// to its stored length, so a NUL inside it does not cut it short.
    package init(sqliteStatement: SQLiteStatement, index: Int32) {
        switch sqlite3_column_type(sqliteStatement, index) {
        case SQLITE_NULL: self = .null
        case SQLITE_INTEGER: self.init(storage: .int64(sqlite3_column_int64(sqliteStatement, index)))
        case SQLITE_FLOAT: self.init(storage: .double(sqlite3_column_double(sqliteStatement, index)))
        case SQLITE_TEXT:
            // sqlite3_column_bytes after sqlite3_column_text: the length of the text just converted.
            let text = sqlite3_column_text(sqliteStatement, index)
            let count = Int(sqlite3_column_bytes(sqliteStatement, index))
            self.init(storage: .string(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)))
        default:
            let count = Int(sqlite3_column_bytes(sqliteStatement, index))
            guard count > 0, let bytes = sqlite3_column_blob(sqliteStatement, index) else { self.init(storage: .blob(Data())); return }
            self.init(storage: .blob(Data(bytes: bytes, count: count)))
        }
    }
}
