import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// `SlotChanges` against a plain dictionary: random writes and removals, then every read agrees.
@Suite struct SlotChangesTests {
    static func describe(_ value: SlotValue?) -> String {
        switch value {
        case .attribute(let value)?: return "attribute \(value)"
        case .toOne(let id)?: return "toOne \(String(describing: id))"
        case .toMany(let ids)?: return "toMany \(ids.count)"
        case nil: return "nil"
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomWritesAgreeWithADictionary(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var changes = SlotChanges()
        var reference: [Int: SlotValue] = [:]
        for _ in 0..<400 {
            let slot = Int.random(in: 0..<20, using: &generator)
            if Bool.random(using: &generator) {
                let value = SlotValue.attribute(Int64.random(in: 0..<5, using: &generator).storeValue)
                changes[slot] = value
                reference[slot] = value
            } else {
                changes[slot] = nil
                reference[slot] = nil
            }
            #expect(changes.count == reference.count)
            #expect(changes.isEmpty == reference.isEmpty)
        }
        #expect(changes.keys == reference.keys.sorted())
        for slot in 0..<25 { #expect(Self.describe(changes[slot]) == Self.describe(reference[slot]), "slot \(slot)") }
        #expect(Array(changes.map(\.key)) == reference.keys.sorted())

        // Same slots, other values: the same shape; one slot more or less: not.
        var sameSlots = SlotChanges()
        for slot in reference.keys { sameSlots[slot] = .attribute(.null) }
        #expect(changes.hasSameSlots(as: sameSlots) && sameSlots.hasSameSlots(as: changes))
        var oneMore = sameSlots
        let free = (0..<30).first { reference[$0] == nil }!
        oneMore[free] = .toOne(nil)
        #expect(!changes.hasSameSlots(as: oneMore))
        if let some = reference.keys.first {
            var moved = sameSlots
            moved[some] = nil
            moved[free] = .attribute(.null)
            #expect(!changes.hasSameSlots(as: moved), "same count, different slots")
        }
    }
}
