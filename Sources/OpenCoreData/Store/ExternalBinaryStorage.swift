import Foundation

/// Core Data's external binary storage (`allowsExternalBinaryDataStorage`), read and written the way Core
/// Data lays it out (docs/INTEROP.md): the column of a Binary or Transformable attribute with the flag holds
/// a marker byte, then either the value itself (`0x01`, values up to 128 KiB) or the name of a file
/// (`0x02`, an uppercase UUID string ending in NUL) in `.<store name>_SUPPORT/_EXTERNAL_DATA/` next to the
/// store. Rows reach the rest of the library with the plain bytes: the store decodes the columns as rows are
/// read and encodes them as a save writes them. Every file this library touches is handled here.
package final class ExternalBinaryStorage: Sendable {
    /// The column holds the value after the marker.
    static let inlineMarker: UInt8 = 0x01
    /// The column holds a file name after the marker.
    static let referenceMarker: UInt8 = 0x02
    /// The largest value kept in the column; larger ones go to a file (Core Data's 0x20000).
    static let inlineLimit = 131_072

    /// One flagged column of a table: its index in the table's columns and the attribute it stores.
    struct Column: Sendable {
        var index: Int
        var entity: String
        var key: String
    }

    /// The flagged columns of one table, with the storage that decodes them.
    struct TableColumns: Sendable {
        let storage: ExternalBinaryStorage
        let table: String
        let columns: [Column]
    }

    /// `.<store name>_SUPPORT/_EXTERNAL_DATA` next to the store file.
    let directory: URL
    /// The store's path, for errors.
    let storePath: String
    private let model: ManagedObjectModel
    private let columnsByTable: [String: [Column]]
    /// The columns hold plain bytes: a store this library wrote before it kept the markers, opened
    /// read-only (``UnmarkedExternalData``).
    let valuesArePlain: Bool

    /// The storage of a file store whose model has flagged attributes; nil otherwise (in-memory stores keep
    /// every value in its row). `directory` replaces the folder next to the file (a migration's copy of a
    /// store uses the original's); `valuesArePlain` reads the columns as they are.
    init?(storeURL: URL?, model: ManagedObjectModel, directory: URL? = nil, valuesArePlain: Bool = false) {
        guard let storeURL else { return nil }
        var columnsByTable: [String: [Column]] = [:]
        var seen: Set<String> = []
        for entity in model.entities {
            for (slot, property) in entity.allProperties.enumerated() {
                guard let attribute = property as? AttributeDescription, Self.usesExternalStorage(attribute),
                      slot < entity.storage.count,
                      case .attribute(_, let index) = entity.storage[slot] else { continue }
                // A sub-entity stores its inherited attributes in the same column: listed once.
                guard seen.insert("\(entity.tableName)#\(index)").inserted else { continue }
                columnsByTable[entity.tableName, default: []].append(
                    Column(index: index, entity: attribute.entity?.name ?? entity.name, key: attribute.name))
            }
        }
        guard !columnsByTable.isEmpty else { return nil }
        self.columnsByTable = columnsByTable.mapValues { $0.sorted { $0.index < $1.index } }
        self.model = model
        self.valuesArePlain = valuesArePlain
        storePath = storeURL.path
        self.directory = directory ?? Self.directory(forStoreAt: storeURL)
    }

    /// Whether Core Data keeps `attribute`'s values in the external form: a stored Binary or Transformable
    /// attribute with the flag.
    static func usesExternalStorage(_ attribute: AttributeDescription) -> Bool {
        attribute.allowsExternalBinaryDataStorage && !attribute.isTransient
            && (attribute.attributeType == .binaryData || attribute.attributeType == .transformable)
    }

    /// `.<store file name without its extension>_SUPPORT/_EXTERNAL_DATA` in the store's folder.
    static func directory(forStoreAt storeURL: URL) -> URL {
        let name = storeURL.deletingPathExtension().lastPathComponent
        return storeURL.deletingLastPathComponent()
            .appendingPathComponent(".\(name)_SUPPORT", isDirectory: true)
            .appendingPathComponent("_EXTERNAL_DATA", isDirectory: true)
    }

    /// The flagged columns of `table`, nil when it has none.
    func columns(forTable table: String) -> TableColumns? {
        columnsByTable[table].map { TableColumns(storage: self, table: table, columns: $0) }
    }

    // MARK: Reading

    /// The value a flagged column's stored bytes stand for.
    ///
    /// - Throws: ``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)`` naming the row
    ///   when the marker is unknown, the reference is not a plain file name, or the file is missing or
    ///   unreadable.
    func decode(_ stored: Data, entity: String, key: String, primaryKey: Int64) throws -> Data {
        func unreadable(_ reason: String) -> StoreError {
            .unreadableExternalData(path: storePath, entity: entity, key: key, primaryKey: primaryKey, reason: reason)
        }
        // Core Data reads an empty column as an empty value.
        guard !valuesArePlain, let marker = stored.first else { return stored }
        switch marker {
        case Self.inlineMarker:
            return Data(stored.dropFirst())
        case Self.referenceMarker:
            return try readFile(named: fileName(inReference: stored, unreadable), unreadable)
        default:
            throw unreadable("the column starts with 0x\(String(marker, radix: 16, uppercase: true)), neither the inline (0x01) nor the file (0x02) marker")
        }
    }

    /// The file name a reference column (the marker `0x02`, the name, NULs) holds.
    ///
    /// - Throws: what `unreadable` makes of the reason when the bytes are not a file name Core Data makes.
    private func fileName(inReference stored: Data, _ unreadable: (String) -> StoreError) throws -> String {
        var nameBytes = stored.dropFirst()
        if let end = nameBytes.firstIndex(of: 0) {
            guard nameBytes[end...].allSatisfy({ $0 == 0 }) else {
                throw unreadable("the file reference has bytes after its end")
            }
            nameBytes = nameBytes[..<end]
        }
        guard let name = String(bytes: nameBytes, encoding: .utf8), Self.isFileName(name) else {
            let shown = String(decoding: nameBytes.prefix(80), as: UTF8.self)
            throw unreadable("the file reference '\(shown)' is not a UUID file name in _EXTERNAL_DATA")
        }
        return name
    }

    /// Checks, without reading it, that a reference column names a regular file in the folder: what a
    /// fetch does for a value it leaves to be read when asked for (``RowCellKind/external``), so a missing
    /// file, a link or a FIFO is reported with the row as before.
    ///
    /// - Throws: ``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)`` naming the row.
    func checkReference(_ stored: Data, entity: String, key: String, primaryKey: Int64) throws {
        func unreadable(_ reason: String) -> StoreError {
            .unreadableExternalData(path: storePath, entity: entity, key: key, primaryKey: primaryKey, reason: reason)
        }
        let name = try fileName(inReference: stored, unreadable)
        if let problem = Self.confinementProblem(of: directory) { throw unreadable(problem) }
        var status = stat()
        guard lstat(directory.appendingPathComponent(name).path, &status) == 0 else {
            if errno == ENOENT { throw unreadable("its file _EXTERNAL_DATA/\(name) is missing") }
            throw unreadable("its file _EXTERNAL_DATA/\(name) cannot be examined: \(String(cString: strerror(errno)))")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFLNK: throw unreadable("its file _EXTERNAL_DATA/\(name) is a symbolic link")
        default: throw unreadable("its file _EXTERNAL_DATA/\(name) is not a regular file")
        }
    }

    /// Whether `name` is a file name Core Data makes: a UUID string (36 characters, hex digits and hyphens
    /// in 8-4-4-4-12), so it can name nothing outside the folder.
    static func isFileName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count == 36 else { return false }
        for (offset, byte) in bytes.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard isHexDigit(byte) else { return false }
            }
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: "a")...UInt8(ascii: "f"):
            return true
        default:
            return false
        }
    }

    /// The bytes of a file in the folder, refusing a symbolic link (the file's or a folder's on the way) or
    /// anything but a regular file.
    private func readFile(named name: String, _ unreadable: (String) -> StoreError) throws -> Data {
        if let problem = Self.confinementProblem(of: directory) { throw unreadable(problem) }
        let path = directory.appendingPathComponent(name).path
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer for ever; the check
        // below refuses it once open. Reads of a regular file ignore the flag.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { throw unreadable("its file _EXTERNAL_DATA/\(name) is missing") }
            if code == ELOOP { throw unreadable("its file _EXTERNAL_DATA/\(name) is a symbolic link") }
            throw unreadable("its file _EXTERNAL_DATA/\(name) cannot be opened: \(String(cString: strerror(code)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw unreadable("its file _EXTERNAL_DATA/\(name) is not a regular file")
        }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw unreadable("its file _EXTERNAL_DATA/\(name) cannot be read: \(error.localizedDescription)")
        }
    }

    /// Whether the folder holds a regular file named `name` (a symbolic link is not one).
    func holdsFile(named name: String) -> Bool {
        guard Self.isFileName(name), Self.confinementProblem(of: directory) == nil else { return false }
        var status = stat()
        return lstat(directory.appendingPathComponent(name).path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    /// The file a flagged column's stored bytes refer to, nil for an inline value or anything else.
    static func referencedFile(in stored: StoreValue) -> String? {
        guard case .blob(let bytes) = stored.storage, bytes.first == referenceMarker else { return nil }
        let name = String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
        return isFileName(name) ? name : nil
    }

    // MARK: Writing

    /// A value in the inline form (the marker, then the bytes), whatever its size: what batch requests
    /// write, as they write rows without a save's file handling. Core Data reads it as any inline value.
    static func inlineForm(_ value: StoreValue) -> StoreValue {
        guard case .blob(let bytes) = value.storage else { return value }
        var stored = Data([inlineMarker])
        stored.append(bytes)
        return stored.storeValue
    }

    /// The files one save writes and lets go of. New files are written (and synced) before the transaction
    /// commits; after the commit the files of replaced and deleted values are removed (``commit()``), after
    /// a failure the new files are (``rollBack()``), so the folder always matches the committed rows.
    final class SaveFiles {
        let storage: ExternalBinaryStorage
        /// Files written by this save.
        private(set) var written: [String] = []
        /// Files whose values this save replaced or deleted.
        private(set) var released: [String] = []

        init(storage: ExternalBinaryStorage) { self.storage = storage }

        /// Where an attempt (a savepoint) starts, to undo only it.
        var mark: (written: Int, released: Int) { (written.count, released.count) }

        /// Undoes what an attempt did since `mark`: its new files are removed, its releases forgotten.
        func rollBack(to mark: (written: Int, released: Int)) {
            for name in written[mark.written...] { storage.remove(name) }
            written.removeSubrange(mark.written...)
            released.removeSubrange(mark.released...)
        }

        /// The save failed: every new file is removed, the old ones stay.
        func rollBack() { rollBack(to: (0, 0)) }

        /// The save committed: the files of replaced and deleted values are removed.
        func commit() {
            for name in released { storage.remove(name) }
            written.removeAll()
            released.removeAll()
        }

        /// Notes that a committed value the save replaces or deletes is stored as `stored`.
        func release(_ stored: StoreValue) {
            if let name = ExternalBinaryStorage.referencedFile(in: stored) { released.append(name) }
        }

        /// The column value for a flagged attribute's value: inline with its marker, or a reference to a new
        /// file holding it.
        ///
        /// - Throws: ``StoreError/externalDataNotWritten(path:entity:key:reason:)`` when the folder or the
        ///   file cannot be made.
        func encode(_ value: StoreValue, entity: String, key: String) throws -> StoreValue {
            guard case .blob(let bytes) = value.storage else { return value }
            guard bytes.count > ExternalBinaryStorage.inlineLimit else { return ExternalBinaryStorage.inlineForm(value) }
            let name = UUID().uuidString.uppercased()
            try storage.writeFile(named: name, bytes, entity: entity, key: key)
            written.append(name)
            var stored = Data([ExternalBinaryStorage.referenceMarker])
            stored.append(contentsOf: Array(name.utf8))
            stored.append(0)
            return stored.storeValue
        }
    }

    /// Writes a new file and syncs it and the folder to disk.
    private func writeFile(named name: String, _ bytes: Data, entity: String, key: String) throws {
        func failure(_ reason: String) -> StoreError {
            .externalDataNotWritten(path: storePath, entity: entity, key: key, reason: reason)
        }
        if let problem = Self.makeConfinedFolder(directory) { throw failure(problem) }
        let path = directory.appendingPathComponent(name).path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw failure("_EXTERNAL_DATA/\(name) cannot be created: \(String(cString: strerror(errno)))")
        }
        var complete = false
        defer {
            close(descriptor)
            if !complete { unlink(path) }
        }
        let wroteAll = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
        guard wroteAll else { throw failure("_EXTERNAL_DATA/\(name) cannot be written: \(String(cString: strerror(errno)))") }
        guard fsync(descriptor) == 0 else { throw failure("_EXTERNAL_DATA/\(name) cannot be synced: \(String(cString: strerror(errno)))") }
        complete = true
        // The file's name lives in the folder: synced too, so a committed reference never outlives it.
        let folder = open(directory.path, O_RDONLY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }

    /// Removes a file the committed rows no longer refer to (a file already gone is fine). Called only
    /// after the transaction that let go of it committed.
    func remove(_ name: String) {
        Self.remove(name, from: directory)
    }

    /// Removes a file named as Core Data names them from `directory` (a file already gone is fine).
    static func remove(_ name: String, from directory: URL) {
        // Through a linked folder the file would be another folder's: it stays (a file too many is no loss).
        guard isFileName(name), confinementProblem(of: directory) == nil else { return }
        unlink(directory.appendingPathComponent(name).path)
    }
}

extension ExternalBinaryStorage.TableColumns {
    /// Readies the flagged columns of one row in place: `cells` from `start` hold the row in table order
    /// (`Z_PK`, `Z_ENT` first), so errors name the row's entity and key. A value kept in the row is decoded
    /// now; a reference to a file is checked (a file name Core Data makes, a regular file in the folder) and
    /// left in its cell as ``RowCellKind/external``, read when asked for: a fetch neither reads nor holds
    /// values nobody asks for (30 rows referring to a 64 MB file cost their names, not 1.9 GB).
    ///
    /// - Throws: what ``ExternalBinaryStorage/decode(_:entity:key:primaryKey:)`` and
    ///   ``ExternalBinaryStorage/checkReference(_:entity:key:primaryKey:)`` throw.
    func deferRow(_ cells: RowBlock.Cells, start: Int) throws {
        for column in columns {
            let index = start + column.index
            guard cells.kinds[index] == RowCellKind.side.rawValue,
                  case .blob(let stored) = cells.value(at: index).storage else { continue }
            let primaryKey = Int64(bitPattern: cells.bits[start])
            let entityNumber = Int(Int64(bitPattern: cells.bits[start + 1]))
            let entity = storage.entityName(number: entityNumber) ?? column.entity
            if !storage.valuesArePlain, stored.first == ExternalBinaryStorage.referenceMarker {
                try storage.checkReference(stored, entity: entity, key: column.key, primaryKey: primaryKey)
                cells.kinds[index] = RowCellKind.external.rawValue
                cells.header.pointee.external = self
            } else {
                let decoded = try storage.decode(stored, entity: entity, key: column.key, primaryKey: primaryKey)
                cells.assign(index, to: decoded.storeValue)
            }
        }
    }

    /// The value of a deferred reference (``deferRow(_:start:)``) in column `column` of a row, read from its
    /// file now.
    ///
    /// - Throws: what ``ExternalBinaryStorage/decode(_:entity:key:primaryKey:)`` throws.
    func loadDeferred(_ stored: StoreValue, column: Int, entityNumber: Int, primaryKey: Int64) throws -> StoreValue {
        guard case .blob(let bytes) = stored.storage,
              let flagged = columns.first(where: { $0.index == column }) else { return stored }
        let entity = storage.entityName(number: entityNumber) ?? flagged.entity
        return try storage.decode(bytes, entity: entity, key: flagged.key, primaryKey: primaryKey).storeValue
    }

    /// Decodes the flagged columns of a row held as values.
    ///
    /// - Throws: what ``ExternalBinaryStorage/decode(_:entity:key:primaryKey:)`` throws.
    func decode(_ row: inout RowValues) throws {
        for column in columns {
            guard case .blob(let stored) = row[column.index].storage else { continue }
            let entity = storage.entityName(number: row.entityNumber) ?? column.entity
            row[column.index] = try storage.decode(stored, entity: entity, key: column.key,
                                                   primaryKey: row.primaryKey).storeValue
        }
    }
}

extension ExternalBinaryStorage {
    /// The name of the entity numbered `number` in the store's model.
    func entityName(number: Int) -> String? { model.entity(number: number)?.name }
}
