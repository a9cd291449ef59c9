import Foundation

/// The file behind an XML store (``StoreType/xml``), Core Data's atomic store: every object is loaded into
/// the store's in-memory tables when it opens, and the whole file is written again, in Core Data's XML
/// layout, inside every write transaction that changes them (a temporary file in the same folder, renamed
/// over the old one before the transaction commits: a failed write leaves both the file and the tables as
/// they were).
final class XMLStoreFile: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is touched only inside the store's write transactions, which
    // its one connection serializes.

    /// Core Data's `<version>` in every file seen.
    static let formatVersion = "134481920"
    /// The number a new file's first object id takes (inferred, docs/INTEROP.md).
    static let firstObjectNumber = 101

    let url: URL
    var path: String { url.path }
    private var info: XMLStoreDocument.Info
    /// Whether the store's model is the one the file's objects describe: its metadata (the version hashes of
    /// whoever wrote it) is then written back as it was, rather than the derived model's hashes.
    private let keepsFileHashes: Bool
    /// The file's id of each row, by root table and primary key.
    private var idsByTable: [String: [Int64: String]] = [:]
    private var usedIDs: Set<String> = []
    /// The objects to load, checked against the model; nil once loaded.
    private var pending: XMLStoreContents?

    /// Reads and checks the file (nothing is loaded yet); a missing file is a new, empty store.
    ///
    /// - Throws: ``XMLStoreError`` naming the line, object or key at fault; ``StoreError/notAStore(path:reason:)``
    ///   when the file cannot be read or is missing and `readOnly`.
    init(url: URL, model: ManagedObjectModel, readOnly: Bool) throws {
        self.url = url
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            if readOnly { throw StoreError.notAStore(path: path, reason: "no such file") }
            info = XMLStoreDocument.Info(version: Self.formatVersion, uuid: UUID().uuidString.uppercased(),
                                         nextObjectID: Self.firstObjectNumber)
            keepsFileHashes = false
            pending = XMLStoreContents()
            return
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw StoreError.notAStore(path: path, reason: "it cannot be read (\(error.localizedDescription))")
        }
        let document = try XMLStoreDocument.parse(data, path: path)
        info = document.info
        if info.uuid.flatMap(UUID.init(uuidString:)) == nil { info.uuid = UUID().uuidString.uppercased() }
        let derived = try? XMLStoreModelDerivation.model(of: document, path: path)
        keepsFileHashes = derived?.entityVersionHashesByName == model.entityVersionHashesByName
        pending = try XMLStoreContents(document: document, model: model, path: path)
        for object in document.objects { usedIDs.insert(object.id) }
    }

    /// The file's id of the object in `table` with primary key `key` (nil for an object not yet written).
    func fileID(table: String, key: Int64) -> String? { idsByTable[table]?[key] }

    /// The store's identity: the file's `<UUID>`.
    var uuid: String { info.uuid ?? "" }

    /// Puts the file's objects into the store's (empty) tables, once.
    ///
    /// - Throws: ``XMLStoreError/invalidObject(path:objectID:key:reason:)`` when the two sides of a
    ///   relationship disagree; what the session throws when the database refuses a row.
    func load(into session: some SQLSession, model: ManagedObjectModel) throws {
        guard let contents = pending else { return }
        let rows = try XMLStoreRowImport(contents: contents, model: model, path: path)
        try rows.insert(into: session)
        idsByTable = rows.idsByTable
        pending = nil
    }

    /// Takes the store's tables as they are, without loading the file's objects: for a new file filled by a
    /// migration (``SQLiteStore/copyContents(of:model:toNewStoreAt:type:)``).
    func skipLoading() { pending = nil }

    /// Writes every object of the store's tables to the file, replacing it at once.
    ///
    /// - Throws: ``XMLStoreError/unwritableValue(path:entity:key:reason:)`` for a value the XML layout cannot
    ///   hold; what the session throws; `CocoaError` when the file cannot be written (the old one is left).
    func write(from session: some SQLSession, model: ManagedObjectModel) throws {
        guard pending == nil else { return }
        var export = XMLStoreRowExport(model: model, path: path, idsByTable: idsByTable, usedIDs: usedIDs,
                                       nextObjectID: info.nextObjectID ?? Self.firstObjectNumber)
        let objects = try export.objects(in: session)
        var written = info
        written.nextObjectID = export.nextObjectID
        written.version = written.version ?? Self.formatVersion
        if !keepsFileHashes {
            written.metadata[StoreMetadata.Key.versionHashes] = .dictionary(model.entityVersionHashesByName.mapValues { .data($0) })
            written.metadata[StoreMetadata.Key.versionHashesVersion] = .integer(Int64(StoreMetadata.currentHashesVersion))
            written.metadata[StoreMetadata.Key.versionIdentifiers] = .array((model.versionIdentifiers.isEmpty ? [""] : model.versionIdentifiers).map { .string($0) })
        }
        written.metadata[StoreMetadata.Key.storeType] = .string(StoreType.xml.rawValue)
        written.metadata[StoreMetadata.Key.storeUUID] = .string(uuid)
        let text = XMLStoreRowExport.documentText(info: written, objects: objects)
        try Self.replace(url, with: Data(text.utf8))
        info = written
        idsByTable = export.idsByTable
        usedIDs = export.usedIDs
    }

    /// Writes `data` to a temporary file beside `url` and renames it over `url`.
    static func replace(_ url: URL, with data: Data) throws {
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        do {
            try data.write(to: temporary, options: .withoutOverwriting)
            if rename(temporary.path, url.path) != 0 {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path,
                                                               NSLocalizedDescriptionKey: String(cString: strerror(errno))])
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }
}
