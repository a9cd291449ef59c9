import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import PostgresNIO

/// The server-side stores of one PostgreSQL scenario at one size: schemas of its own (`ocd_bench_…`), made
/// with the store's layout and filled with the same items as the SQLite fixtures (`Seed`), all dropped by
/// ``dropAll()`` when the scenario is done.
final class PostgreSQLFixtures {
    /// The server's URL as given to `--store` (worker processes are started with it).
    let url: String
    let base: PostgreSQLStoreConfiguration
    let model: ManagedObjectModel
    /// A connection outside every store schema, for filling, resetting and dropping them.
    private let admin: RawPostgreSQL
    private var schemas: [String] = []
    private var populated: [Int: PostgreSQLStoreConfiguration] = [:]
    private var rawConnections: [String: RawPostgreSQL] = [:]

    /// - Throws: ``StoreError`` for a bad URL; postgres-nio's error when the server cannot be reached.
    init(url: String, model: ManagedObjectModel) throws {
        var base = try PostgreSQLStoreConfiguration(url: url)
        base.schema = nil
        self.url = url
        self.base = base
        self.model = model
        var admin = base
        admin.applicationName = "ocd-bench-fixtures"
        self.admin = try RawPostgreSQL(admin)
    }

    /// The item table's name and the column of each attribute, as the store lays them out.
    var itemTable: (name: String, columns: [String: String]) {
        let item = model.entitiesByName["Item"]!
        let columns = item.attributesByName.keys.compactMap { name in
            model.schema.columnName(of: name, in: item).map { (name, $0) }
        }
        return (item.tableName, Dictionary(uniqueKeysWithValues: columns))
    }

    var itemEntityNumber: Int64 { Int64(model.entitiesByName["Item"]!.entityNumber) }

    /// A new, empty schema with the store's layout (history tables too when `history`), dropped by ``dropAll()``.
    ///
    /// - Throws: the store's error when the layout cannot be made.
    func newSchema(history: Bool = false) throws -> PostgreSQLStoreConfiguration {
        let configuration = PostgreSQLBenchModel.scratchSchema(of: base)
        schemas.append(configuration.schema!)
        let store = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: history)
        store.close()
        return configuration
    }

    /// Empties the schema's item table and fills it with items 1…`size` (server-side, one statement), sets
    /// `Z_MAX` past them and refreshes the planner's statistics. Not timed.
    ///
    /// - Throws: postgres-nio's error for a failed statement.
    func fill(_ configuration: PostgreSQLStoreConfiguration, size: Int) throws {
        // The schema name was made by `newSchema` from hex digits; the table and column names by the model.
        let schema = configuration.schema!
        let (table, columns) = itemTable
        let name = columns["name"]!, createdAt = columns["createdAt"]!, done = columns["done"]!
        let group = columns["group"]!, category = columns["category"]!
        try admin.run("TRUNCATE \(schema).\(table)")
        try admin.run("""
            INSERT INTO \(schema).\(table) (Z_PK, Z_ENT, Z_OPT, \(name), \(createdAt), \(done), \(group), \(category))
            SELECT i, $1, 1, 'Item ' || i, \(Int(Seed.firstDate)) + i, CASE WHEN i % 3 = 0 THEN 1 ELSE 0 END, i % 4, i % 50
            FROM generate_series(1::bigint, $2::bigint) AS i
            """, [itemEntityNumber.storeValue, Int64(size).storeValue])
        try admin.run("UPDATE \(schema).Z_PRIMARYKEY SET Z_MAX = $1 WHERE Z_ENT = $2",
                      [Int64(size).storeValue, itemEntityNumber.storeValue])
        try admin.run("ANALYZE \(schema).\(table)")
    }

    /// A schema holding `size` items, made once per fixtures object (read scenarios share it).
    func populated(size: Int) throws -> PostgreSQLStoreConfiguration {
        if let configuration = populated[size] { return configuration }
        let configuration = try newSchema()
        try fill(configuration, size: size)
        populated[size] = configuration
        return configuration
    }

    /// A coordinator with the schema's store added (through the coordinator's PostgreSQL API, as an app does).
    func openCoordinator(_ configuration: PostgreSQLStoreConfiguration,
                         options: StoreOptions = StoreOptions()) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(configuration: configuration, options: options)
        return coordinator
    }

    func makeContext(_ coordinator: PersistentStoreCoordinator) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// The raw side's connection to a schema (one per schema, kept until ``dropAll()``).
    func raw(_ configuration: PostgreSQLStoreConfiguration) throws -> RawPostgreSQL {
        let schema = configuration.schema ?? ""
        if let connection = rawConnections[schema] { return connection }
        var settings = configuration
        settings.applicationName = "ocd-bench-raw"
        let connection = try RawPostgreSQL(settings)
        rawConnections[schema] = connection
        return connection
    }

    /// Closes the raw connections and drops every schema made here.
    func dropAll() {
        for connection in rawConnections.values { connection.close() }
        rawConnections = [:]
        for schema in schemas { _ = try? admin.run("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        schemas = []
        populated = [:]
        admin.close()
    }
}
