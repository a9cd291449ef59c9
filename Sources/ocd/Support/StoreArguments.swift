import ArgumentParser
import Foundation

/// `--store`, `--sql-debug` and `--history`, shared by the `todo` and `banks` subcommands.
struct StoreArguments: ParsableArguments {
    @Option(name: .long, help: "The store file (default: a file in the current folder).")
    var store: String?

    @Flag(name: .long, help: "Print every SQL statement and fetch timing to stderr.")
    var sqlDebug = false

    @Flag(name: .long, help: "Record persistent history in the store (kept on for stores that already have it).")
    var history = false

    /// Refuses a PostgreSQL URL: the `todo` and `banks` commands run contexts, which that store has not yet.
    func validate() throws {
        if let store, case .postgreSQL = try StoreLocation(store) {
            throw ValidationError("--store: the todo and banks commands run contexts, which do not run on a PostgreSQL store yet")
        }
    }

    /// The store path, or `defaultName` in the current folder.
    func path(defaultName: String) -> String {
        store ?? FileManager.default.currentDirectoryPath + "/" + defaultName
    }

    /// Turns the SQL log on if asked; call before opening a store.
    func configureLogging() {
        if sqlDebug { SQLLog.enable(visible: true) }
    }
}
