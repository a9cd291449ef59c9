import Foundation
import GRDB
import GRDBSQLite
import Logging
import Synchronization
import GRDBSQLite

/// An SQLite store in Core Data's layout (docs/STORE-LAYOUT.md).
///
/// Created by ``PersistentStoreCoordinator/addPersistentStore(type:at:options:)``. It turns requests into SQL
/// and rows; it knows nothing about objects.
public final class SQLiteStore: PersistentStore, @unchecked Sendable {
    // @unchecked Sendable: immutable after init; `writer` is GRDB's thread-safe connection manager.

    /// The store's type.
    public let type: StoreType

    let model: ManagedObjectModel
    let writer: any DatabaseWriter
    /// Whether the SQLite file at `path` is in rollback-journal mode: bytes 18 and 19 of its header (the file
    /// format's write and read versions) are 1, where WAL mode writes 2. A missing or short file is not.
    static func usesRollbackJournal(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        return header[header.startIndex + 18] == 1 && header[header.startIndex + 19] == 1
    }

    /// A read-only open of a file with a hot journal reads a private, rolled-back copy (see `init`); this
    /// is its folder, removed with the store.
    private let recoveredCopyFolder: URL?
    package let identity: StoreIdentity
    /// How many reads this store has run (for tests that check a path reads nothing).
    let readCount = Atomic<Int>(0)
    /// Write transactions under way; reads by key go through the pool meanwhile (a read inside a write
    /// must see the write's own changes).
    let activeWrites = Atomic<Int>(0)
    /// The connection for loads by primary key (file stores opened writable; nil otherwise).
    let keyedReader: KeyedRowReader?
    /// Writes the persistent history (stores opened writable with history tracking; nil otherwise).
    let history: HistoryRecorder?
    /// Core Data's external binary storage of the model's flagged attributes (file stores whose model has
    /// some; nil otherwise).
    package let externalStorage: ExternalBinaryStorage?
    package var schema: StoreSchema { model.schema }
    package var displayPath: String { url?.path ?? ":memory:" }
    /// The file of an XML store (nil for the other types).
    let xmlFile: XMLStoreFile?

    static let sqlLogger = Logger(label: "OpenCoreData.SQL")
    /// Set `OCD_SQL_DEBUG=1` (like Core Data's SQLDebug launch argument) to log every statement.
    static let sqlDebug: Bool = ProcessInfo.processInfo.environment["OCD_SQL_DEBUG"].map { $0 != "0" && !$0.isEmpty } ?? false

    init(type: StoreType, url: URL?, model: ManagedObjectModel, options: StoreOptions) throws {
        self.type = type
        self.model = model
        var configuration = Configuration()
        // An XML store's tables are filled from its file: its in-memory database is always writable (saves to
        // a read-only XML store are refused by `isReadOnly`).
        configuration.readonly = options.readOnly && type != .xml
        configuration.busyMode = .timeout(options.busyTimeout)
        configuration.label = "OpenCoreData"
        configuration.maximumReaderCount = 4
        configuration.prepareDatabase { db in
            StoreFunctions.register(in: db)
            if SQLiteStore.sqlDebug {
                db.trace(options: .profile) { event in
                    if case .profile(let statement, let duration) = event {
                        SQLiteStore.sqlLogger.info("\(statement.expandedSQL) (\(String(format: "%.4f", duration))s)")
                    }
                }
            }
        }
        let path = type == .xml ? ":memory:" : url?.path ?? ":memory:"
        let xmlFile = try url.flatMap { type == .xml ? try XMLStoreFile(url: $0, model: model, readOnly: options.readOnly) : nil }
        self.xmlFile = xmlFile
        // An existing file is checked through a read-only connection first: opening a pool switches the
        // journal mode and writes, which must never happen to a file we then refuse.
        var checked: ExistingStore?
        var openPath = path
        var recoveredCopyFolder: URL?
        if type == .sqlite, FileManager.default.fileExists(atPath: path) {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            if size == 0 {
                // An empty file is an empty SQLite database: a new store when opened writable.
                if options.readOnly { throw StoreError.notAStore(path: path, reason: "the file is empty (zero bytes)") }
            } else {
                // Another version of the model's bundle wrote the store: migrate it first (in one
                // transaction, through a connection of its own), or refuse with a typed error.
                if !FileManager.default.fileExists(atPath: path + "-journal") {
                    if !options.readOnly { try Self.renameEarlierEntityColumns(path: path, model: model, options: options) }
                    try StoreMigration.migrateIfNeeded(path: path, model: model, options: options)
                }
                do {
                    checked = try Self.checkExisting(path: path, model: model, options: options)
                } catch is HotJournalNeedsWritableOpen {
                    // An interrupted write left a hot journal, which only a writable connection can roll
                    // back. Read-only means the file must not change, so the roll-back happens on a private
                    // copy of the file and its journal, and the store reads that copy.
                    let folder = try Self.rolledBackCopy(of: path)
                    recoveredCopyFolder = folder
                    openPath = folder.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
                    checked = try Self.checkExisting(path: openPath, model: model, options: options)
                    Self.sqlLogger.warning("\(path): an interrupted write left a hot journal; reading a rolled-back private copy (open the store writable once to roll the file itself back)")
                }
            }
        }
        self.recoveredCopyFolder = recoveredCopyFolder
        do {
            switch (type, options.readOnly) {
            case (.inMemory, _), (.xml, _):
                writer = try DatabaseQueue(configuration: configuration)
            case (.sqlite, true):
                guard FileManager.default.fileExists(atPath: path) else {
                    throw StoreError.notAStore(path: path, reason: "no such file")
                }
                writer = try DatabaseQueue(path: openPath, configuration: configuration)
            case (.sqlite, false) where Self.usesRollbackJournal(path: openPath):
                // A store another tool keeps in rollback-journal mode stays in it: a pool would switch the
                // file to WAL (its header) though nothing is saved. One connection serves reads and writes.
                writer = try DatabaseQueue(path: openPath, configuration: configuration)
            case (.sqlite, false):
                configuration.prepareDatabase { db in
                    try db.execute(sql: "PRAGMA synchronous = NORMAL")
                }
                // Otherwise the pool writes to a file that has no log yet, though nothing is saved.
                let logKeeper = EmptyWriteAheadLog.prepare(forDatabaseAt: path, busyTimeout: options.busyTimeout)
                defer { try? logKeeper?.close() }
                writer = try DatabasePool(path: path, configuration: configuration)
            }
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
        var loadedIdentifier = xmlFile?.uuid ?? UUID().uuidString.uppercased()
        do {
            if let checked {
                loadedIdentifier = checked.identifier
                if let metadata = checked.updatedMetadata {
                    let data = try metadata.plistData()
                    try writer.write { db in
                        try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = (SELECT MIN(Z_VERSION) FROM Z_METADATA)",
                                       arguments: [data])
                    }
                }
            } else {
                var schemaOptions = options
                if type == .xml { schemaOptions.readOnly = false }
                loadedIdentifier = try Self.prepareSchema(writer: writer, model: model, options: schemaOptions,
                                                          path: path, newIdentifier: loadedIdentifier,
                                                          refusesForeignObjects: Self.refusesForeignObjects(options))
                if let xmlFile { try writer.write { db in try xmlFile.load(into: SQLiteSession(db: db), model: model) } }
            }
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
        identity = StoreIdentity(uuid: loadedIdentifier)
        // Loads by primary key skip GRDB's pool checkout through a connection of their own (read-only file
        // stores and in-memory stores have no second connection to open).
        keyedReader = KeyedRowReader.isEnabled && type == .sqlite && !options.readOnly && writer is DatabasePool
            ? KeyedRowReader(path: path, busyTimeout: options.busyTimeout) : nil
        var externalStorage = type == .sqlite
            ? ExternalBinaryStorage(storeURL: url, model: model, directory: options.externalDataDirectory) : nil
        if let storage = externalStorage {
            // A store written before the markers existed is marked now, before anything reads it (or read
            // as it is when read-only).
            do {
                if try UnmarkedExternalData.prepare(writer, storage: storage, schema: model.schema,
                                                    readOnly: options.readOnly) == .readsPlainBytes {
                    externalStorage = ExternalBinaryStorage(storeURL: url, model: model, directory: options.externalDataDirectory,
                                                            valuesArePlain: true)
                }
            } catch let error as DatabaseError {
                throw StoreError.fromOpening(error, path: path)
            }
        }
        self.externalStorage = externalStorage
        history = options.persistentHistoryTracking && !options.readOnly ? HistoryRecorder(model: model, externalStorage: externalStorage, remembersOwnTransactions: options.remoteChangeNotifications) : nil
        super.init(typeName: type.rawValue, url: url, identifier: loadedIdentifier, options: options)
    }

    /// What checking an existing store file found.
    struct ExistingStore {
        var identifier: String
        /// Metadata to write because only the version hashes differed and the caller allowed the update.
        var updatedMetadata: StoreMetadata?
    }

    /// Checks an existing file through a read-only connection that changes nothing in it. Nil when the
    /// file must be opened writable before it can be read (a hot journal left by an interrupted write,
    /// which SQLite rolls back on a writable open).
    private static func checkExisting(path: String, model: ManagedObjectModel, options: StoreOptions) throws -> ExistingStore? {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(options.busyTimeout)
        let hasHotJournal = FileManager.default.fileExists(atPath: path + "-journal")
        do {
            let reader = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? reader.close() }
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            if size <= options.integrityCheckLimit {
                let problems = try reader.read { try String.fetchAll($0, sql: "PRAGMA quick_check(5)") }
                if problems != ["ok"] {
                    throw StoreError.corrupt(path: path, reason: "SQLite's quick_check found damage: \(problems.joined(separator: "; "))")
                }
            }
            let tableCount = try reader.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'") ?? 0
            }
            // An SQLite file with no tables yet becomes a new store when opened writable.
            if tableCount == 0 && !options.readOnly { return nil }
            var readOnly = options
            readOnly.readOnly = true
            var updated: StoreMetadata?
            let identifier = try prepareSchema(writer: reader, model: model, options: readOnly, path: path,
                                               newIdentifier: UUID().uuidString.uppercased(),
                                               refusesForeignObjects: Self.refusesForeignObjects(options),
                                               quietHashDifferences: !options.readOnly) { differences, metadata in
                guard !options.readOnly else { return }
                guard options.updatesMetadataWhenSchemaMatches, var metadata else {
                    throw StoreError.incompatibleModel(path: path, differences: differences)
                }
                metadata.versionHashes = model.entityVersionHashesByName
                metadata.versionIdentifiers = StoreMetadata(model: model).versionIdentifiers
                updated = metadata
            }
            return ExistingStore(identifier: identifier, updatedMetadata: updated)
        } catch let error as DatabaseError {
            if hasHotJournal, error.resultCode == .SQLITE_READONLY || error.extendedResultCode.rawValue & 0xff == SQLITE_READONLY {
                if options.readOnly { throw HotJournalNeedsWritableOpen() }
                return nil
            }
            throw StoreError.fromOpening(error, path: path)
        }
    }

    /// Renames the to-one entity-number columns a store of `model` has under the names this library gave
    /// them before it followed Core Data (``EarlierEntityColumnNames``), in one transaction of a connection of
    /// its own, before the read-only check of the file sees them. Nothing is opened for a model without such
    /// columns.
    ///
    /// - Throws: ``StoreError`` when the file cannot be opened or written.
    private static func renameEarlierEntityColumns(path: String, model: ManagedObjectModel, options: StoreOptions) throws {
        let candidates = EarlierEntityColumnNames.candidates(of: model)
        guard !candidates.isEmpty else { return }
        let connection = try MigrationRunner.openConnection(to: path, busyTimeout: options.busyTimeout, label: "OpenCoreData.rename")
        defer { try? connection.close() }
        func needed(_ db: Database) throws -> [EarlierEntityColumnNames.Renaming] {
            var columnsByTable: [String: Set<String>] = [:]
            for table in Set(candidates.map(\.table)) where try db.tableExists(table) {
                columnsByTable[table] = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(SQLIdentifier.quoted(table)))")
                    .map { ($0["name"] as String).uppercased() })
            }
            return EarlierEntityColumnNames.needed(by: model, columnsByTable: columnsByTable)
        }
        do {
            // Looked for first, so a store that needs nothing is not written to.
            guard try !connection.read(needed).isEmpty else { return }
            try connection.write { db in try EarlierEntityColumnNames.rename(needed(db), in: SQLiteSession(db: db)) }
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
    }

    /// Whether an open with `options` must refuse a store holding schema objects nobody we know made.
    private static func refusesForeignObjects(_ options: StoreOptions) -> Bool {
        !options.readOnly && !options.allowsForeignSchemaObjects
    }

    /// A read-only check met a hot journal.
    private struct HotJournalNeedsWritableOpen: Error {}

    /// Copies a file and its hot journal into a private folder and opens the copy writable once, so SQLite
    /// rolls the interrupted transaction back there. Returns the folder.
    static func rolledBackCopy(of path: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("OpenCoreData-recovered-\(UUID().uuidString)", isDirectory: true)
        let copy = folder.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for suffix in ["", "-journal"] {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
            }
            let queue = try DatabaseQueue(path: copy)
            // The first read of a writable connection rolls the hot journal back.
            _ = try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM sqlite_master") }
            try queue.close()
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw StoreError.corrupt(path: path, reason: "an interrupted write left a hot journal, and rolling it back on a private copy failed (\(error)); open the store writable once so SQLite can roll it back")
        }
        return folder
    }

    deinit {
        if let recoveredCopyFolder { try? FileManager.default.removeItem(at: recoveredCopyFolder) }
    }

    /// Creates the layout in an empty database, or checks that an existing one fits the model.
    /// Returns the store's UUID.
    private static func prepareSchema(writer: any DatabaseWriter, model: ManagedObjectModel, options: StoreOptions,
                                      path: String, newIdentifier: String, refusesForeignObjects: Bool,
                                      quietHashDifferences: Bool = false,
                                      hashesDiffer: (([String], StoreMetadata?) throws -> Void)? = nil) throws -> String {
        let readOnly = options.readOnly
        let tables = try writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if tables.isEmpty {
            guard !readOnly else { throw StoreError.notAStore(path: path, reason: "the database is empty") }
            try writer.write { db in
                for statement in model.schema.creationSQL { try db.execute(sql: statement) }
                let metadata = StoreMetadata(model: model, uuid: UUID(uuidString: newIdentifier) ?? UUID())
                try StoreBookkeeping.writeInitialRows(model: model, metadata: metadata, in: SQLiteSession(db: db))
            }
            return newIdentifier
        }
        let tableSet = Set(tables.map { $0.uppercased() })
        guard tableSet.contains("Z_METADATA"), tableSet.contains("Z_PRIMARYKEY") else {
            throw StoreError.notAStore(path: path, reason: "it has tables but not Core Data's Z_METADATA and Z_PRIMARYKEY")
        }
        // Columns this library named before it followed Core Data: renamed by a writable open, explained by a
        // read-only one.
        let renamings = try writer.read { db in
            let candidates = EarlierEntityColumnNames.candidates(of: model).filter { tableSet.contains($0.table) }
            var columnsByTable: [String: Set<String>] = [:]
            for table in Set(candidates.map(\.table)) {
                columnsByTable[table] = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(SQLIdentifier.quoted(table)))")
                    .map { ($0["name"] as String).uppercased() })
            }
            return EarlierEntityColumnNames.needed(by: model, columnsByTable: columnsByTable)
        }
        if !renamings.isEmpty, !readOnly {
            try writer.write { db in try EarlierEntityColumnNames.rename(renamings, in: SQLiteSession(db: db)) }
        }
        let (foundDifferences, metadata, rowUUID) = try writer.read { db in
            let metadataRow = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
            let rowUUID: String? = metadataRow?[0]
            let plist: Data? = metadataRow?[1]
            let metadata = try plist.map { try StoreMetadata(plistData: $0, rowUUID: rowUUID, storePath: path) }
            return (try Self.schemaDifferences(db, model: model, tableSet: tableSet), metadata, rowUUID)
        }
        // Without a property list the model the store was written with is unknown: that is a difference too.
        let hashDifferences = metadata?.differences(from: model)
            ?? ["the store has no metadata property list (Z_PLIST is NULL), so its model's version hashes are unknown"]
        let tableDifferences = EarlierEntityColumnNames.explained(foundDifferences, renamings)
        if !tableDifferences.isEmpty {
            throw StoreError.incompatibleModel(path: path, differences: tableDifferences + hashDifferences)
        }
        if refusesForeignObjects {
            let foreign = try writer.read { try ForeignSchemaObjects.list(in: $0, schema: model.schema) }
            if !foreign.isEmpty { throw StoreError.foreignSchemaObjects(path: path, objects: foreign) }
        }
        guard let identifier = metadata?.uuidString ?? rowUUID else {
            throw StoreError.corrupt(path: path, reason: "Z_METADATA has no row: the store's identity and model are unknown")
        }
        if !hashDifferences.isEmpty, let hashesDiffer {
            try hashesDiffer(hashDifferences, metadata)
            if !quietHashDifferences {
                sqlLogger.warning("\(path): version hashes differ from the model, the schema matches; reading anyway: \(hashDifferences.joined(separator: "; "))")
            }
        } else if !hashDifferences.isEmpty {
            // The tables are what the model implies; only hashes differ (optionality, delete rules…).
            if readOnly {
                sqlLogger.warning("\(path): version hashes differ from the model, the schema matches; reading anyway: \(hashDifferences.joined(separator: "; "))")
            } else if options.updatesMetadataWhenSchemaMatches, var updated = metadata {
                updated.versionHashes = model.entityVersionHashesByName
                updated.versionIdentifiers = StoreMetadata(model: model).versionIdentifiers
                let data = try updated.plistData()
                try writer.write { db in
                    try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = (SELECT MIN(Z_VERSION) FROM Z_METADATA)",
                                   arguments: [data])
                }
            } else {
                throw StoreError.incompatibleModel(path: path, differences: hashDifferences)
            }
        }
        return identifier
    }

    /// How the store's tables differ from what the model implies (empty when they match).
    static func schemaDifferences(_ db: Database, model: ManagedObjectModel, tableSet: Set<String>) throws -> [String] {
            var differences: [String] = []
            differences += StoreBookkeeping.numberingDifferences(
                model: model, stored: try StoreBookkeeping.entityNames(in: SQLiteSession(db: db)))
            for table in model.schema.tables {
                guard tableSet.contains(table.name) else {
                    differences.append("table \(table.name) is missing")
                    continue
                }
                let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(SQLIdentifier.quoted(table.name)))").map { ($0["name"] as String).uppercased() })
                for column in table.columns where !columns.contains(column.name) {
                    differences.append("column \(table.name).\(column.name) is missing")
                }
            }
            for join in model.schema.joinTables {
                guard tableSet.contains(join.name) else {
                    differences.append("join table \(join.name) is missing")
                    continue
                }
                let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(SQLIdentifier.quoted(join.name)))").map { ($0["name"] as String).uppercased() })
                for column in join.columns where !columns.contains(column) {
                    differences.append("column \(join.name).\(column) is missing")
                }
            }
            return differences
    }

    /// Logs a fetch's summary line when SQL debugging is on, as Core Data does.
    static func logFetch(rows: Int, since start: ContinuousClock.Instant) {
        guard sqlDebug else { return }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        sqlLogger.info("total fetch execution time: \(String(format: "%.4f", seconds))s for \(rows) rows.")
    }
}

extension StoreError {
    static func fromOpening(_ error: DatabaseError, path: String) -> StoreError {
        switch error.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return .notAStore(path: path, reason: error.message ?? "not an SQLite database")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .busy(path: path)
        case .SQLITE_CANTOPEN:
            return .notAStore(path: path, reason: "cannot open the file (\(error.message ?? "unknown reason"))")
        case .SQLITE_READONLY:
            return .readOnly(path: path)
        default:
            return .sqlite(code: error.resultCode.rawValue, message: error.message ?? "", sql: error.sql)
        }
    }

    static func from(_ error: Error, path: String) -> Error {
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED: return StoreError.busy(path: path)
            case .SQLITE_READONLY: return StoreError.readOnly(path: path)
            case .SQLITE_INTERRUPT: return ObjectGraphError.cancelled
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                return StoreError.corrupt(path: path, reason: error.message ?? "corrupt")
            case .SQLITE_CONSTRAINT:
                // The UNIQUE and PRIMARY KEY kinds name the index's columns: "UNIQUE constraint failed: ZTAG.ZLABEL".
                let message = error.message ?? ""
                let prefix = "UNIQUE constraint failed: "
                guard message.hasPrefix(prefix) else {
                    return StoreError.sqlite(code: error.resultCode.rawValue, message: message, sql: error.sql)
                }
                let columns = message.dropFirst(prefix.count).split(separator: ",")
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                return StoreError.uniqueConstraintFailed(path: path, columns: columns, message: message)
            default:
                return StoreError.sqlite(code: error.resultCode.rawValue, message: error.message ?? "", sql: error.sql)
            }
        }
        return error
    }
}
