import Foundation
import Testing
@testable import OpenCoreData

/// A store made for the `ocd serve` tests and the real `ocd serve` process browsing it: shelves holding
/// 120 items, some with hostile text in their values, one with a PNG photo, in a model whose file name
/// carries markup too.
final class ServedStore {
    /// Text that would run or break a page if it reached one unescaped.
    static let hostile = ["<script>alert(1)</script>", "\"onmouseover=", "</svg>"]
    /// The entity holding every hostile text in one value. (Its name cannot be hostile: a model refuses
    /// entity and property names other than letters, digits and underscores.)
    static let hostileEntity = "Evil"
    static let itemCount = 120
    /// The first bytes of a PNG file, then some.
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3])

    let folder: URL
    let modelPath: String
    let storePath: String
    let server: ChildProcess
    let port: Int
    /// The SHA-256 of the store file once written, before the server opened it.
    let initialHash: Data
    /// Whether the store keeps persistent history (so the server can tell updates and deletes apart).
    let history: Bool

    /// Writes the store (keeping persistent history when `history` says so) and starts `ocd serve` on it
    /// (with `--read-write` when `readWrite` says so).
    init(history: Bool = false, readWrite: Bool = false) throws {
        self.history = history
        let binary = try #require(OcdBinary.url)
        folder = try OcdBinary.temporaryFolder()
        // The model's file name, which the index shows, carries markup (a file name cannot hold a "/").
        let modelFolder = folder.appendingPathComponent("Shop\"onmouseover=<b>.xcdatamodel")
        try FileManager.default.createDirectory(at: modelFolder, withIntermediateDirectories: true)
        modelPath = modelFolder.path
        try Data(Self.modelXML.utf8).write(to: modelFolder.appendingPathComponent("contents"))
        storePath = folder.appendingPathComponent("Shop.sqlite").path
        try Self.fill(storeAt: storePath, modelPath: modelPath, history: history)
        initialHash = try Self.hash(ofFileAt: storePath)
        server = try ChildProcess.start(binary.path, ["serve", storePath, "--model", modelPath, "--port", "0"]
                                        + (readWrite ? ["--read-write"] : []), captureErrors: true)
        // The first line names the address: "Serving … on http://127.0.0.1:PORT/ (read-only; …)".
        var buffer = ""
        while !buffer.contains("\n") {
            let chunk = server.output.availableData
            if chunk.isEmpty { break }
            buffer += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = buffer.range(of: #"http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression),
              let port = Int(buffer[range].dropFirst("http://127.0.0.1:".count).dropLast()) else {
            let errors = String(decoding: server.errorOutput?.availableData ?? Data(), as: UTF8.self)
            throw ChildProcess.Failure(description: "ocd serve did not say where it listens: \(buffer) \(errors)")
        }
        self.port = port
    }

    deinit {
        server.kill(SIGTERM)
        _ = try? server.wait(seconds: 20)
        try? FileManager.default.removeItem(at: folder)
    }

    /// The SHA-256 of a file's bytes.
    static func hash(ofFileAt path: String) throws -> Data {
        SHA256.hash(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// GETs (or another method) `target` from the server.
    func get(_ target: String, method: String = "GET", headers: [String: String] = [:]) throws -> HTTPGet.Response {
        try HTTPGet.request(target, port: port, method: method, headers: headers)
    }

    /// Posts a form (`fields`, form-encoded) to `target` as this server's own page would: with its origin.
    func post(_ target: String, _ fields: [(String, String)], origin: String? = nil) throws -> HTTPGet.Response {
        let body = fields.map { "\(Self.formEncoded($0.0))=\(Self.formEncoded($0.1))" }.joined(separator: "&")
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        headers["Origin"] = origin ?? "http://127.0.0.1:\(port)"
        if origin == "" { headers["Origin"] = nil }
        return try HTTPGet.request(target, port: port, method: "POST", headers: headers, body: body)
    }

    /// The form token an object page carries (read-write servers only).
    static func formToken(in page: String) -> String? {
        guard let range = page.range(of: #"name="token" value="[0-9a-f]+""#, options: .regularExpression) else { return nil }
        return String(page[range].dropFirst(#"name="token" value=""#.count).dropLast())
    }

    private static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(of: "%20", with: "+")
    }

    /// The primary keys of the objects a table page lists, in its order.
    static func listedKeys(_ page: String, entity: String) -> [Int64] {
        let pattern = try! NSRegularExpression(pattern: "<tr><td><a href=\"/object/\(entity)/(\\d+)\"")
        let text = page as NSString
        return pattern.matches(in: page, range: NSRange(location: 0, length: text.length)).map {
            Int64(text.substring(with: $0.range(at: 1)))!
        }
    }

    /// Opens the store read-only through the library, as a check on what the server shows.
    func directContext() throws -> ManagedObjectContext {
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: storePath),
                                           options: StoreOptions(readOnly: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// The value of `key` of `entity`'s object `primaryKey`, read directly from the store.
    func value(_ key: String, of entity: String, _ primaryKey: Int64) throws -> Any? {
        let context = try directContext()
        let coordinator = try #require(context.persistentStoreCoordinator)
        let id = ManagedObjectID(entity: try #require(coordinator.managedObjectModel.entitiesByName[entity]), primaryKey: primaryKey,
                                 store: try #require(coordinator.storeBackends.first).identity)
        return try context.existingObject(with: id).value(forKey: key)
    }

    /// The primary keys a direct fetch of Item returns for `predicate`, sorted by `sortKey`, for one page.
    func directKeys(sortKey: String?, ascending: Bool = true, predicate: String? = nil, offset: Int, limit: Int = 50) throws -> [Int64] {
        let context = try directContext()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        if let sortKey { request.sortDescriptors = [QuerySortDescriptor(key: sortKey, ascending: ascending)] }
        request.predicate = try predicate.map { try QueryPredicate(format: $0) }
        request.fetchOffset = offset
        request.fetchLimit = limit
        return try context.fetch(request).map(\.objectID.primaryKey)
    }

    /// Two shelves (A1 with 110 items, B2 with 10), 120 items (names item-000…, positions counting down), hostile text in some notes and
    /// in one object of the hostile entity.
    private static func fill(storeAt path: String, modelPath: String, history: Bool) throws {
        try save(storeAt: path, modelPath: modelPath, history: history) { context in try fill(context) }
    }

    /// Saves what `body` does in a context of a coordinator of its own on the store file, as another
    /// process would (the server does not see the commit but through the file).
    func save(_ body: (ManagedObjectContext) throws -> Void) throws {
        try Self.save(storeAt: storePath, modelPath: modelPath, history: history, body)
    }

    private static func save(storeAt path: String, modelPath: String, history: Bool,
                             _ body: (ManagedObjectContext) throws -> Void) throws {
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path),
                                                       options: StoreOptions(persistentHistoryTracking: history))
        defer { coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        try body(context)
        try context.save()
    }

    private static func fill(_ context: ManagedObjectContext) throws {
        var shelves: [ManagedObject] = []
        for label in ["A1", "B2"] {
            let shelf = try context.insertNewObject(forEntityName: "Shelf")
            try shelf.setValue(label, forKey: "label")
            shelves.append(shelf)
        }
        // Inserted in a shuffled order, so that the store's own order is not the order of any column.
        for number in (0..<itemCount).map({ ($0 * 37) % itemCount }) {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue(String(format: "item-%03d", number), forKey: "name")
            try item.setValue(Int32(itemCount - number), forKey: "position")
            try item.setValue(number < 3 ? hostile[number] : "note \(number)", forKey: "note")
            if number == 5 { try item.setValue(png, forKey: "photo") }
            try item.setValue(shelves[number < 110 ? 0 : 1], forKey: "shelf")
        }
        let evil = try context.insertNewObject(forEntityName: hostileEntity)
        try evil.setValue(hostile.joined(separator: " "), forKey: "title")
    }

    /// Shelf ⇄ Item, and an entity for hostile text.
    static let modelXML = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="21754" systemVersion="22E261" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="1.0">
            <entity name="Shelf" syncable="YES">
                <attribute name="label" attributeType="String"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Item" inverseName="shelf" inverseEntity="Item"/>
            </entity>
            <entity name="Item" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <attribute name="position" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="note" optional="YES" attributeType="String"/>
                <attribute name="photo" optional="YES" attributeType="Binary"/>
                <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf"/>
            </entity>
            <entity name="Evil" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """
}
