import Foundation

/// What a store file says about itself beyond its entities: the framework version its metadata names, and
/// the tables Core Data adds for persistent history (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`) and
/// CloudKit mirroring (`ANSCK…`), with their rows. `ocd inspect` prints it.
///
/// Read through a read-only connection; the file is never changed. Table names come from the file's own
/// schema and reach SQL quoted.
///
/// ```swift
/// let summary = try StoreFileSummary(storeAt: url)
/// print(summary.frameworkVersion ?? 0, summary.tables.map { "\($0.name): \($0.rowCount)" })
/// ```
public struct StoreFileSummary: Sendable {
    /// What a Core Data table outside the model is for.
    public enum TableKind: String, Sendable {
        /// `ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`.
        case persistentHistory = "persistent history"
        /// `ANSCK…`.
        case cloudKitMirroring = "CloudKit mirroring"
    }

    /// One such table and its rows.
    public struct Table: Sendable, Equatable {
        /// The table's name as the file spells it.
        public let name: String
        /// What it is for.
        public let kind: TableKind
        /// Its rows.
        public let rowCount: Int
    }

    /// `NSPersistenceFrameworkVersion`: the Core Data build (or this library's number, 1414) that last wrote
    /// the metadata; nil when the metadata lacks it or cannot be read.
    public let frameworkVersion: Int?
    /// `NSPersistenceMaximumFrameworkVersion`: the newest framework that has opened the store, which Core
    /// Data has written since about 2017; nil when absent.
    public let maximumFrameworkVersion: Int?
    /// `NSStoreModelVersionHashesVersion` (3 since macOS 10.6); nil when absent.
    public let versionHashesVersion: Int?
    /// Why the metadata could not be read, nil when it could.
    public let metadataProblem: String?
    /// The persistent history and CloudKit tables, in name order.
    public let tables: [Table]

    /// Reads the summary of the store at `url`. A metadata row that cannot be read is reported in
    /// ``metadataProblem``, not thrown.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file is missing or not SQLite, and the other
    ///   ``StoreError``s opening maps SQLite's errors to.
    public init(storeAt url: URL) throws {
        let path = url.path
        var metadata: StoreMetadata?
        var problem: String?
        var tables: [Table] = []
        try ReadOnlyStoreFile.read(path) { db in
            do {
                metadata = try StoreMetadata.read(db, path: path)
            } catch {
                problem = "\(error)"
            }
            let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            for name in names {
                let upper = name.uppercased()
                let kind: TableKind
                if ForeignSchemaObjects.coreDataHistoryTables.contains(upper) {
                    kind = .persistentHistory
                } else if upper.hasPrefix("ANSCK") {
                    kind = .cloudKitMirroring
                } else {
                    continue
                }
                let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(SQLIdentifier.quoted(name))") ?? 0
                tables.append(Table(name: name, kind: kind, rowCount: count))
            }
        }
        frameworkVersion = metadata?.frameworkVersion
        maximumFrameworkVersion = metadata?.maximumFrameworkVersion
        versionHashesVersion = metadata?.versionHashesVersion
        metadataProblem = problem
        self.tables = tables
    }
}
