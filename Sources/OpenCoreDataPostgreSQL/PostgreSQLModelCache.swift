import Foundation
import OpenCoreData

/// The model a PostgreSQL store carries in `Z_MODELCACHE`, so that a store can be opened and its model
/// converted without the model's files (`ocd fetch URL`, `ocd model convert URL`), as a store file Core Data
/// wrote is opened with the compiled model it carries.
///
/// A SQLite store's cache holds a compiled model because Core Data reads it; only this library reads a
/// PostgreSQL store, so its cache holds the model as the XML of an Xcode `contents` file
/// (``ManagedObjectModel/xcodeModelXML()``), which the library both writes and reads whole. Every writable open
/// puts the model it opened with there when the cache holds another (after a migration, the new version's).
enum PostgreSQLModelCache {
    /// The XML form's first bytes, which tell it from anything else a cache might hold.
    static let xmlPrefix = Data("<?xml".utf8)

    /// Writes `model` into the cache unless it holds that model already, in the caller's transaction.
    ///
    /// - Throws: ``StoreError`` when the server refuses the statements.
    static func store(_ model: ManagedObjectModel, in session: PostgreSQLSession) throws {
        let xml = model.xcodeModelXML()
        let rows = try session.rows("SELECT Z_CONTENT FROM Z_MODELCACHE")
        if rows.count == 1, let stored = Data.fromStoreValue(rows[0][0]), stored == xml { return }
        try session.execute("DELETE FROM Z_MODELCACHE")
        try session.execute("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", [xml.storeValue])
    }

    /// The model in the cache, or nil when the cache is empty or the schema has none.
    ///
    /// - Throws: ``StoreError/incompatibleModel(path:differences:)`` when the cache holds something
    ///   other than a model's XML; a ``ModelError`` when that XML does not describe a valid model.
    static func model(in session: PostgreSQLSession, server: String) throws -> ManagedObjectModel? {
        let present = try session.rows(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND upper(table_name) = 'Z_MODELCACHE'")
        guard present.first.flatMap({ Int64.fromStoreValue($0[0]) }) == 1 else { return nil }
        let rows = try session.rows("SELECT Z_CONTENT FROM Z_MODELCACHE")
        guard let first = rows.first, let content = Data.fromStoreValue(first[0]), !content.isEmpty else { return nil }
        guard rows.count == 1, content.starts(with: xmlPrefix) else {
            throw StoreError.incompatibleModel(
                path: server, differences: ["Z_MODELCACHE holds \(rows.count) rows or no model XML, which this library never writes"])
        }
        return try ManagedObjectModel(xmlData: content, source: "\(server) (Z_MODELCACHE)")
    }
}

extension PostgreSQLStore {
    /// The model the store at `configuration` carries (every writable open records the model it opened
    /// with), or nil when it carries none (a schema without a store, or a store no writable open has touched
    /// since the cache was added). Nothing is written; the schema is not created.
    ///
    /// ```swift
    /// if let model = try PostgreSQLStore.cachedModel(configuration: configuration) { … }
    /// ```
    ///
    /// - Throws: ``StoreError/connectionFailed(server:reason:)`` when the server cannot be reached;
    ///   ``StoreError/incompatibleModel(path:differences:)`` when the cache holds something else;
    ///   a ``ModelError`` when the cached XML is not a valid model.
    public static func cachedModel(configuration: PostgreSQLStoreConfiguration) throws -> ManagedObjectModel? {
        var settings = configuration
        settings.poolSize = 1
        guard try PostgreSQLStorePresence.find(configuration: settings).hasStore else { return nil }
        let pool = PostgreSQLConnectionPool(configuration: settings)
        defer { pool.close() }
        return try pool.withSession { session in
            try PostgreSQLModelCache.model(in: session, server: configuration.redactedURL)
        }
    }
}
