import Foundation

/// The history reader registry (``HistoryReaderRegistry``) as the layers above the store use it: names,
/// transaction numbers and dates in, no connection or SQL out.
extension SQLiteStore {
    /// Registers `name`, or moves its mark, to "has seen every transaction through `seen`", in one write
    /// transaction.
    ///
    /// - Throws: ``StoreError`` when the store cannot be written (read-only, busy, SQLite refuses).
    package func registerHistoryReader(_ name: String, seen: Int64) throws {
        try write { db in
            try HistoryReaderRegistry.create(in: db)
            try HistoryReaderRegistry.register(name, seen: seen, in: SQLiteSession(db: db))
        }
    }

    /// Removes the reader `name`; returns whether it was registered.
    ///
    /// - Throws: ``StoreError`` when the store cannot be written.
    package func unregisterHistoryReader(_ name: String) throws -> Bool {
        try write { db in try HistoryReaderRegistry.unregister(name, in: SQLiteSession(db: db)) }
    }

    /// Every registered reader (name, last transaction seen, when it last said so as seconds since the
    /// reference date), by name; empty when none ever registered.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    package func historyReaders() throws -> [(name: String, seen: Int64, timestamp: Double)] {
        try read { db in try HistoryReaderRegistry.all(in: SQLiteSession(db: db)) }
    }
}
