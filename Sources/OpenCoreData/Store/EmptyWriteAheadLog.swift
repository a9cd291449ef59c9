import Foundation

/// Lets a writable open of a WAL store leave the file as it was.
///
/// GRDB's `DatabasePool` makes sure a non-empty `-wal` file exists when it opens, and when there is none
/// it creates and drops a table to make one: the store's schema cookie changes and a page is added, though
/// nothing was saved. A `-wal` file holding only a valid header and no frames is what SQLite itself leaves
/// and reads as an empty log, and it satisfies the pool; this writes one where there is no log yet.
enum EmptyWriteAheadLog {
    /// The header magic whose checksums read words big-endian.
    private static let magic: UInt32 = 0x377F_0683
    /// The WAL format version SQLite writes and reads.
    private static let formatVersion: UInt32 = 3_007_000

    /// Writes an empty log beside the database at `path` when the database is in WAL mode and has no log,
    /// or an empty one. Does nothing otherwise (a log another connection is writing is never touched, and
    /// a rollback-journal database is switched to WAL by the pool anyway).
    static func prepare(forDatabaseAt path: String) {
        let walPath = path + "-wal"
        let existing = (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int) ?? nil
        guard existing == nil || existing == 0, let header = header(forDatabaseAt: path) else { return }
        // O_EXCL for a new file, so a log another connection creates meanwhile is not overwritten; an existing
        // empty one is written only at offset 0, where SQLite writes its own header on the first frame.
        let flags = existing == nil ? O_WRONLY | O_CREAT | O_EXCL : O_WRONLY
        let descriptor = open(walPath, flags, 0o644)
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
