import Foundation

/// Decompresses DEFLATE data (RFC 1951), raw or in a zlib wrapper (RFC 1950), with a bound on the output.
///
/// Core Data keeps the compiled model in a store's `Z_MODELCACHE` compressed this way, and Foundation on Linux
/// has no decompressor. The input is outside data: every code, length and distance is checked, the output
/// may not pass `maximumOutput` bytes (a small blob must not expand into gigabytes), and the loop is
/// iterative. Follows the structure of Mark Adler's reference decoder (puff).
///
/// ```swift
/// let archive = try Inflate.decompress(blob, maximumOutput: 64 << 20)
/// ```
enum Inflate {
    struct Failure: Error, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// Decompresses `data`: raw DEFLATE, or zlib-wrapped when it starts with a valid zlib header and reads
    /// as such (the checksum is not checked; the caller checks what it reads).
    ///
    /// - Throws: ``Failure`` naming the problem and the byte position, or when the output would pass
    ///   `maximumOutput` bytes.
    static func decompress(_ data: Data, maximumOutput: Int) throws -> Data {
        let bytes = [UInt8](data)
        if bytes.count >= 2, bytes[0] & 0x0F == 8, bytes[0] >> 4 <= 7, (Int(bytes[0]) << 8 | Int(bytes[1])) % 31 == 0,
           bytes[1] & 0x20 == 0, let wrapped = try? inflate(bytes, from: 2, maximumOutput: maximumOutput) {
            return Data(wrapped)
        }
        return Data(try inflate(bytes, from: 0, maximumOutput: maximumOutput))
    }

    /// A canonical Huffman code: how many codes of each length, and the symbols in code order.
    private struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int]

        /// Builds the code for `lengths` (0 means unused). Over-subscribed codes are refused; incomplete ones
        /// are allowed (decoding a missing code fails then).
        init(lengths: [Int]) throws {
            for length in lengths { counts[length] += 1 }
            var left = 1
            for length in 1...15 {
                left = left * 2 - counts[length]
                guard left >= 0 else { throw Failure(reason: "an over-subscribed Huffman code") }
            }
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }
    }

    private struct BitReader {
        let bytes: [UInt8]
        var position: Int
        var buffer = 0
        var available = 0

        mutating func bits(_ count: Int) throws -> Int {
            var value = buffer
            while available < count {
                guard position < bytes.count else { throw Failure(reason: "the data ends early (byte \(position))") }
                value |= Int(bytes[position]) << available
                position += 1
                available += 8
            }
            buffer = value >> count
            available -= count
            return value & ((1 << count) - 1)
        }

        mutating func decode(_ code: Huffman) throws -> Int {
            var value = 0, first = 0, index = 0
            for length in 1...15 {
                value |= try bits(1)
                let count = code.counts[length]
                if value - count < first { return code.symbols[index + (value - first)] }
                index += count
                first = (first + count) << 1
                value <<= 1
            }
            throw Failure(reason: "an unused Huffman code (byte \(position))")
        }
    }

    private static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99,
                                     115, 131, 163, 195, 227, 258]
    private static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025,
                                       1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11,
                                        12, 12, 13, 13]
    private static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    private static func inflate(_ bytes: [UInt8], from start: Int, maximumOutput: Int) throws -> [UInt8] {
        var reader = BitReader(bytes: bytes, position: start)
        var output = Output(maximum: maximumOutput)
        let fixedLiterals = try Huffman(lengths: (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 })
        let fixedDistances = try Huffman(lengths: [Int](repeating: 5, count: 30))
        var isLast = false
        while !isLast {
            isLast = try reader.bits(1) == 1
            switch try reader.bits(2) {
            case 0:
                // Stored: byte-aligned LEN and its complement, then LEN bytes.
                reader.buffer = 0
                reader.available = 0
                guard reader.position + 4 <= bytes.count else { throw Failure(reason: "a stored block ends early") }
                let length = Int(bytes[reader.position]) | Int(bytes[reader.position + 1]) << 8
                let complement = Int(bytes[reader.position + 2]) | Int(bytes[reader.position + 3]) << 8
                guard length == ~complement & 0xFFFF else {
                    throw Failure(reason: "a stored block's length check fails (byte \(reader.position))")
                }
                reader.position += 4
                guard reader.position + length <= bytes.count else { throw Failure(reason: "a stored block ends early") }
                for byte in bytes[reader.position..<reader.position + length] { try output.append(byte) }
                reader.position += length
            case 1:
                try codes(&reader, literals: fixedLiterals, distances: fixedDistances, output: &output)
            case 2:
                let (literals, distances) = try dynamicCodes(&reader)
                try codes(&reader, literals: literals, distances: distances, output: &output)
            default:
                throw Failure(reason: "an invalid block type (byte \(reader.position))")
            }
        }
        return output.bytes
    }

    /// The bytes decompressed so far, refusing to grow past the maximum.
    private struct Output {
        let maximum: Int
        var bytes: [UInt8] = []

        mutating func append(_ byte: UInt8) throws {
            guard bytes.count < maximum else { throw Failure(reason: "the data expands past \(maximum) bytes") }
            bytes.append(byte)
        }
    }

    private static func dynamicCodes(_ reader: inout BitReader) throws -> (Huffman, Huffman) {
        let literalCount = try reader.bits(5) + 257
        let distanceCount = try reader.bits(5) + 1
        let codeLengthCount = try reader.bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw Failure(reason: "too many codes in a dynamic block") }
        var codeLengths = [Int](repeating: 0, count: 19)
        for index in 0..<codeLengthCount { codeLengths[codeLengthOrder[index]] = try reader.bits(3) }
        let lengthCode = try Huffman(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try reader.decode(lengthCode)
            switch symbol {
            case 0..<16: lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw Failure(reason: "a repeat with no length before it") }
                lengths += [Int](repeating: previous, count: 3 + (try reader.bits(2)))
            case 17: lengths += [Int](repeating: 0, count: 3 + (try reader.bits(3)))
            default: lengths += [Int](repeating: 0, count: 11 + (try reader.bits(7)))
            }
        }
        guard lengths.count == literalCount + distanceCount else { throw Failure(reason: "code lengths run past their count") }
        guard lengths[256] != 0 else { throw Failure(reason: "a dynamic block without an end-of-block code") }
        return (try Huffman(lengths: Array(lengths[0..<literalCount])),
                try Huffman(lengths: Array(lengths[literalCount...])))
    }

    private static func codes(_ reader: inout BitReader, literals: Huffman, distances: Huffman,
                              output: inout Output) throws {
        while true {
            let symbol = try reader.decode(literals)
            if symbol < 256 {
                try output.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let lengthIndex = symbol - 257
            guard lengthIndex < lengthBase.count else { throw Failure(reason: "an invalid length code (byte \(reader.position))") }
            let length = lengthBase[lengthIndex] + (try reader.bits(lengthExtra[lengthIndex]))
            let distanceSymbol = try reader.decode(distances)
            guard distanceSymbol < distanceBase.count else { throw Failure(reason: "an invalid distance code (byte \(reader.position))") }
            let distance = distanceBase[distanceSymbol] + (try reader.bits(distanceExtra[distanceSymbol]))
            guard distance <= output.bytes.count else {
                throw Failure(reason: "a distance of \(distance) reaches before the start (byte \(reader.position))")
            }
            for _ in 0..<length { try output.append(output.bytes[output.bytes.count - distance]) }
        }
    }
}
