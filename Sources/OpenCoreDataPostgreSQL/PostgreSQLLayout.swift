import OpenCoreData

/// Core Data's store layout (docs/STORE-LAYOUT.md) spelled for PostgreSQL: the same tables, columns and
/// indexes as on SQLite, with PostgreSQL's types.
///
/// Names are written unquoted, so PostgreSQL folds them to lower case (`ZITEM` is the table `zitem`) and
/// every statement the store shares with SQLite, which also writes them unquoted, addresses the same
/// tables. The layout's names are plain (letters, digits, `_`, starting with `Z`), so none is a keyword.
enum PostgreSQLLayout {
    /// PostgreSQL's limit on a name's length; a longer name would be cut short silently and could meet another.
    static let maximumNameBytes = 63

    /// The PostgreSQL type for a column SQLite declares as `sqliteType`: one type per storage class
    /// SQLite would keep the column's values in (see ``PostgreSQLValueCoding``).
    static func columnType(forSQLiteType sqliteType: String) -> String {
        switch sqliteType.uppercased() {
        case "INTEGER PRIMARY KEY": "BIGINT PRIMARY KEY"
        case "INTEGER": "BIGINT"
        // A date is a double (seconds since 2001): NUMERIC would keep only the 15 digits PostgreSQL's cast
        // from a double keeps, and a date would come back changed.
        case "FLOAT", "REAL", "TIMESTAMP": "DOUBLE PRECISION"
        // SQLite gives these NUMERIC affinity: a whole value is kept, and read back, as an integer.
        case "DECIMAL": "NUMERIC"
        case "VARCHAR", "TEXT": "TEXT"
        default: "BYTEA"
        }
    }

    /// The column's type with its collation: text in `"C"`, code point order whatever the server's locale,
    /// as memory and SQLite compare strings (the query language's `<`, MIN, MAX and sorting rely on it).
    static func columnDefinition(forSQLiteType sqliteType: String) -> String {
        let type = columnType(forSQLiteType: sqliteType)
        return type == "TEXT" ? "TEXT COLLATE \"C\"" : type
    }

    /// The statements that create the layout of `schema` in an empty PostgreSQL schema.
    ///
    /// - Throws: ``StoreError/incompatibleModel(path:differences:)`` naming each table, column or
    ///   index name longer than PostgreSQL keeps (``maximumNameBytes``).
    static func creationSQL(for schema: StoreSchema, server: String) throws -> [String] {
        var statements = [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT BIGINT PRIMARY KEY, Z_NAME TEXT, Z_SUPER BIGINT, Z_MAX BIGINT)",
            "CREATE TABLE Z_METADATA (Z_VERSION BIGINT PRIMARY KEY, Z_UUID TEXT, Z_PLIST BYTEA)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BYTEA)",
        ]
        var tooLong: [String] = []
        func checked(_ name: String) -> String {
            if name.utf8.count > maximumNameBytes { tooLong.append(name) }
            return name
        }
        for table in schema.tables {
            let columns = table.columns.map { "\(checked($0.name)) \(columnDefinition(forSQLiteType: $0.sqlType))" }
            statements.append("CREATE TABLE \(checked(table.name)) (\(columns.joined(separator: ", ")))")
        }
        for join in schema.joinTables {
            let columns = join.columns.map { "\(checked($0)) BIGINT" }.joined(separator: ", ")
            statements.append("CREATE TABLE \(checked(join.name)) (\(columns), PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn)))")
        }
        for index in schema.indexes {
            let unique = index.unique ? "UNIQUE " : ""
            // The only clause is `Z_ENT IN (…)` with entity numbers the schema made.
            let whereClause = index.whereClause.map { " WHERE \($0)" } ?? ""
            statements.append("CREATE \(unique)INDEX \(checked(index.name)) ON \(index.table) (\(index.columns.joined(separator: ", ")))\(whereClause)")
        }
        if !tooLong.isEmpty {
            throw StoreError.incompatibleModel(
                path: server,
                differences: tooLong.map { "the name \($0) is longer than PostgreSQL's \(maximumNameBytes) bytes" })
        }
        return statements
    }
}
