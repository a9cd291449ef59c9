import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Change rows written many to a statement: the rows in `ACHANGE` are exactly those the history layout
/// describes for each change (key, type, entity, object, transaction, changed columns), whatever the number of
/// changes against the chunk sizes, and a save of hundreds of objects reads back as the same changes.
@Suite struct HistoryChangeRowsTests {
    /// One `ACHANGE` row as the reference writes it, straight from the change it describes.
    struct ExpectedRow: Equatable {
        var key: Int64
        var entityNumber: Int64
        var version: Int64
        var type: Int64
        var entity: Int64
        var primaryKey: Int64
        var transaction: Int64
        var columns: Data?
    }

    /// Counts around every chunk boundary, and random ones.
    static let counts = [0, 1, 2, 9, 10, 11, 99, 100, 101, 109, 110, 111, 199, 200, 201, 345, 1000]

    @Test(arguments: counts)
    func rowsMatchOneRowPerChange(count: Int) throws {
        var random = SeededGenerator(seed: UInt64(count) &* 7919 &+ 1)
        let directory = TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.file("History.sqlite").path)
        let model = try PersistentHistoryTests.model()
        let changes = (0..<count).map { _ -> HistoryEntry.Change in
            let isUpdate = Bool.random(using: &random)
            let slots = isUpdate ? (0..<Int.random(in: 0...3, using: &random)).map { _ in Int.random(in: 0..<20, using: &random) } : []
            return HistoryEntry.Change(type: isUpdate ? .update : .insert, entityNumber: Int.random(in: 1...2, using: &random),
                                       primaryKey: Int64.random(in: 1...1_000_000, using: &random),
                                       updatedSlots: Array(Set(slots)).sorted())
        }
        let firstKey = Int64.random(in: 1...10_000, using: &random)
        let transaction = Int64.random(in: 1...10_000, using: &random)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
            try HistoryTables.create(in: db, model: model)
            try HistoryChangeRows.write(changes, firstKey: firstKey, transaction: transaction, in: db)
        }

        // The reference: each change's row by the layout's rules, with the bitmap built bit by bit here.
        let expected = changes.enumerated().map { offset, change -> ExpectedRow in
            var columns: Data?
            if change.type == .update, let highest = change.updatedSlots.max() {
                var bytes = [UInt8](repeating: 0, count: highest / 8 + 1)
                for slot in change.updatedSlots { bytes[slot / 8] |= UInt8(1) << UInt8(slot % 8) }
                columns = Data(bytes)
            }
            return ExpectedRow(key: firstKey + Int64(offset), entityNumber: 16001, version: 1, type: Int64(change.type.rawValue),
                               entity: Int64(change.entityNumber), primaryKey: change.primaryKey, transaction: transaction,
                               columns: columns)
        }
        let written = try queue.read { db in
            try Row.fetchAll(db, sql: """
                SELECT Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS FROM ACHANGE ORDER BY Z_PK
                """).map { row in
                ExpectedRow(key: row[0], entityNumber: row[1], version: row[2], type: row[3], entity: row[4],
                            primaryKey: row[5], transaction: row[6], columns: row[7])
            }
        }
        #expect(written == expected)
    }

    @Test func aSaveOfHundredsOfObjectsReadsBackAsItsChanges() throws {
        let stack = try PersistentHistoryTests.Stack()
        let coordinator = try stack.coordinator()
        let context = stack.context(coordinator, author: "importer")
        var notes: [ManagedObject] = []
        for index in 1...234 {
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue("Note \(index)", forKey: "title")
            notes.append(note)
        }
        try context.save()
        for note in notes.prefix(117) { try note.setValue("Edited", forKey: "body") }
        for note in notes.suffix(3) { context.delete(note) }
        try context.save()

        let transactions = try PersistentHistoryTests.history(context).transactions
        #expect(transactions.count == 2)
        let inserts = try #require(transactions.first?.changes)
        #expect(inserts.map(\.changeType) == Array(repeating: .insert, count: 234))
        #expect(inserts.map(\.changedObjectID) == notes.map(\.objectID))
        let firstID = try #require(inserts.first?.changeID)
        #expect(inserts.map(\.changeID) == Array(firstID..<firstID + 234))
        let second = try #require(transactions.last?.changes)
        let updates = second.filter { $0.changeType == .update }
        #expect(Set(updates.map(\.changedObjectID)) == Set(notes.prefix(117).map(\.objectID)))
        #expect(updates.allSatisfy { $0.updatedProperties == ["body"] })
        #expect(Set(second.filter { $0.changeType == .delete }.map(\.changedObjectID)) == Set(notes.suffix(3).map(\.objectID)))
        #expect(second.map(\.changeID) == Array(firstID + 234..<firstID + 234 + 120))
    }
}
