import Foundation
import OpenCoreData
import PostgresNIO

/// The one boundary between the store's cell values (`StoreValue`, as SQLite rows give them) and
/// PostgreSQL's wire format, both ways.
///
/// The layout uses five PostgreSQL types, one per SQLite storage class (docs/POSTGRESQL.md): `BIGINT`,
/// `DOUBLE PRECISION`, `NUMERIC` (decimal attributes, read back as SQLite's NUMERIC affinity gives them: an
/// integer when the value is whole and fits, a double otherwise), `TEXT` and `BYTEA`. Reading any other type
/// is a typed error naming the column, never a guess.
package enum PostgreSQLValueCoding {
    /// `values` as a statement's bindings, in order.
    package static func bindings(_ values: [StoreValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { append(value, to: &bindings) }
        return bindings
    }

    static func append(_ value: StoreValue, to bindings: inout PostgresBindings) {
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
    /// - Throws: ``StoreError/unexpectedValue(column:type:)`` for a type the layout never uses, or a
    ///   cell whose bytes do not decode as its type says.
    static func value(of cell: PostgresCell) throws -> StoreValue {
        guard let bytes = cell.bytes else { return .null }
        func failed() -> StoreError { .unexpectedValue(column: cell.columnName, type: "\(cell.dataType)") }
        if cell.dataType == .numeric, cell.format == .binary {
            guard let value = PostgreSQLNumeric.value(bytes) else { throw failed() }
            return value
        }
        do {
            switch cell.dataType {
            case .int8: return try cell.decode(Int64.self).storeValue
            case .int4: return Int64(try cell.decode(Int32.self)).storeValue
            case .int2: return Int64(try cell.decode(Int16.self)).storeValue
            case .bool: return (try cell.decode(Bool.self) ? 1 : 0 as Int64).storeValue
            case .float8: return try cell.decode(Double.self).storeValue
            case .float4: return Double(try cell.decode(Float.self)).storeValue
            // Binary NUMERICs are read above, without Foundation's Decimal.
            case .numeric: return numericValue(try cell.decode(Decimal.self))
            case .text, .varchar, .bpchar, .name: return try cell.decode(String.self).storeValue
            case .bytea:
                var buffer = try cell.decode(ByteBuffer.self)
                return Data(buffer.readBytes(length: buffer.readableBytes) ?? []).storeValue
            default: throw failed()
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw failed()
        }
    }

    /// A NUMERIC as SQLite's NUMERIC affinity stores it: a whole number that fits 64 bits as an integer,
    /// anything else as a double.
    static func numericValue(_ decimal: Decimal) -> StoreValue {
        var rounded = Decimal()
        var copy = decimal
        NSDecimalRound(&rounded, &copy, 0, .plain)
        if rounded == decimal, decimal >= Decimal(Int64.min), decimal <= Decimal(Int64.max) {
            return NSDecimalNumber(decimal: decimal).int64Value.storeValue
        }
        return NSDecimalNumber(decimal: decimal).doubleValue.storeValue
    }

    /// One row's cells, in order.
    ///
    /// - Throws: ``StoreError/unexpectedValue(column:type:)`` as ``value(of:)`` does.
    static func values(of row: PostgresRow) throws -> [StoreValue] {
        var values: [StoreValue] = []
        values.reserveCapacity(row.count)
        for cell in row { values.append(try value(of: cell)) }
        return values
    }
}

/// A `NUMERIC` cell in PostgreSQL's binary wire format read straight into the store's value, as SQLite's
/// NUMERIC affinity gives it: a whole number that fits 64 bits as an integer, anything else as a double.
///
/// Dates and decimal attributes are `NUMERIC` columns, so a results controller sorted by a date reads one per
/// row: going through Foundation's `Decimal` (postgres-nio builds it from a decimal string) costs more than
/// the rest of the row. The wire format: four big-endian 16-bit fields (digit count, weight of the first
/// digit, sign, display scale) and then the digits, base 10,000, most significant first; the value is
/// Σ digit[i] × 10,000^(weight − i).
enum PostgreSQLNumeric {
    /// The sign field's values.
    private static let negative: UInt16 = 0x4000, notANumber: UInt16 = 0xC000
    private static let plusInfinity: UInt16 = 0xD000, minusInfinity: UInt16 = 0xF000

    /// The cell's value, or nil when the bytes are not a well-formed binary NUMERIC.
    static func value(_ bytes: ByteBuffer) -> StoreValue? {
        var buffer = bytes
        guard let count = buffer.readInteger(as: Int16.self), count >= 0,
              let weight = buffer.readInteger(as: Int16.self),
              let sign = buffer.readInteger(as: UInt16.self),
              buffer.readInteger(as: Int16.self) != nil,
              buffer.readableBytes == Int(count) * 2 else { return nil }
        switch sign {
        case 0, negative: break
        case notANumber: return Double.nan.storeValue
        case plusInfinity: return Double.infinity.storeValue
        case minusInfinity: return (-Double.infinity).storeValue
        default: return nil
        }
        var digits: [Int16] = []
        digits.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let digit = buffer.readInteger(as: Int16.self), (0..<10_000).contains(digit) else { return nil }
            digits.append(digit)
        }
        let isNegative = sign == negative
        if let integer = wholeNumber(digits, weight: Int(weight), negative: isNegative) { return integer.storeValue }
        return double(digits, weight: Int(weight), negative: isNegative).storeValue
    }

    /// The value as an Int64 when it is whole and fits, else nil.
    private static func wholeNumber(_ digits: [Int16], weight: Int, negative: Bool) -> Int64? {
        // Digits after the decimal point (position past `weight`) must all be zero.
        if digits.count > weight + 1, digits[max(0, weight + 1)...].contains(where: { $0 != 0 }) { return nil }
        var value: Int64 = 0
        // Trailing zero digits are left out of the wire format: positions up to the units digit count anyway.
        for position in 0..<max(0, weight + 1) {
            let digit = Int64(position < digits.count ? digits[position] : 0)
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10_000)
            // Built with the sign applied digit by digit, so Int64.min fits.
            let (next, overflowedAgain) = shifted.addingReportingOverflow(negative ? -digit : digit)
            if overflowed || overflowedAgain { return nil }
            value = next
        }
        return value
    }

    /// The value as the nearest double: exactly when the digits make an integer below 2^53 and the power of
    /// ten is at most 22 (both exact doubles, one rounding), else through the decimal text (correctly rounded).
    private static func double(_ digits: [Int16], weight: Int, negative: Bool) -> Double {
        let exponent = 4 * (weight - (digits.count - 1))
        var mantissa: UInt64 = 0
        var fits = true
        for digit in digits {
            guard mantissa <= (1 << 53) / 10_000 else { fits = false; break }
            mantissa = mantissa * 10_000 + UInt64(digit)
        }
        if fits, mantissa <= 1 << 53, abs(exponent) <= 22 {
            let power = Self.powersOfTen[abs(exponent)]
            let magnitude = exponent < 0 ? Double(mantissa) / power : Double(mantissa) * power
            return negative ? -magnitude : magnitude
        }
        var text = negative ? "-" : ""
        for digit in digits {
            let group = String(digit)
            text += String(repeating: "0", count: 4 - group.count) + group
        }
        return Double(text + "e\(exponent)") ?? .nan
    }

    /// 10^0 … 10^22, each exact as a double.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }
}
