import Foundation

/// One column's value in one row, as a store holds it: the library's own currency between the object graph,
/// the query compiler and every backend.
///
/// Nothing above `Store/SQLite` (or the PostgreSQL module's session) sees a backend's value type: each session
/// converts at its edge. The five kinds are the storage classes both backends' layouts use; PostgreSQL's
/// `int2/int4/int8/bool`, `float4/float8/numeric`, `text` and `bytea` map onto them.
package struct StoreValue: Hashable, Sendable, CustomStringConvertible {
    /// The kind of value and its payload; equal only to the same kind with an equal payload.
    package enum Storage: Equatable, Sendable {
        /// No value (SQL NULL).
        case null
        /// A whole number.
        case int64(Int64)
        /// A floating-point number.
        case double(Double)
        /// Text.
        case string(String)
        /// Bytes.
        case blob(Data)
    }

    /// The value's kind and payload.
    package let storage: Storage

    /// The missing value.
    package static let null = StoreValue(storage: .null)

    /// A value of the given kind.
    @inlinable package init(storage: Storage) { self.storage = storage }

    /// Whether this is the missing value.
    package var isNull: Bool {
        if case .null = storage { return true }
        return false
    }

    /// Whole and floating-point numbers compare by value (1 == 1.0), as SQL compares them; other kinds are
    /// equal only to their own kind.
    package static func == (lhs: StoreValue, rhs: StoreValue) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.null, .null): return true
        case let (.int64(left), .int64(right)): return left == right
        case let (.double(left), .double(right)): return left == right
        case let (.int64(left), .double(right)): return Int64(exactly: right) == left
        case let (.double(left), .int64(right)): return Int64(exactly: left) == right
        case let (.string(left), .string(right)): return left == right
        case let (.blob(left), .blob(right)): return left == right
        default: return false
        }
    }

    /// Hashes whole numbers as the equal floating-point number, so that values equal under `==` hash alike.
    package func hash(into hasher: inout Hasher) {
        switch storage {
        case .null: hasher.combine(0)
        case .int64(let value): hasher.combine(Double(value))
        case .double(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .blob(let value): hasher.combine(value)
        }
    }

    /// NULL, the number, the text quoted as a Swift literal, or the byte count: for messages and logs.
    package var description: String {
        switch storage {
        case .null: return "NULL"
        case .int64(let value): return String(value)
        case .double(let value): return String(value)
        case .string(let value): return String(reflecting: value)
        case .blob(let value): return "Data(\(value.description))"
        }
    }
}
