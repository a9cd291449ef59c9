import Foundation

/// The store rows a controller computed (order, sort keys, section sizes), as saved on disk under its
/// cache name.
///
/// A cache file is used only when both of these match what it was written with:
/// - the request's fingerprint (entity, sub-entities, predicate format, sort descriptors, section key
///   path), and
/// - the store's data token: the store's identifier, `Z_PRIMARYKEY`, and for every table the results
///   read, `COUNT(*)`, `MAX(Z_PK)` and `SUM(Z_OPT)`.
///
/// Why the token is safe: primary keys come from `Z_PRIMARYKEY.Z_MAX`, which only grows, so an insert
/// raises `MAX(Z_PK)` (or `Z_MAX`); a delete lowers `COUNT(*)` unless rows were also inserted, which
/// raises `MAX(Z_PK)`; an update raises its row's `Z_OPT` (every save and batch update bumps it), and
/// sums only fall through deletes, which show in the count. So any write since the file was made
/// changes the token, and an unchanged token means unchanged rows. Writers that bypass the library
/// (raw SQL leaving `Z_OPT` alone) are not seen; delete the cache after such writes. The token costs
/// one scan of `Z_PK, Z_OPT` per table, far less than the ordered query it replaces.
struct ResultsCache {
    /// The rows of the store part of a result, in order.
    struct Snapshot: Sendable {
        var handles: [Int64] = []
        /// Per row; empty when every row is of `soleEntity`.
        var entities: [Int32] = []
        var soleEntity: Int32?
        /// One column per sort key.
        var keys: [KeyColumn] = []
        /// Section sizes in order (one entry when there is no section key path).
        var sectionCounts: [Int] = []
        /// Whether this came from the cache file.
        var fromCache = false
    }

    let url: URL
    let fingerprint: String
    let keyCount: Int

    /// Where cache files go; change it before creating controllers to keep caches elsewhere.
    static var directory: URL {
        get { directoryStorage.value }
        set { directoryStorage.value = newValue }
    }

    private static let directoryStorage = LockedValue(
        FileManager.default.temporaryDirectory.appendingPathComponent("OpenCoreData-FRC-cache", isDirectory: true))

    /// The file for a cache name: the name with unsafe characters replaced, plus a hash of the exact name.
    static func fileURL(forName name: String) -> URL {
        let safe = String(name.unicodeScalars.prefix(64).map { scalar -> Character in
            let allowed = CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || "-_.".unicodeScalars.contains(scalar)
            return allowed ? Character(scalar) : "_"
        })
        let digest = SHA256.hash(Array(name.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return directory.appendingPathComponent("\(safe)-\(digest).frccache")
    }

    /// Removes one cache file, or every cache file when `name` is nil.
    static func delete(name: String?) {
        if let name {
            try? FileManager.default.removeItem(at: fileURL(forName: name))
        } else {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    // MARK: File format
    // "OCDFRC02", fingerprint, token (UInt32 length + UTF-8 each), keyCount (UInt32), rowCount (UInt64),
    // handles (Int64 each), entities (tag byte 1 + one Int32 when every row has it, else tag 0 + Int32
    // each), keys (tag byte + payload each, column after column), section count (UInt64), section sizes
    // (UInt64 each). Little-endian throughout.

    private static let magic = Array("OCDFRC02".utf8)

    /// The cached snapshot, if the file exists and matches the fingerprint and token; a file that does not
    /// parse is removed.
    func load(token: String) -> Snapshot? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        var reader = Reader(buffer: [UInt8](data))
        guard let snapshot = read(&reader, token: token) else {
            return nil
        }
        return snapshot
    }

    private func read(_ reader: inout Reader, token: String) -> Snapshot? {
        guard reader.bytes(Self.magic.count).map(Array.init) == Self.magic,
              reader.string() == fingerprint, reader.string() == token,
              let keyCount = reader.integer(UInt32.self), Int(keyCount) == self.keyCount,
              let rowCount = reader.integer(UInt64.self), rowCount <= UInt64(reader.remaining / 8) else { return nil }
        var snapshot = Snapshot(fromCache: true)
        let count = Int(rowCount)
        snapshot.handles.reserveCapacity(count)
        for _ in 0..<count {
            guard let handle = reader.integer(UInt64.self) else { return nil }
            snapshot.handles.append(Int64(bitPattern: handle))
        }
        switch reader.bytes(1)?.first {
        case 1:
            guard let entity = reader.integer(UInt32.self) else { return nil }
            snapshot.soleEntity = Int32(bitPattern: entity)
        case 0:
            snapshot.entities.reserveCapacity(count)
            for _ in 0..<count {
                guard let entity = reader.integer(UInt32.self) else { return nil }
                snapshot.entities.append(Int32(bitPattern: entity))
            }
        default: return nil
        }
        for _ in 0..<Int(keyCount) {
            var column = KeyColumnBuilder(capacity: count)
            for _ in 0..<count {
                guard let value = reader.value() else { return nil }
                column.append(value)
            }
            snapshot.keys.append(column.column)
        }
        guard let sectionCount = reader.integer(UInt64.self), sectionCount <= UInt64(reader.remaining / 8) else { return nil }
        for _ in 0..<Int(sectionCount) {
            guard let size = reader.integer(UInt64.self) else { return nil }
            snapshot.sectionCounts.append(Int(size))
        }
        guard reader.remaining == 0, snapshot.sectionCounts.reduce(0, +) == count else { return nil }
        return snapshot
    }

    /// Writes the snapshot (atomically; failures leave no file and are otherwise ignored: the cache is
    /// an optimisation).
    func store(_ snapshot: Snapshot, token: String) {
        var bytes = Self.magic
        bytes.reserveCapacity(64 + snapshot.handles.count * (12 + 9 * keyCount))
        Writer.string(fingerprint, into: &bytes)
        Writer.string(token, into: &bytes)
        Writer.integer(UInt32(keyCount), into: &bytes)
        Writer.integer(UInt64(snapshot.handles.count), into: &bytes)
        for handle in snapshot.handles { Writer.integer(UInt64(bitPattern: handle), into: &bytes) }
        if let sole = snapshot.soleEntity {
            bytes.append(1)
            Writer.integer(UInt32(bitPattern: sole), into: &bytes)
        } else {
            bytes.append(0)
            for entity in snapshot.entities { Writer.integer(UInt32(bitPattern: entity), into: &bytes) }
        }
        for column in snapshot.keys {
            for row in 0..<column.count { Writer.value(column[row], into: &bytes) }
        }
        Writer.integer(UInt64(snapshot.sectionCounts.count), into: &bytes)
        for size in snapshot.sectionCounts { Writer.integer(UInt64(size), into: &bytes) }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url, options: .atomic)
        } catch {
            try? FileManager.default.removeItem(at: url)
        }
    }

    private enum Writer {
        static func integer<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        static func string(_ string: String, into bytes: inout [UInt8]) {
            let utf8 = Array(string.utf8)
            integer(UInt32(utf8.count), into: &bytes)
            bytes.append(contentsOf: utf8)
        }

        static func value(_ value: StoreValue, into bytes: inout [UInt8]) {
            switch value.storage {
            case .null: bytes.append(0)
            case .int64(let int): bytes.append(1); integer(UInt64(bitPattern: int), into: &bytes)
            case .double(let double): bytes.append(2); integer(double.bitPattern, into: &bytes)
            case .string(let text): bytes.append(3); string(text, into: &bytes)
            case .blob(let data):
                bytes.append(4)
                integer(UInt32(data.count), into: &bytes)
                bytes.append(contentsOf: data)
            }
        }
    }

    private struct Reader {
        let buffer: [UInt8]
        var position = 0
        var remaining: Int { buffer.count - position }

        mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, remaining >= count else { return nil }
            defer { position += count }
            return buffer[position..<(position + count)]
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard let slice = bytes(MemoryLayout<T>.size) else { return nil }
            var value: T = 0
            for (shift, byte) in slice.enumerated() { value |= T(byte) << (8 * shift) }
            return value
        }

        mutating func string() -> String? {
            guard let length = integer(UInt32.self), let slice = bytes(Int(length)) else { return nil }
            return String(decoding: slice, as: UTF8.self)
        }

        mutating func value() -> StoreValue? {
            guard let tag = bytes(1)?.first else { return nil }
            switch tag {
            case 0: return .null
            case 1: return integer(UInt64.self).map { Int64(bitPattern: $0).storeValue }
            case 2: return integer(UInt64.self).map { Double(bitPattern: $0).storeValue }
            case 3: return string().map { $0.storeValue }
            case 4:
                guard let length = integer(UInt32.self), let slice = bytes(Int(length)) else { return nil }
                return Data(slice).storeValue
            default: return nil
            }
        }
    }
}

/// A value behind a lock, for process-wide settings.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: Value
    init(_ value: Value) { storage = value }
    var value: Value {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}
