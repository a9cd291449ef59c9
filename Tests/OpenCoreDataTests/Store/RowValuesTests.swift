import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Rows that share a block behave as separate values: a write copies the row out first, unless the row is
/// alone in a block nobody else refers to, and a save writes exactly the edited row.
@Suite struct RowValuesTests {
    /// Two rows of three values in one block.
    private func twoRowsInOneBlock() -> (RowValues, RowValues) {
        let values = ContiguousArray([1, 2, 3, 4, 5, 6].map { Int64($0).storeValue })
        let block = RowBlock.make(values: values, width: 3)
        return (RowValues(block: block, start: 0), RowValues(block: block, start: 3))
    }

    @Test func rowsOfABlockReadTheirOwnValues() {
        let (first, second) = twoRowsInOneBlock()
        #expect(first.count == 3 && second.count == 3)
        #expect(Array(first.indices) == [0, 1, 2])
        #expect(first == [1.storeValue, 2.storeValue, 3.storeValue])
        #expect(Array(second) == [4.storeValue, 5.storeValue, 6.storeValue])
        #expect(second.primaryKey == 4 && second.entityNumber == 5 && second.version == 6)
        #expect(first.sharesBlock(with: second))
    }

    @Test func writingARowOfASharedBlockLeavesTheOtherRowsAlone() {
        let (first, second) = twoRowsInOneBlock()
        var edited = second
        edited[1] = "changed".storeValue
        #expect(edited == [4.storeValue, "changed".storeValue, 6.storeValue])
        #expect(second == [4.storeValue, 5.storeValue, 6.storeValue])
        #expect(first == [1.storeValue, 2.storeValue, 3.storeValue])
        #expect(!edited.sharesBlock(with: second))
        let editedIsUnique = edited.isUniquelyOwned()
        #expect(editedIsUnique)
    }

    @Test func theLastReferenceToAMultiRowBlockStillCopiesItsRowOut() {
        var (first, _) = twoRowsInOneBlock()
        // The other row is gone, but the block still holds its values: writing in place would keep them.
        first[0] = 9.storeValue
        #expect(first == [9.storeValue, 2.storeValue, 3.storeValue])
        let firstIsUnique = first.isUniquelyOwned()
        #expect(firstIsUnique)
    }

    /// Told by where the row's values live, not by asking for uniqueness from here: in a release build the
    /// test's own copies of `row` (the expectations take some) make such a check fail although the writes
    /// themselves find the block unique.
    @Test func aRowAloneInItsBlockIsWrittenInPlace() {
        var row = RowValues(repeating: .null, count: 4)
        let fresh = row.blockIdentity
        row[1] = 5.storeValue
        let firstWriteInPlace = row.blockIdentity == fresh
        let before = row
        row[2] = 7.storeValue
        // `before` still refers to the block, so this write copied; the next ones must not.
        let copiedOut = row.blockIdentity != fresh
        let copied = row.blockIdentity
        row[3] = 8.storeValue
        row[0] = 1.storeValue
        let laterWritesInPlace = row.blockIdentity == copied
        #expect(firstWriteInPlace)
        #expect(copiedOut)
        #expect(laterWritesInPlace)
        #expect(before == [.null, 5.storeValue, .null, .null])
        #expect(row == [1.storeValue, 5.storeValue, 7.storeValue, 8.storeValue])
    }

    @Test func aSaveAfterEditingAnObjectOfASharedBlockWritesThatRowOnly() throws {
        let stack = try TestStack(model: TestModels.todo())
        let writer = stack.context()
        for index in 0..<40 {
            try writer.insertNewObject(forEntityName: "Item").setValue("Item \(index)", forKey: "name")
        }
        try writer.save()

        let context = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        let items = try context.fetch(request)
        #expect(items.count == 40)
        let rows = items.map(\.row)
        let firstRow = try #require(rows[0])
        #expect(rows.allSatisfy { $0?.sharesBlock(with: firstRow) == true })

        let edited = items[5]
        let editedName = try #require(edited.value(forKey: "name") as? String)
        try edited.setValue("edited", forKey: "name")
        try context.save()
        #expect(edited.row?.sharesBlock(with: firstRow) == false)

        let store = try stack.coordinator.primaryStore()
        let stored: [Int64: String] = try store.read { db in
            var names: [Int64: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT Z_PK, ZNAME FROM ZITEM") { names[row[0]] = row[1] }
            return names
        }
        #expect(stored.count == 40)
        for item in items {
            let expected = item === edited ? "edited" : try #require(item.value(forKey: "name") as? String)
            #expect(stored[item.objectID.primaryKey] == expected)
        }
        #expect(stored.values.contains(editedName) == false)
        // The rows that stayed in the block still read their own names.
        #expect(items[6].row?.sharesBlock(with: firstRow) == true)
    }

    /// Every kind of value reads back as written, through random writes of every kind over every kind, in
    /// rows that share a block and in rows alone in theirs; a reference array of values is the model.
    @Test(arguments: [UInt64(1), 2, 3])
    func cellsHoldEveryKindOfValueThroughRandomWrites(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let samples: [StoreValue] = [
            .null, 0.storeValue, Int64.min.storeValue, Int64.max.storeValue, (-1.5).storeValue,
            Double.infinity.storeValue, "".storeValue, "short".storeValue,
            String(repeating: "long text ✓ ", count: 20).storeValue, Data().storeValue,
            Data([0, 1, 2, 255]).storeValue,
        ]
        let width = 5
        var model = (0..<(width * 4)).map { _ in samples[Int(random.next() % UInt64(samples.count))] }
        let block = RowBlock.make(values: model, width: width)
        var rows = (0..<4).map { RowValues(block: block, start: $0 * width) }
        for _ in 0..<200 {
            let row = Int(random.next() % 4), column = Int(random.next() % UInt64(width))
            let value = samples[Int(random.next() % UInt64(samples.count))]
            rows[row][column] = value
            model[row * width + column] = value
            for index in rows.indices { #expect(Array(rows[index]) == Array(model[(index * width)..<((index + 1) * width)])) }
        }
        // Rows copied out of a block carry only their own values.
        let copied = rows.map { row in RowValues(block: RowBlock.make(values: Array(row), width: width), start: 0) }
        #expect(copied == rows)
    }

    /// A row written over and over (text, then a number, then text again) keeps a bounded list of text
    /// values: the ones no cell refers to are dropped.
    @Test func rewritingTextAndNumbersKeepsTheSideListBounded() {
        var row = RowValues(repeating: .null, count: 3)
        for round in 0..<1_000 {
            row[1] = "text \(round)".storeValue
            row[1] = Int64(round).storeValue
            row[2] = round % 3 == 0 ? Data([UInt8(round % 256)]).storeValue : .null
        }
        row[0] = "last".storeValue
        #expect(row == ["last".storeValue, 999.storeValue, Data([UInt8(999 % 256)]).storeValue])
        #expect(row.sideValueCount <= 2 * row.count, "the side list holds \(row.sideValueCount) values")
    }
}
