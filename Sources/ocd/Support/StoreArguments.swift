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

    /// Turns the SQL log on if asked; call before opening a store.
    func configureLogging() {
        if sqlDebug { SQLLog.enable(visible: true) }
    }
}
