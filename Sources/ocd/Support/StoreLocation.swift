import Foundation
import OpenCoreDataPostgreSQL

/// Where a command's store is: a file, or a PostgreSQL database named by a `postgresql://` (or
/// `postgres://`) URL. The one place ocd tells the two apart; each command that takes a store argument
/// reads it through here.
enum StoreLocation {
    /// A store file (SQLite).
    case file(String)
    /// A PostgreSQL store (docs/POSTGRESQL.md), its URL read.
    case postgreSQL(PostgreSQLStoreConfiguration)

    /// Reads a store argument.
    ///
    /// - Throws: ``OCDError`` for a PostgreSQL URL the store cannot use, naming what is wrong (without the
    ///   password).
    init(_ argument: String) throws {
        let lowered = argument.lowercased()
        guard lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") else {
            self = .file(argument)
            return
        }
        do {
            self = .postgreSQL(try PostgreSQLStoreConfiguration(url: argument))
        } catch {
            throw OCDError("\(error)")
        }
    }

    /// The error for a command that cannot work on a PostgreSQL store yet, saying why.
    static func notOnPostgreSQL(_ command: String, because reason: String) -> OCDError {
        OCDError("ocd \(command) does not take a PostgreSQL store yet: \(reason)")
    }
}
