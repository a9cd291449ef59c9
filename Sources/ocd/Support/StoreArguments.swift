import ArgumentParser
import Foundation

/// `--store`, `--sql-debug` and `--history`, shared by the `todo` and `banks` subcommands.
struct StoreArguments: ParsableArguments {
    @Option(name: .long, help: "The store file (default: a file in the current folder); the banks commands also take a postgresql:// URL.")
    var store: String?

    @Flag(name: .long, help: "Print every SQL statement and fetch timing to stderr.")
    var sqlDebug = false

    @Flag(name: .long, help: "Record persistent history in the store (kept on for stores that already have it).")
    var history = false

    /// Reads a PostgreSQL URL's parameters before anything runs.
    func validate() throws {
        if let store { _ = try StoreLocation(store) }
    }

    /// The store: `--store` (a file or a PostgreSQL URL), or `defaultName` in the current folder.
    ///
    /// - Throws: ``OCDError`` for a PostgreSQL URL the store cannot use.
    func location(defaultName: String) throws -> StoreLocation {
        try StoreLocation(store ?? FileManager.default.currentDirectoryPath + "/" + defaultName)
    }

    /// The store file, `--store` or `defaultName` in the current folder, for commands that run on files only.
    ///
    /// - Throws: ``OCDError`` naming `command` when `--store` is a PostgreSQL URL.
    func path(defaultName: String, command: String) throws -> String {
        guard case .file(let path) = try location(defaultName: defaultName) else {
            throw StoreLocation.notOnPostgreSQL(command, because: "the todo commands open their store as a file; "
                + "use the banks commands or ocd fetch/import on a URL")
        }
        return path
    }

    /// Turns the SQL log on if asked; call before opening a store.
    func configureLogging() {
        if sqlDebug { SQLLog.enable(visible: true) }
    }
}
