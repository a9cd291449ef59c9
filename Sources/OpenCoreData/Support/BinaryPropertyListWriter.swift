import Foundation

/// Writes Apple's binary property list format ("bplist00"), UIDs included.
///
/// Written here because `PropertyListSerialization` has no way to write a UID, and a keyed archive
/// (`NSKeyedArchiver`'s format, which Transformable attributes are stored in) refers to its objects by UID.
/// The output reads back with ``BinaryPropertyListReader`` and with Apple's own readers.
///
/// ```swift
/// let bytes = BinaryPropertyListWriter.write(.dictionary(["root": .uid(1)]))
/// ```
enum BinaryPropertyListWriter {
    /// The bytes of `value` as a binary property list. ``PropertyListValue/other`` is written as null.
    static func write(_ value: PropertyListValue) -> Data {
        var flattener = Flattener()
        _ = flattener.add(value)
        return flattener.encoded()
    }

    /// One object of the list, its children already given indices.
    private enum Flat {
        case leaf(PropertyListValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private struct Flattener {
        var objects: [Flat] = []
        /// Strings written once each: keyed archives repeat their keys in every object.
        var stringIndex: [String: Int] = [:]

        mutating func add(_ value: PropertyListValue) -> Int {
            switch value {
            case .string(let string):
                if let index = stringIndex[string] { return index }
                objects.append(.leaf(value))
                stringIndex[string] = objects.count - 1
                return objects.count - 1
            case .array(let items):
                let index = reserve()
                objects[index] = .array(items.map { add($0) })
                return index
            case .dictionary(let entries):
                let index = reserve()
                // Sorted keys: the same value always gives the same bytes.
                let sorted = entries.sorted { $0.key < $1.key }
                let keys = sorted.map { add(.string($0.key)) }
                let values = sorted.map { add($0.value) }
                objects[index] = .dictionary(keys: keys, values: values)
                return index
            default:
                objects.append(.leaf(value))
                return objects.count - 1
            }
        }

        private mutating func reserve() -> Int {
            objects.append(.leaf(.other))
            return objects.count - 1
        }

        func encoded() -> Data {
            let referenceSize = Self.byteCount(for: UInt64(max(objects.count - 1, 0)))
            var bytes: [UInt8] = Array("bplist00".utf8)
            var offsets: [Int] = []
            offsets.reserveCapacity(objects.count)
            func appendReference(_ index: Int) { Self.appendBigEndian(UInt64(index), size: referenceSize, to: &bytes) }
            for object in objects {
                offsets.append(bytes.count)
                switch object {
                case .array(let items):
                    Self.appendMarker(0xA, count: items.count, to: &bytes)
                    items.forEach(appendReference)
                case .dictionary(let keys, let values):
                    Self.appendMarker(0xD, count: keys.count, to: &bytes)
                    keys.forEach(appendReference)
                    values.forEach(appendReference)
                case .leaf(let value):
                    Self.appendLeaf(value, to: &bytes)
                }
            }
            let offsetTableStart = bytes.count
            let offsetSize = Self.byteCount(for: UInt64(offsetTableStart))
            for offset in offsets { Self.appendBigEndian(UInt64(offset), size: offsetSize, to: &bytes) }
            bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            Self.appendBigEndian(UInt64(objects.count), size: 8, to: &bytes)
            Self.appendBigEndian(0, size: 8, to: &bytes)
            Self.appendBigEndian(UInt64(offsetTableStart), size: 8, to: &bytes)
            return Data(bytes)
        }

        static func appendLeaf(_ value: PropertyListValue, to bytes: inout [UInt8]) {
            switch value {
            case .boolean(let flag): bytes.append(flag ? 0x09 : 0x08)
            case .integer(let number): appendInteger(number, to: &bytes)
            case .real(let number):
                bytes.append(0x23)
                appendBigEndian(number.bitPattern, size: 8, to: &bytes)
            case .date(let date):
                bytes.append(0x33)
                appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8, to: &bytes)
            case .data(let data):
                appendMarker(0x4, count: data.count, to: &bytes)
                bytes += data
            case .string(let string):
                if string.utf8.allSatisfy({ $0 < 0x80 }) {
                    appendMarker(0x5, count: string.utf8.count, to: &bytes)
                    bytes += string.utf8
                } else {
                    let units = Array(string.utf16)
                    appendMarker(0x6, count: units.count, to: &bytes)
                    for unit in units { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
                }
            case .uid(let number):
                let size = byteCount(for: number)
                bytes.append(0x80 | UInt8(size - 1))
                appendBigEndian(number, size: size, to: &bytes)
            case .other, .array, .dictionary:
                bytes.append(0x00)
            }
        }

        /// Non-negative integers in the fewest of 1, 2, 4 or 8 bytes; negative ones in 8, as Apple's writer does.
        static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
            let size = number < 0 ? 8 : byteCount(for: UInt64(number))
            let power: UInt8 = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3
            bytes.append(0x10 | power)
            appendBigEndian(UInt64(bitPattern: number), size: size, to: &bytes)
        }

        /// A marker with its count in the low nibble, or 0xF and the count as an integer object after it.
        static func appendMarker(_ kind: UInt8, count: Int, to bytes: inout [UInt8]) {
            if count < 15 {
                bytes.append(kind << 4 | UInt8(count))
            } else {
                bytes.append(kind << 4 | 0xF)
                appendInteger(Int64(count), to: &bytes)
            }
        }

        static func byteCount(for value: UInt64) -> Int {
            if value <= 0xFF { return 1 }
            if value <= 0xFFFF { return 2 }
            if value <= 0xFFFF_FFFF { return 4 }
            return 8
        }

        static func appendBigEndian(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
            for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
    }
}
