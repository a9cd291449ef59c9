/// Which chunk of a ``RowList`` holds each row handle.
///
/// Handles are mostly primary keys, which SQLite hands out densely from 1: those live in an array indexed
/// by the handle (4 bytes a key, against some 40 for a dictionary entry at the sizes controllers reach).
/// Handles the array does not cover — unsaved objects' negative handles, keys far beyond the others —
/// go to a dictionary.
struct HandleIndex {
    /// For handle `h` in `1..<dense.count`: the chunk's id + 1, or 0 when the handle is not held.
    private var dense: [UInt32] = []
    private var sparse: [Int64: UInt32] = [:]
    /// How many handles are held.
    private(set) var count = 0

    init() {}

    /// Room for handles up to `largest` in the array when they are dense enough (at most about two
    /// possible keys per held one).
    init(largest: Int64, count: Int) {
        if largest > 0, largest <= Self.denseLimit(for: count) { dense = Array(repeating: 0, count: Int(largest) + 1) }
    }

    /// The largest handle the array may grow to cover, for `count` held handles.
    private static func denseLimit(for count: Int) -> Int64 { Int64(count) * 2 + 1_024 }

    subscript(handle: Int64) -> UInt32? {
        if handle > 0, handle < Int64(dense.count) {
            let stored = dense[Int(handle)]
            if stored != 0 { return stored - 1 }
            if sparse.isEmpty { return nil }
        }
        return sparse[handle]
    }

    /// Records (or moves) a handle to a chunk.
    mutating func set(_ handle: Int64, chunk: UInt32) {
        if handle > 0, handle >= Int64(dense.count), handle <= Self.denseLimit(for: count + 1), !dense.isEmpty || count == 0 {
            // A new key just past the others (a save's next primary key): grow the array to cover it.
            let newCount = max(Int(handle) + 1, dense.count + dense.count / 2)
            dense.append(contentsOf: repeatElement(0, count: newCount - dense.count))
        }
        if handle > 0, handle < Int64(dense.count) {
            if dense[Int(handle)] == 0 {
                // The dictionary is almost always empty: skip hashing then.
                if sparse.isEmpty || sparse.removeValue(forKey: handle) == nil { count += 1 }
            }
            dense[Int(handle)] = chunk + 1
        } else if sparse.updateValue(chunk, forKey: handle) == nil {
            count += 1
        }
    }

    /// Forgets a handle; returns the chunk that held it.
    @discardableResult
    mutating func remove(_ handle: Int64) -> UInt32? {
        if handle > 0, handle < Int64(dense.count), dense[Int(handle)] != 0 {
            let chunk = dense[Int(handle)] - 1
            dense[Int(handle)] = 0
            count -= 1
            return chunk
        }
        guard !sparse.isEmpty, let chunk = sparse.removeValue(forKey: handle) else { return nil }
        count -= 1
        return chunk
    }
}
