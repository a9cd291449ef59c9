import GRDB

/// The SQL functions and collations every connection needs, so SQL and in-memory evaluation agree.
enum StoreFunctions {
    static func register(in db: Database) {
        QuerySQLFunctions.register(in: db)
    }
}
