import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// The `ocd` row of docs/RELIABILITY.md's hostile-input table: a store whose rows another program filled
    /// with hostile values (text with control characters, escape sequences, line and paragraph separators,
    /// NUL, invalid UTF-8 as blobs, bidirectional overrides; dates at ±∞, ±1e300, past year 9999, as text or a
    /// blob; the same in history transactions and reader names), printed by every command that prints a
    /// store's values: `fetch` (lines and JSON), `inspect`, `history` (lines and JSON) and `history --readers`.
    /// Each run is classified: accepted (exit 0, nothing on either stream a terminal would act on, each JSON
    /// line parses), refused (a message and a failing exit status, the same check on both streams), wrong
    /// (anything else; a run ended by a signal is wrong too). `OCD_HOSTILE_INPUTS` sets the number of runs
    /// (default 40, five commands per filling); `OCD_HOSTILE_TABLE=path` appends the table row there.
    @Suite("Reliability: ocd's output under hostile stores (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
    struct OcdOutputCensusTests {
        typealias Library = DemoImportTests.Library

        static let texts = ["\u{1B}[2J\u{1B}[31mred", "line\nforged=1", "carriage\rreturn", "nul\u{0}inside", "delete\u{7F}",
                            "c1\u{9B}31m", "\u{202E}reversed", "e\u{301}", "tab\there", "para\u{2028}graph", "\"}{\"x\":1",
                            "back\\slash", "%@ %s %n", "", "plain", String(repeating: "long ", count: 400)]
        /// SQL spellings of the dates (seconds since 2001): 9e999 is SQLite's +∞; NaN cannot be stored (it
        /// becomes NULL), so it travels inside an archive below.
        static let dates = ["9e999", "-9e999", "1e300", "-1e300", "0", "-978307200", "252424000000", "1e-300", "NULL",
                            "'not a date'", "x'00FF'", "-0.0"]

        static func pick<T>(_ values: [T], _ random: inout SeededGenerator) -> T { values[Int.random(in: 0..<values.count, using: &random)] }

        /// One of the texts, a mix of two, or invalid UTF-8 stored as a blob: the value as an SQL argument.
        static func text(_ random: inout SeededGenerator) -> DatabaseValue {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return Data([0xFF, 0xFE, 0x41, 0xC0, 0x80]).databaseValue
            case 1: return (pick(texts, &random) + pick(texts, &random)).databaseValue
            default: return pick(texts, &random).databaseValue
            }
        }

        /// Fills the store's books, history and readers with hostile values.
        static func tamper(_ library: Library, _ random: inout SeededGenerator) throws {
            let queue = try DatabaseQueue(path: library.store)
            defer { try? queue.close() }
            try queue.write { db in
                let keys = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM ZITEM")
                for key in keys {
                    // The ISBN is unique: the row's key and a # go before the hostile text.
                    var isbn = text(&random)
                    switch isbn.storage {
                    case .string(let text): isbn = ("\(key)#" + text).databaseValue
                    case .blob(let bytes): isbn = (Data("\(key)#".utf8) + bytes).databaseValue
                    default: break
                    }
                    try db.execute(sql: "UPDATE ZITEM SET ZTITLE = ?, ZISBN = ?, ZCREATEDAT = \(pick(dates, &random)) WHERE Z_PK = ?",
                                   arguments: [text(&random), isbn, key])
                }
                let cover = try KeyedArchiveWriter.archive([Date(timeIntervalSinceReferenceDate: .nan), pick(texts, &random),
                                                            ["when": Date(timeIntervalSinceReferenceDate: -.infinity)]] as [Any])
                try db.execute(sql: "UPDATE ZITEM SET ZCOVER = ? WHERE Z_PK = ?", arguments: [cover, keys.first])
                try db.execute(sql: "UPDATE ATRANSACTION SET ZAUTHOR = ?, ZCONTEXTNAME = ?, ZTIMESTAMP = \(pick(dates, &random))",
                               arguments: [text(&random), text(&random)])
                // The readers' table keeps its NOT NULL columns (their removal is DemoEdgeDateTests' case).
                try db.execute(sql: "UPDATE Z_OCDHISTORYREADER SET Z_NAME = ?, Z_TIMESTAMP = \(pick(dates.filter { $0 != "NULL" }, &random))",
                               arguments: [pick(texts, &random)])
            }
        }

        /// Why a run's output is wrong, nil when it is right.
        static func problem(_ output: OcdBinary.Output, json: Bool) -> String? {
            if output.status >= 128 { return "ended by signal \(output.status - 128)" }
            for (name, text) in [("stdout", output.stdout), ("stderr", output.stderr)] {
                let controls = text.unicodeScalars.filter {
                    ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value)
                        || $0 == "\u{2028}" || $0 == "\u{2029}" || (0x202A...0x202E).contains($0.value)
                }
                if !controls.isEmpty { return "\(name) holds \(controls.map { String(format: "U+%04X", $0.value) })" }
            }
            if output.status != 0 {
                return output.stderr.isEmpty ? "failed with status \(output.status) and no message" : nil
            }
            if json {
                for line in output.stdout.split(separator: "\n")
                where (try? JSONSerialization.jsonObject(with: Data(line.utf8))) == nil {
                    return "a JSON line does not parse: \(line.prefix(200).debugDescription)"
                }
            }
            return nil
        }

        @Test func everyCommandPrintsAHostileStoreSafely() throws {
            let runs = ProcessInfo.processInfo.environment["OCD_HOSTILE_INPUTS"].flatMap(Int.init).map { max(5, $0 / 10) } ?? 40
            let library = try Library()
            defer { try? FileManager.default.removeItem(at: library.folder) }
            try library.importWithHistory((1...4).map { "{\"title\":\"Book \($0)\",\"isbn\":\"123456789\($0)\",\"createdAt\":\"2011-01-01\"}" },
                                          registering: "indexer")
            let commands: [(arguments: [String], json: Bool)] = [
                (["fetch", library.store, "--model", library.model, "--entity", "Book", "--keys", "title,isbn,createdAt,cover"], false),
                (["fetch", library.store, "--model", library.model, "--entity", "Book", "--keys", "title,isbn,createdAt,cover", "--json"], true),
                (["inspect", library.store, "--model", library.model, "--sample", "4"], false),
                (["history", library.store, "--model", library.model], false),
                (["history", library.store, "--model", library.model, "--json"], true),
                (["history", library.store, "--model", library.model, "--readers"], false),
            ]
            var random = SeededGenerator(seed: 9)
            var accepted = 0, refused = 0, slowest = 0.0
            var wrong: [String] = []
            var tried = 0
            while tried < runs {
                try Self.tamper(library, &random)
                for command in commands where tried < runs {
                    tried += 1
                    let started = Date()
                    let output = try library.run(command.arguments)
                    slowest = max(slowest, Date().timeIntervalSince(started))
                    if let problem = Self.problem(output, json: command.json) {
                        wrong.append("\(command.arguments[0]) \(command.arguments.dropFirst(3).joined(separator: " ")): \(problem)")
                    } else if output.status == 0 {
                        accepted += 1
                    } else {
                        refused += 1
                    }
                }
            }
            let row = "| `ocd` output of hostile store values | \(tried) | \(accepted) | \(refused) | 0 | 0 | \(wrong.count) | \(String(format: "%.1f", slowest * 1000)) ms |"
            print(row)
            if let path = ProcessInfo.processInfo.environment["OCD_HOSTILE_TABLE"], let handle = FileHandle(forWritingAtPath: path) {
                handle.seekToEndOfFile()
                handle.write(Data((row + "\n").utf8))
                try handle.close()
            }
            #expect(accepted > 0, "every run was refused")
            #expect(wrong.isEmpty, "\(wrong.count) wrong, e.g. \(wrong.prefix(3))")
        }
    }
}
