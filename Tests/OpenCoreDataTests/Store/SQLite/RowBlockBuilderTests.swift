import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Reads that fill several blocks return every row exactly as SQLite stores it, in order, and rows of one
/// block share it.
@Suite struct RowBlockBuilderTests {
    /// A table of mixed column types with `count` rows, some values NULL.
    private func database(rows count: Int) throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a INTEGER PRIMARY KEY, b INTEGER, c TEXT, d REAL, e BLOB, f TEXT)")
            for index in 0..<count {
                try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", arguments: [
                    index + 1, index % 5 == 0 ? nil : index * 3, "row \(index) ✓", Double(index) / 7,
                    index % 4 == 0 ? nil : Data([UInt8(index % 256), 1, 2]), index % 2 == 0 ? "" : nil,
                ])
            }
        }
        return queue
    }

    private func read(_ queue: DatabaseQueue, expectedRows: Int? = nil) throws -> (rows: [RowValues], raw: [[StoreValue]]) {
        try queue.read { db in
            var rows: [RowValues] = []
            try db.fetchRowValues(sql: "SELECT * FROM t ORDER BY a", arguments: [], columnCount: 6,
                                  expectedRows: expectedRows) { rows.append($0) }
            let raw = try Row.fetchAll(db, sql: "SELECT * FROM t ORDER BY a").map { Array($0.databaseValues.map(StoreValue.init)) }
            return (rows, raw)
        }
    }

    @Test(arguments: [0, 1, 15, 17])
    func aReadOfSeveralBlocksReturnsEveryRowAsStored(extra: Int) throws {
        let rowsPerBlock = RowBlockBuilder(width: 6).rowsPerBlock
        let count = rowsPerBlock * 2 + extra
        let (rows, raw) = try read(try database(rows: count))
        #expect(rows.count == count)
        #expect(rows.map { Array($0) } == raw)
        #expect(rows[0].sharesBlock(with: rows[rowsPerBlock - 1]))
        #expect(!rows[0].sharesBlock(with: rows[rowsPerBlock]))
        if extra > 0 { #expect(!rows[rowsPerBlock].sharesBlock(with: rows[count - 1])) }
    }

    @Test func aReadOfKnownSizeIsOneBlock() throws {
        let (rows, raw) = try read(try database(rows: 20), expectedRows: 20)
        #expect(rows.map { Array($0) } == raw)
        #expect(rows.allSatisfy { $0.sharesBlock(with: rows[0]) })
    }

    /// A wrong guess of the row count only costs room: too few grows the block (moving the decoded rows),
    /// too many leaves it part empty.
    @Test(arguments: [(expected: 3, actual: 50), (expected: 20, actual: 5), (expected: 1, actual: 1)])
    func aWrongExpectedRowCountStillReadsEveryRow(counts: (expected: Int, actual: Int)) throws {
        let (rows, raw) = try read(try database(rows: counts.actual), expectedRows: counts.expected)
        #expect(rows.count == counts.actual)
        #expect(rows.map { Array($0) } == raw)
        #expect(rows.allSatisfy { $0.sharesBlock(with: rows[0]) })
    }

    @Test func storeReadsByKeyShareABlockPerBatch() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let items = try (0..<30).map { index in
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(index)", forKey: "name")
            return item
        }
        try context.save()
        let rows = try stack.coordinator.primaryStore().rows(for: items.prefix(20).map(\.objectID))
        #expect(rows.count == 20)
        #expect(rows.allSatisfy { $0.sharesBlock(with: rows[0]) })
    }
}
