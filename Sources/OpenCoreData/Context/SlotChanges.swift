import Foundation

/// An object's unsaved values, by property slot: an array indexed by slot rather than a dictionary, so
/// setting and reading a value costs an index, not a hash. Storage is allocated on the first change.
struct SlotChanges: Sequence, ExpressibleByDictionaryLiteral {
    private var values: ContiguousArray<SlotValue?> = []
    /// How many slots hold a change.
    private(set) var count = 0

    init() {}

    init(dictionaryLiteral elements: (Int, SlotValue)...) {
        for (slot, value) in elements { self[slot] = value }
    }

    var isEmpty: Bool { count == 0 }

    subscript(slot: Int) -> SlotValue? {
        get { slot < values.count ? values[slot] : nil }
        set {
            // Presence is tested by pattern, and the old value in place: comparing with nil would copy the
            // value (an enum with reference payloads) just to test it.
            let adding: Bool
            if case .none = newValue { adding = false } else { adding = true }
            if slot >= values.count {
                guard adding else { return }
                values.append(contentsOf: repeatElement(nil, count: slot - values.count + 1))
            }
            let had = values.withUnsafeBufferPointer { buffer in
                if case .none = buffer[slot] { return false } else { return true }
            }
            values[slot] = newValue
            count += (adding ? 1 : 0) - (had ? 1 : 0)
        }
    }

    /// Whether both hold changes in exactly the same slots (whatever the values).
    func hasSameSlots(as other: SlotChanges) -> Bool {
        guard count == other.count else { return false }
        for slot in 0..<Swift.max(values.count, other.values.count) where (self[slot] == nil) != (other[slot] == nil) {
            return false
        }
        return true
    }

    /// The slots that hold a change, in slot order.
    var keys: [Int] { values.indices.filter { values[$0] != nil } }

    @discardableResult
    mutating func removeValue(forKey slot: Int) -> SlotValue? {
        let old = self[slot]
        self[slot] = nil
        return old
    }

    /// Adds `other`'s changes; where both hold a slot, `combine` picks.
    mutating func merge(_ other: SlotChanges, uniquingKeysWith combine: (SlotValue, SlotValue) -> SlotValue) {
        for (slot, value) in other {
            if let current = self[slot] { self[slot] = combine(current, value) } else { self[slot] = value }
        }
    }

    struct Iterator: IteratorProtocol {
        fileprivate let values: ContiguousArray<SlotValue?>
        fileprivate var index = 0
        mutating func next() -> (key: Int, value: SlotValue)? {
            while index < values.count {
                let slot = index
                index += 1
                if let value = values[slot] { return (slot, value) }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(values: values) }
}
