import Foundation
import Testing

/// The store boundary (docs/ARCHITECTURE.md, "The store boundary"): nothing above `Store/` opens a GRDB
/// connection, steps an SQLite statement or writes a query's SQL. Checked on the library's source text, so
/// a new crossing fails here with the file and what it uses, instead of being found when a second store
/// has to be threaded through it.
@Suite struct StoreBoundaryTests {
    /// The folders above the store layer.
    static let upperFolders = ["Context", "Requests", "ResultsController", "Container"]

    /// What only `Store/` may use: GRDB's connections, rows and arguments, SQLite's C API, SQL text.
    static let storeOnly = [
        "store.read {", "store.write {", ".read { db", ".write { db", "(db)", ": Database)", "Database,",
        "DatabaseQueue", "DatabasePool", "Row.fetch", "StatementArguments", "SQLiteStatement", "sqlite3_",
        "PRAGMA", "\"SELECT ", "(SELECT ", "\"UPDATE ", "\"DELETE ", "\"INSERT ",
    ]

    /// Crossings the boundary's documentation lists as not yet pulled back, by file and text.
    static let knownCrossings: [String: Set<String>] = [
        // A batch update's derived-attribute statements.
        "Context/BatchDerivations.swift": ["(SELECT ", "\"UPDATE "],
    ]

    /// The library's folders and modules that must not import GRDB nor call SQLite's C API: everything but
    /// `Store/SQLite` (the SQLite store and its session), relative to `Sources/`. Values cross as the
    /// library's own `StoreValue`; the engine in `Store/Engine` reaches SQLite only through `SQLSession`.
    static let grdbFreeFolders = [
        "OpenCoreData/Container", "OpenCoreData/Context", "OpenCoreData/Migration", "OpenCoreData/Model",
        "OpenCoreData/QueryLanguage", "OpenCoreData/Requests", "OpenCoreData/ResultsController",
        "OpenCoreData/Support", "OpenCoreData/Store", "OpenCoreDataPostgreSQL", "OpenCoreDataSync",
        "OpenCoreDataSyncServer", "OpenCoreDataImport", "ocd",
    ]

    /// The one folder inside ``grdbFreeFolders`` that holds GRDB: the SQLite store.
    static let sqliteStoreFolder = "OpenCoreData/Store/SQLite/"

    static var sourceRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/OpenCoreData")
    }

    /// Every Swift file above the store layer, by path relative to `Sources/OpenCoreData`, with its text.
    static func upperSources() throws -> [(path: String, text: String)] {
        var files: [(String, String)] = []
        for folder in upperFolders {
            let base = sourceRoot.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker where url.pathExtension == "swift" {
                let relative = folder + url.path.dropFirst(base.path.count)
                files.append((relative, try String(contentsOf: url, encoding: .utf8)))
            }
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test func theSourcesAreFound() throws {
        let files = try Self.upperSources()
        #expect(files.count > 40, "found \(files.count) files under \(Self.sourceRoot.path)")
        #expect(files.contains { $0.path == "Context/FetchPlan.swift" })
    }

    @Test func nothingAboveTheStoreRunsSQL() throws {
        var crossings: [String] = []
        for (path, text) in try Self.upperSources() {
            let code = text.split(separator: "\n").filter {
                !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
            }.joined(separator: "\n")
            for token in Self.storeOnly where code.contains(token) && Self.knownCrossings[path]?.contains(token) != true {
                crossings.append("\(path): \(token)")
            }
        }
        #expect(crossings.isEmpty, "above Store/: \(crossings.joined(separator: "; "))")
    }

    @Test func nothingButTheSQLiteStoreUsesGRDBOrSQLitesAPI() throws {
        let sources = Self.sourceRoot.deletingLastPathComponent()
        var crossings: [String] = [], scanned = 0
        for folder in Self.grdbFreeFolders {
            let base = sources.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else {
                Issue.record("no folder \(base.path)")
                continue
            }
            for case let url as URL in walker where url.pathExtension == "swift" {
                let path = folder + url.path.dropFirst(base.path.count)
                if path.hasPrefix(Self.sqliteStoreFolder) { continue }
                scanned += 1
                let code = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").filter {
                    !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                }
                if code.contains(where: { $0.hasSuffix("import GRDB") || $0.hasSuffix("import GRDBSQLite") }) {
                    crossings.append("\(path) imports GRDB")
                }
                if code.contains(where: { $0.contains("sqlite3_") }) { crossings.append("\(path) calls sqlite3_") }
            }
        }
        #expect(scanned > 300, "scanned only \(scanned) files under \(sources.path)")
        #expect(crossings.isEmpty, "outside Store/SQLite: \(crossings.joined(separator: ", "))")
    }

    /// The check above sees a crossing where there is one: the SQLite store's own folder holds them.
    @Test func theSQLiteStoreFolderIsWhereGRDBIs() throws {
        let folder = Self.sourceRoot.appendingPathComponent("Store/SQLite")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        let importing = try files.filter { try String(contentsOf: $0, encoding: .utf8).contains("\nimport GRDB\n") }
        #expect(importing.count > 10, "\(importing.count) files of \(folder.path) import GRDB")
    }
}
