import Foundation

/// Why a store could not be opened, read or written.
public enum StoreError: Error, CustomStringConvertible, LocalizedError, Sendable {
    /// The file is not an SQLite database, or is corrupt.
    case notAStore(path: String, reason: String)
    /// The store was written with a different model; lists what differs.
    case incompatibleModel(path: String, differences: [String])
    /// The store is busy (another writer holds the lock) past the timeout.
    case busy(path: String)
    /// The store is read-only and the operation writes.
    case readOnly(path: String)
    /// SQLite reported an error.
    case sqlite(code: Int32, message: String, sql: String?)
    /// The store's bookkeeping rows are inconsistent.
    case corrupt(path: String, reason: String)

    public var description: String {
        switch self {
        case .notAStore(let path, let reason): return "\(path) is not a store: \(reason)."
        case .incompatibleModel(let path, let differences):
            return "\(path) was written with a different model: " + differences.joined(separator: "; ") + "."
        case .busy(let path): return "\(path) is busy: another connection holds the write lock."
        case .readOnly(let path): return "\(path) is opened read-only."
        case .sqlite(let code, let message, let sql):
            return "SQLite error \(code): \(message)" + (sql.map { " (in \($0))" } ?? "")
        case .corrupt(let path, let reason): return "\(path) is corrupt: \(reason)."
        }
    }

    public var errorDescription: String? { description }
}
