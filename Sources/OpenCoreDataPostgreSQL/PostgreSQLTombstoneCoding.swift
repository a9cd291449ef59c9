import Foundation
import OpenCoreData

/// A tombstone column's cell on PostgreSQL. On SQLite a `ZTOMBSTONEn` column takes each preserved value with
/// its own storage class (one column serves every entity's n-th preserved attribute, of any type); a
/// PostgreSQL column has one type, so each value is kept as `BYTEA`: a tag byte for the storage class
/// (1 integer, 2 real, 3 text, 4 bytes) and the value (integers and reals as 8 big-endian bytes, text in
/// UTF-8, bytes as they are). A null value is SQL NULL. Read back, it is the same value SQLite gives.
enum PostgreSQLTombstoneCoding {
    /// The cell for `value`.
    static func encode(_ value: StoreValue) -> StoreValue {
        switch value.storage {
        case .null: return .null
        case .int64(let number): return Data([1] + withUnsafeBytes(of: number.bigEndian, Array.init)).storeValue
        case .double(let number): return Data([2] + withUnsafeBytes(of: number.bitPattern.bigEndian, Array.init)).storeValue
        case .string(let text): return (Data([3]) + Data(text.utf8)).storeValue
        case .blob(let bytes): return (Data([4]) + bytes).storeValue
        }
    }

    /// The value a cell holds; nil when its bytes are not a tombstone cell (no known tag, or an integer or
    /// real that is not 8 bytes, or text that is not UTF-8).
    static func decode(_ cell: StoreValue) -> PersistentHistoryChange.TombstoneValue? {
        guard case .blob(let data) = cell.storage else { return cell.isNull ? .null : nil }
        guard let tag = data.first else { return nil }
        let payload = data.dropFirst()
        func word() -> UInt64? {
            guard payload.count == 8 else { return nil }
            return payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        switch tag {
        case 1: return word().map { .integer(Int64(bitPattern: $0)) }
        case 2: return word().map { .real(Double(bitPattern: $0)) }
        case 3: return String(data: Data(payload), encoding: .utf8).map { .text($0) }
        case 4: return .data(Data(payload))
        default: return nil
        }
    }
}
