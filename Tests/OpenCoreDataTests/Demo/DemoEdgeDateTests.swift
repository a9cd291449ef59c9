import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import ocd
import OpenCoreDataImport

/// Dates no calendar holds — ±∞, NaN, ±1e300 seconds — in an attribute column, inside a transformable
/// archive, in a history transaction's timestamp and in a history reader's row: every ocd command that
/// prints them prints them faithfully (the seconds, with their sign) and none traps.
@Suite("Demo: dates at the edges (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoEdgeDateTests {
    typealias Library = DemoImportTests.Library

    @Test func datesInsideTheCalendarPrintAsISO8601() throws {
        let cases: [(Double, String)] = [
            (0, "2001-01-01T00:00:00Z"),
            (340_882_200.5, "2011-10-21T09:30:00.5Z"),
            (-978_307_200, "1970-01-01T00:00:00Z"),
            (-0.000001, "2000-12-31T23:59:59.999999Z"),
            (951_782_400 - 978_307_200, "2000-02-29T00:00:00Z"),
            (253_402_300_799 - 978_307_200, "9999-12-31T23:59:59Z"),
            (253_402_300_800 - 978_307_200, "+10000-01-01T00:00:00Z"),
            (-62_135_596_800 - 978_307_200, "0001-01-01T00:00:00Z"),
            (-62_135_596_801 - 978_307_200, "0000-12-31T23:59:59Z"),
            (-62_198_755_200 - 978_307_200, "-0001-01-01T00:00:00Z"),
        ]
        for (seconds, text) in cases {
            #expect(DateText.iso8601(Date(timeIntervalSinceReferenceDate: seconds)) == text, "\(seconds)")
            // What ocd prints, ocd import reads back as the same instant (before 1582 too: ISO 8601's
            // calendar is the proleptic Gregorian one, not Foundation's Julian-before-1582).
            if text.first != "+", text.first != "-", !text.hasPrefix("0000") {
                let back = try #require(ImportDate.parse(text)?.timeIntervalSinceReferenceDate, "\(text)")
                #expect(abs(back - seconds) < 0.5e-6, "\(text): \(back)")
            }
        }
        // Foundation's formatter agrees wherever it has the Gregorian calendar.
        let formatter = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let seconds = Double(Int64.random(in: -12_000_000_000...250_000_000_000, using: &generator))
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            #expect(DateText.iso8601(date) == formatter.string(from: date), "\(seconds)")
        }
    }

    @Test func datesOutsideEveryCalendarPrintAsTheirSeconds() {
        let cases: [(Double, String)] = [
            (.infinity, "inf s since 2001-01-01T00:00:00Z"),
            (-.infinity, "-inf s since 2001-01-01T00:00:00Z"),
            (.nan, "nan s since 2001-01-01T00:00:00Z"),
            (1e300, "1e+300 s since 2001-01-01T00:00:00Z"),
            (-1e300, "-1e+300 s since 2001-01-01T00:00:00Z"),
        ]
        for (seconds, text) in cases {
            #expect(DateText.iso8601(Date(timeIntervalSinceReferenceDate: seconds)) == text, "\(seconds)")
        }
    }

    @Test func everyCommandPrintsEdgeDatesWithoutATrap() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        try library.importWithHistory((1...4).map { "{\"title\":\"Book \($0)\",\"isbn\":\"123456789\($0)\",\"createdAt\":\"2011-01-01\"}" },
                                      registering: "indexer")
        let cover = try KeyedArchiveWriter.archive([Date(timeIntervalSinceReferenceDate: .nan),
                                                    ["when": Date(timeIntervalSinceReferenceDate: .infinity)]] as [Any])
        let queue = try DatabaseQueue(path: library.store)
        try queue.write { db in
            // 9e999 is SQLite's spelling of +∞.
            try db.execute(sql: "UPDATE ZITEM SET ZCREATEDAT = 9e999 WHERE ZTITLE = 'Book 1'")
            try db.execute(sql: "UPDATE ZITEM SET ZCREATEDAT = -9e999 WHERE ZTITLE = 'Book 2'")
            try db.execute(sql: "UPDATE ZITEM SET ZCREATEDAT = 1e300, ZCOVER = ? WHERE ZTITLE = 'Book 3'", arguments: [cover])
            try db.execute(sql: "UPDATE ZITEM SET ZCREATEDAT = -1e300 WHERE ZTITLE = 'Book 4'")
            try db.execute(sql: "UPDATE ATRANSACTION SET ZTIMESTAMP = -9e999")
            try db.execute(sql: "UPDATE Z_OCDHISTORYREADER SET Z_TIMESTAMP = 9e999")
        }
        try queue.close()
        let fetch = ["fetch", library.store, "--model", library.model, "--entity", "Book", "--sort", "title",
                     "--keys", "title,createdAt,cover"]
        let plain = try library.run(fetch)
        #expect(plain.status == 0, "\(plain.stderr)")
        for expected in ["createdAt=inf s since 2001-01-01T00:00:00Z", "createdAt=-inf s since 2001-01-01T00:00:00Z",
                         "createdAt=1e+300 s since 2001-01-01T00:00:00Z", "createdAt=-1e+300 s since 2001-01-01T00:00:00Z",
                         "cover=[nan s since 2001-01-01T00:00:00Z, [when: inf s since 2001-01-01T00:00:00Z]]"] {
            #expect(plain.stdout.contains(expected), "missing «\(expected)» in \(plain.stdout)")
        }
        let json = try library.run(fetch + ["--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains(
            "\"cover\":[\"nan s since 2001-01-01T00:00:00Z\",{\"when\":\"inf s since 2001-01-01T00:00:00Z\"}]"), "\(json.stdout)")
        let inspect = try library.run(["inspect", library.store, "--model", library.model, "--sample", "4"])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.contains("createdAt=-1e+300 s since 2001-01-01T00:00:00Z"), "\(inspect.stdout)")
        let history = try library.run(["history", library.store, "--model", library.model])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout.contains(" -inf s since 2001-01-01T00:00:00Z by "), "\(history.stdout)")
        let historyJSON = try library.run(["history", library.store, "--model", library.model, "--json"])
        #expect(historyJSON.status == 0 && historyJSON.stdout.contains("\"timestamp\":\"-inf s since"), "\(historyJSON.stderr)")
        let readers = try library.run(["history", library.store, "--model", library.model, "--readers"])
        #expect(readers.status == 0, "\(readers.stderr)")
        #expect(readers.stdout.contains("updated inf s since 2001-01-01T00:00:00Z"), "\(readers.stdout)")
    }

    @Test func watchPrintsATransactionAtInfinity() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        try library.importWithHistory(["{\"title\":\"Book\",\"isbn\":\"1234567890\"}"])
        let watch = try DemoWatchTests.startWatching(library, count: 1)
        try library.alter("""
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZTIMESTAMP)
            SELECT MAX(Z_PK) + 1, Z_ENT, 1, 9e999 FROM ATRANSACTION
            """)
        let status = try watch.wait(seconds: 60)
        let output = watch.readAllOutput()
        #expect(status == 0, "\(output)")
        #expect(output.contains(" inf s since 2001-01-01T00:00:00Z by "), "\(output)")
    }

    @Test func readerRowsOfTheWrongTypeAreRefusedNamingTheRow() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        try library.importWithHistory(["{\"title\":\"Book\",\"isbn\":\"1234567890\"}"], registering: "indexer")
        // Another program may also re-declare the table without its NOT NULL.
        for (tampering, named) in [("INSERT INTO Z_OCDHISTORYREADER VALUES ('indexer', 'lots', 0)", "Z_SEEN"),
                                   ("INSERT INTO Z_OCDHISTORYREADER VALUES ('indexer', 1, 'now')", "Z_TIMESTAMP"),
                                   ("INSERT INTO Z_OCDHISTORYREADER VALUES (NULL, 1, 0)", "Z_NAME")] {
            let queue = try DatabaseQueue(path: library.store)
            try queue.write { db in
                try db.execute(sql: "DROP TABLE Z_OCDHISTORYREADER")
                try db.execute(sql: "CREATE TABLE Z_OCDHISTORYREADER (Z_NAME VARCHAR, Z_SEEN INTEGER, Z_TIMESTAMP FLOAT)")
                try db.execute(sql: tampering)
            }
            try queue.close()
            let readers = try library.run(["history", library.store, "--model", library.model, "--readers"])
            #expect(readers.status == 1, "\(tampering): \(readers.stdout) \(readers.stderr)")
            #expect(readers.stderr.contains("Z_OCDHISTORYREADER row 1: \(named)"), "\(tampering): \(readers.stderr)")
        }
    }
}
