import Foundation
import GRDB

/// Lets a writable open of a WAL store leave the file as it was.
///
/// GRDB's `DatabasePool` makes sure a non-empty `-wal` file exists when it opens, and when there is none
/// (or an empty one, as a read-only connection leaves) it creates and drops a table to make one: the
/// store's schema cookie changes and a page is added, though nothing was saved. A `-wal` file holding
/// only a valid header and no frames is what SQLite reads as an empty log, and it satisfies the pool.
enum EmptyWriteAheadLog {
    /// The header magic whose checksums read words big-endian.
    private static let magic: UInt32 = 0x377F_0683
    /// The WAL format version SQLite writes and reads.
    private static let formatVersion: UInt32 = 3_007_000

    /// When the database at `path` is in WAL mode and its log is missing or empty, writes an empty log
    /// while holding SQLite's write lock, so no other connection is writing its first frame meanwhile.
    /// Returns the connection that took the lock: close it once the pool is open, so the log is not
    /// removed by a last connection closing in between. Nil when there was nothing to do or it failed
    /// (the pool then writes its table as before).
    static func prepare(forDatabaseAt path: String, busyTimeout: TimeInterval) -> DatabaseQueue? {
        guard let header = header(forDatabaseAt: path) else { return nil }
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        // The default journal mode: this connection leaves the file's mode as it is.
        guard let keeper = try? DatabaseQueue(path: path, configuration: configuration) else { return nil }
        do {
            try keeper.inDatabase { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                defer { try? db.execute(sql: "ROLLBACK") }
                writeIfEmpty(header, toLogAt: path + "-wal")
            }
        } catch {
            try? keeper.close()
            return nil
        }
        return keeper
    }

    /// Writes `header` to the log when the log is missing or empty; leaves it alone otherwise.
    private static func writeIfEmpty(_ header: [UInt8], toLogAt walPath: String) {
        let descriptor = open(walPath, O_WRONLY | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard lseek(descriptor, 0, SEEK_END) == 0 else { return }
        let written = header.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        if written != header.count { _ = ftruncate(descriptor, 0) }
    }

    /// The 32-byte header of an empty log for the database at `path`, or nil when the database is not in
    /// WAL mode or its header cannot be read.
    static func header(forDatabaseAt path: String) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 100), data.count == 100 else { return nil }
        let bytes = [UInt8](data)
        // Bytes 18 and 19 are the file format's write and read versions: 2 means WAL.
        guard bytes.starts(with: Array("SQLite format 3\u{0}".utf8)), bytes[18] == 2, bytes[19] == 2 else {
            return nil
        }
        let storedPageSize = UInt32(bytes[16]) << 8 | UInt32(bytes[17])
        let pageSize: UInt32 = storedPageSize == 1 ? 65_536 : storedPageSize
        var words: [UInt32] = [magic, formatVersion, pageSize, 0, UInt32.random(in: .min ... .max),
                               UInt32.random(in: .min ... .max)]
        var first: UInt32 = 0, second: UInt32 = 0
        for index in stride(from: 0, to: words.count, by: 2) {
            first = first &+ words[index] &+ second
            second = second &+ words[index + 1] &+ first
        }
        words += [first, second]
        return words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
    }
}
