import Foundation
import GRDB
import Testing

/// `ocd watch` keeps printing when the history's transaction numbers go backwards (history cleared by
/// another program, then a VACUUM) instead of waiting for numbers past the ones it saw.
@Suite("Demo: ocd watch (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoWatchTests {
    typealias Library = DemoImportTests.Library

    /// Starts `ocd watch` and returns once it says it is watching.
    static func startWatching(_ library: Library, count: Int) throws -> ChildProcess {
        let watch = try ChildProcess.start(library.binary.path, ["watch", library.store, "--model", library.model,
                                                                 "--plain", "--count", "\(count)"], captureErrors: true)
        let errors = try #require(watch.errorOutput)
        var said = ""
        while !said.contains("Watching") {
            let chunk = errors.availableData
            if chunk.isEmpty { break }
            said += String(decoding: chunk, as: UTF8.self)
        }
        return watch
    }

    @Test func transactionNumbersGoingBackwardsDoNotSilenceIt() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        for number in 0..<3 { try library.importWithHistory(["{\"title\":\"Book \(number)\",\"isbn\":\"123456789\(number)\"}"]) }
        let watch = try Self.startWatching(library, count: 2)
        let queue = try DatabaseQueue(path: library.store)
        try queue.write { db in
            let first = try Int64.fetchOne(db, sql: "SELECT MIN(Z_PK) FROM ATRANSACTION") ?? 1
            try db.execute(sql: "DELETE FROM ACHANGE WHERE ZTRANSACTIONID > ?", arguments: [first])
            try db.execute(sql: "DELETE FROM ATRANSACTION WHERE Z_PK > ?", arguments: [first])
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = (SELECT Z_ENT FROM ATRANSACTION)", arguments: [first])
        }
        try queue.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
        try queue.close()
        try library.importWithHistory(["{\"title\":\"After\",\"isbn\":\"1234567899\"}"])
        let status = try watch.wait(seconds: 60)
        let lines = watch.readAllOutput().split(separator: "\n")
        #expect(status == 0, "\(lines)")
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.last?.hasSuffix("1 inserted, 0 updated, 0 deleted") == true, "\(lines)")
    }
}
