import Foundation

/// An object's unsaved values, by property slot: an array indexed by slot rather than a dictionary, so
/// setting and reading a value costs an index, not a hash. Storage is allocated on the first change.
///
/// The array is empty exactly when no slot holds a change (it is dropped when the last change is removed), so
/// emptiness needs no separate count: the struct is one reference, which keeps a fetched object within a
/// smaller allocation class.
struct SlotChanges: Sequence, ExpressibleByDictionaryLiteral {
    private var values: ContiguousArray<SlotValue?> = []

    init() {}

    init(dictionaryLiteral elements: (Int, SlotValue)...) {
        for (slot, value) in elements { self[slot] = value }
    }

    var isEmpty: Bool { values.isEmpty }

    /// How many slots hold a change.
    var count: Int {
        values.withUnsafeBufferPointer { buffer in
            var count = 0
            for slot in buffer.indices { if case .some = buffer[slot] { count += 1 } }
            return count
        }
    }

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
            values[slot] = newValue
            guard !adding else { return }
            let anyLeft = values.withUnsafeBufferPointer { buffer in
                buffer.indices.contains { slot in if case .some = buffer[slot] { return true } else { return false } }
            }
            if !anyLeft { values = [] }
        }
    }

    /// Whether both hold changes in exactly the same slots (whatever the values).
    func hasSameSlots(as other: SlotChanges) -> Bool {
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
