import Foundation

/// A value read from a binary property list.
enum PropertyListValue: Sendable, Equatable {
    case string(String)
    case data(Data)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case date(Date)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
    /// A UID: how a keyed archive (NSKeyedArchiver) refers to an object by its index in `$objects`.
    case uid(UInt64)
    /// Null, fill and set objects, which neither metadata nor keyed archives hold; kept so a stray one does
    /// not fail a read.
    case other

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var data: Data? { if case .data(let value) = self { value } else { nil } }
    var array: [PropertyListValue]? { if case .array(let value) = self { value } else { nil } }
    var dictionary: [String: PropertyListValue]? { if case .dictionary(let value) = self { value } else { nil } }
    var uid: UInt64? { if case .uid(let value) = self { value } else { nil } }
    var integer: Int64? {
        switch self {
        case .integer(let value): return value
        case .real(let value): return Int64(exactly: value)
        default: return nil
        }
    }
}

/// Reads Apple's binary property list format ("bplist00").
///
/// Written here rather than using `PropertyListSerialization` because on Linux the latter crashes on some
/// damaged binary lists, and store files are outside input: this reader checks every offset, count and
/// reference and throws instead.
///
/// ```swift
/// let value = try BinaryPropertyListReader.read(blob)
/// let type = value.dictionary?["NSStoreType"]?.string
/// ```
enum BinaryPropertyListReader {
    struct Failure: Error, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// Deeper nesting than this is refused (metadata is three levels deep).
    static let maximumDepth = 64
    /// Objects may be shared: a list can name one object many times, and each mention is a copy in the value
    /// read. The objects read (mentions, not distinct objects) may number at most this many times the
    /// distinct objects, or ``minimumObjectAllowance``, or the file's size in bytes, whichever is more: each
    /// mention written in the file takes at least a byte (CoreFoundation writes one zero for thousands of
    /// equal elements), so only shared containers, whose mentions multiply, can pass it.
    static let maximumReadsPerObject = 4
    static let minimumObjectAllowance = 10_000
    /// The bytes of data and strings read may be at most this many times the list's own size, or
    /// ``minimumByteAllowance``, whichever is more: a small blob naming one large object many times must not
    /// expand into gigabytes.
    static let maximumExpansion = 4
    static let minimumByteAllowance = 1 << 20

    static func read(_ data: Data) throws -> PropertyListValue {
        var reader = try Reader(bytes: [UInt8](data))
        return try reader.object(at: reader.topObject, depth: 0)
    }

    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTableStart: Int
        /// Objects being read, to refuse a container that contains itself.
        var inProgress: Set<Int> = []
        /// Objects read so far; shared references could otherwise make a small file expand enormously.
        var visits = 0
        /// Bytes of data and string payloads read so far, for the same reason.
        var expandedBytes = 0

        init(bytes: [UInt8]) throws {
            self.bytes = bytes
            guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else {
                throw Failure(reason: "not a binary property list")
            }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
                throw Failure(reason: "invalid trailer")
            }
            let count = Self.bigEndian(bytes, at: trailer + 8, size: 8)
            let top = Self.bigEndian(bytes, at: trailer + 16, size: 8)
            let tableStart = Self.bigEndian(bytes, at: trailer + 24, size: 8)
            // Every bound is checked against the file size before any arithmetic that could overflow.
            guard count >= 1, count <= UInt64(bytes.count), top < count, tableStart >= 8,
                  tableStart <= UInt64(trailer),
                  count <= (UInt64(trailer) - tableStart) / UInt64(offsetSize) else {
                throw Failure(reason: "invalid trailer")
            }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTableStart = Int(tableStart)
        }

        static func bigEndian(_ bytes: [UInt8], at start: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in start..<start + size { value = value << 8 | UInt64(bytes[index]) }
            return value
        }

        /// The byte offset of object `index`, checked to lie between the header and the offset table.
        func offset(of index: Int) throws -> Int {
            guard index >= 0, index < objectCount else { throw Failure(reason: "object reference out of range") }
            let offset = Self.bigEndian(bytes, at: offsetTableStart + index * offsetSize, size: offsetSize)
            guard offset >= 8, offset < UInt64(offsetTableStart) else { throw Failure(reason: "object offset out of range") }
            return Int(offset)
        }

        /// Counts `count` more bytes of payload read, refusing the list when they pass its allowance.
        mutating func expand(by count: Int) throws {
            expandedBytes += count
            let allowance = max(BinaryPropertyListReader.minimumByteAllowance,
                                bytes.count * BinaryPropertyListReader.maximumExpansion)
            guard expandedBytes <= allowance else {
                throw Failure(reason: "shared objects expand to more than \(allowance) bytes")
            }
        }

        /// Checks that `count` items of `size` bytes fit between `start` and the offset table.
        func checkFits(_ start: Int, count: Int, size: Int) throws {
            guard count >= 0, start <= offsetTableStart, count <= (offsetTableStart - start) / max(size, 1) else {
                throw Failure(reason: "object runs past the end of the object table")
            }
        }

        /// The length stored in a marker's low nibble, or in the integer object that follows when it is 0xF.
        /// Returns the length and where the payload starts.
        func length(marker: UInt8, at offset: Int) throws -> (Int, Int) {
            let nibble = Int(marker & 0x0F)
            if nibble != 0x0F { return (nibble, offset + 1) }
            try checkFits(offset + 1, count: 1, size: 1)
            let intMarker = bytes[offset + 1]
            guard intMarker >> 4 == 0x1, intMarker & 0x0F <= 3 else { throw Failure(reason: "invalid length") }
            let size = 1 << Int(intMarker & 0x0F)
            try checkFits(offset + 2, count: size, size: 1)
            let value = Self.bigEndian(bytes, at: offset + 2, size: size)
            guard value <= UInt64(bytes.count) else { throw Failure(reason: "invalid length") }
            return (Int(value), offset + 2 + size)
        }

        mutating func object(at index: Int, depth: Int) throws -> PropertyListValue {
            guard depth <= BinaryPropertyListReader.maximumDepth else { throw Failure(reason: "nested too deeply") }
            visits += 1
            guard visits <= max(BinaryPropertyListReader.minimumObjectAllowance, bytes.count,
                                objectCount * BinaryPropertyListReader.maximumReadsPerObject) else {
                throw Failure(reason: "too many object references (more than \(BinaryPropertyListReader.maximumReadsPerObject) reads per object)")
            }
            let offset = try offset(of: index)
            let marker = bytes[offset]
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .boolean(false)
                case 0x09: return .boolean(true)
                default: return .other
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                guard size <= 16 else { throw Failure(reason: "invalid integer") }
                try checkFits(offset + 1, count: size, size: 1)
                // 16-byte integers keep their low 8 bytes; 8-byte integers are signed, smaller ones not.
                let raw = Self.bigEndian(bytes, at: offset + 1 + max(0, size - 8), size: min(size, 8))
                return .integer(Int64(bitPattern: raw))
            case 0x2:
                let size = 1 << Int(marker & 0x0F)
                try checkFits(offset + 1, count: size, size: 1)
                switch size {
                case 4: return .real(Double(Float(bitPattern: UInt32(Self.bigEndian(bytes, at: offset + 1, size: 4)))))
                case 8: return .real(Double(bitPattern: Self.bigEndian(bytes, at: offset + 1, size: 8)))
                default: throw Failure(reason: "invalid real")
                }
            case 0x3:
                guard marker == 0x33 else { throw Failure(reason: "invalid date") }
                try checkFits(offset + 1, count: 8, size: 1)
                return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.bigEndian(bytes, at: offset + 1, size: 8))))
            case 0x4:
                let (count, start) = try length(marker: marker, at: offset)
                try checkFits(start, count: count, size: 1)
                try expand(by: count)
                return .data(Data(bytes[start..<start + count]))
            case 0x5:
                let (count, start) = try length(marker: marker, at: offset)
                try checkFits(start, count: count, size: 1)
                try expand(by: count)
                // "ASCII" strings: bytes above 0x7F are read as Latin-1 rather than refused.
                return .string(String(decoding: bytes[start..<start + count].map { UInt16($0) }, as: UTF16.self))
            case 0x6:
                let (count, start) = try length(marker: marker, at: offset)
                try checkFits(start, count: count, size: 2)
                try expand(by: 2 * count)
                let units = (0..<count).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x7:
                let (count, start) = try length(marker: marker, at: offset)
                try checkFits(start, count: count, size: 1)
                try expand(by: count)
                return .string(String(decoding: bytes[start..<start + count], as: UTF8.self))
            case 0x8:
                // A UID of (low nibble + 1) big-endian bytes, at most 8.
                let size = Int(marker & 0x0F) + 1
                guard size <= 8 else { throw Failure(reason: "invalid UID") }
                try checkFits(offset + 1, count: size, size: 1)
                return .uid(Self.bigEndian(bytes, at: offset + 1, size: size))
            case 0xA, 0xC:
                let (count, start) = try length(marker: marker, at: offset)
                try checkFits(start, count: count, size: referenceSize)
                let items = try containerItems(index, references: (0..<count).map { reference(at: start + $0 * referenceSize) },
                                               depth: depth)
                return .array(items)
            case 0xD:
                let (count, start) = try length(marker: marker, at: offset)
                guard count <= Int.max / 2 else { throw Failure(reason: "invalid dictionary") }
                try checkFits(start, count: count * 2, size: referenceSize)
                let keys = (0..<count).map { reference(at: start + $0 * referenceSize) }
                let values = (0..<count).map { reference(at: start + (count + $0) * referenceSize) }
                let keyObjects = try containerItems(index, references: keys, depth: depth)
                let valueObjects = try containerItems(index, references: values, depth: depth)
                var dictionary: [String: PropertyListValue] = [:]
                for (key, value) in zip(keyObjects, valueObjects) {
                    guard let key = key.string else { throw Failure(reason: "a dictionary key is not a string") }
                    dictionary[key] = value
                }
                return .dictionary(dictionary)
            default:
                throw Failure(reason: "unknown object type \(marker >> 4)")
            }
        }

        func reference(at position: Int) -> Int {
            // Fits in Int: at most 8 bytes, and out-of-range values are refused by `offset(of:)`.
            Int(truncatingIfNeeded: Self.bigEndian(bytes, at: position, size: referenceSize))
        }

        mutating func containerItems(_ container: Int, references: [Int], depth: Int) throws -> [PropertyListValue] {
            guard inProgress.insert(container).inserted else { throw Failure(reason: "a container contains itself") }
            defer { inProgress.remove(container) }
            return try references.map { try object(at: $0, depth: depth + 1) }
        }
    }
}
