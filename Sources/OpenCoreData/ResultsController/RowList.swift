import GRDB

/// The controller's rows in order: for each row a compact handle (its `Z_PK`, or minus the temporary
/// key of an unsaved object), its entity number, and its sort-key values as stored (`DatabaseValue`).
///
/// Rows live in chunks of at most ``RowList/chunkCapacity``; a ``CountedIndex`` over the chunk sizes
/// turns a chunk and an offset into a global position and back in O(log n), and a ``HandleIndex`` from
/// handle to chunk finds a row without its keys. Inserting or removing a row costs O(log n) plus a
/// move inside one chunk (a constant); splitting or dropping a chunk costs O(n / chunkCapacity), which
/// happens at most once every `chunkCapacity / 2` inserts into that chunk.
///
/// Memory per row: 8 (handle) + 4 (entity; nothing while every row has the same one) + 24 per sort key
/// (more for long strings) + 4 in the handle index (dense primary keys): some 36–65 bytes for one or two
/// sort keys.
struct RowList {
    static let chunkCapacity = 256

    final class Chunk {
        /// Stable while the chunk lives (its position in `chunks` is not).
        let id: UInt32
        init(id: UInt32) { self.id = id }
        var handles: [Int64] = []
        /// Empty while the list has one entity for every row (`soleEntity`).
        var entities: [Int32] = []
        /// `keyCount` values per row, row after row.
        var keys: [DatabaseValue] = []
        /// The chunk's position in `chunks`.
        var index = 0
        var count: Int { handles.count }
    }

    let keyCount: Int
    private(set) var chunks: [Chunk] = []
    private var sizes = CountedIndex()
    private var handleIndex = HandleIndex()
    /// The entity of every row, when they all share one (then chunks keep no entity numbers).
    private var soleEntity: Int32?
    /// Chunks by id; nil for chunks dropped since.
    private var chunkByID: [Chunk?] = []

    init(keyCount: Int) { self.keyCount = keyCount }

    var count: Int { handleIndex.count }

    func contains(_ handle: Int64) -> Bool { handleIndex[handle] != nil }

    private func entity(_ chunk: Chunk, _ offset: Int) -> Int32 { soleEntity ?? chunk.entities[offset] }

    private func chunk(holding handle: Int64) -> Chunk? {
        handleIndex[handle].flatMap { chunkByID[Int($0)] }
    }

    private mutating func makeChunk() -> Chunk {
        let chunk = Chunk(id: UInt32(chunkByID.count))
        chunkByID.append(chunk)
        return chunk
    }

    // MARK: Building

    /// Builds the list from rows already in order.
    init(keyCount: Int, sortedHandles handles: [Int64], entities: [Int32], keys: [DatabaseValue]) {
        self.keyCount = keyCount
        if let first = entities.first, !entities.contains(where: { $0 != first }) { soleEntity = first }
        let fill = Self.chunkCapacity * 3 / 4
        var start = 0
        while start < handles.count {
            let end = min(start + fill, handles.count)
            let chunk = makeChunk()
            chunk.handles = Array(handles[start..<end])
            if soleEntity == nil { chunk.entities = Array(entities[start..<end]) }
            chunk.keys = Array(keys[(start * keyCount)..<(end * keyCount)])
            chunk.index = chunks.count
            chunks.append(chunk)
            start = end
        }
        handleIndex = HandleIndex(largest: handles.max() ?? 0, count: handles.count)
        for chunk in chunks {
            for handle in chunk.handles { handleIndex.set(handle, chunk: chunk.id) }
        }
        sizes.reset(chunks.map(\.count))
    }

    // MARK: Reading

    /// The row at a global position.
    func row(at position: Int) -> (handle: Int64, entity: Int32, keys: ArraySlice<DatabaseValue>)? {
        guard let (slot, offset) = sizes.locate(position) else { return nil }
        let chunk = chunks[slot]
        return (chunk.handles[offset], entity(chunk, offset),
                chunk.keys[(offset * keyCount)..<((offset + 1) * keyCount)])
    }

    /// The handles of a range of positions, in order.
    func handles(in range: Range<Int>) -> [(handle: Int64, entity: Int32)] {
        var result: [(handle: Int64, entity: Int32)] = []
        result.reserveCapacity(range.count)
        guard !range.isEmpty, var (slot, offset) = sizes.locate(range.lowerBound) else { return result }
        while result.count < range.count && slot < chunks.count {
            let chunk = chunks[slot]
            while offset < chunk.count && result.count < range.count {
                result.append((chunk.handles[offset], entity(chunk, offset)))
                offset += 1
            }
            slot += 1
            offset = 0
        }
        return result
    }

    /// Every row in order.
    func forEach(_ body: (Int64, Int32, ArraySlice<DatabaseValue>) throws -> Void) rethrows {
        for chunk in chunks {
            for offset in 0..<chunk.count {
                try body(chunk.handles[offset], entity(chunk, offset),
                         chunk.keys[(offset * keyCount)..<((offset + 1) * keyCount)])
            }
        }
    }

    /// The global position, entity and keys of a row, found by its handle.
    func find(_ handle: Int64) -> (position: Int, entity: Int32, keys: [DatabaseValue])? {
        guard let chunk = chunk(holding: handle), let offset = chunk.handles.firstIndex(of: handle) else { return nil }
        return (sizes.prefix(chunk.index) + offset, entity(chunk, offset),
                Array(chunk.keys[(offset * keyCount)..<((offset + 1) * keyCount)]))
    }

    /// The first position whose row orders at or after `(keys, handle)` under `less` (binary search over
    /// chunks, then inside one chunk).
    func insertionPosition(keys: [DatabaseValue], handle: Int64,
                           less: (ArraySlice<DatabaseValue>, Int64, ArraySlice<DatabaseValue>, Int64) throws -> Bool)
        throws -> (slot: Int, offset: Int) {
        let probe = keys[...]
        // Only a sole chunk can be empty (emptied chunks are dropped while others remain).
        guard count > 0, !chunks.isEmpty else { return (0, 0) }
        // First chunk whose last row is not before the probe.
        var low = 0, high = chunks.count
        while low < high {
            let mid = (low + high) / 2
            let chunk = chunks[mid]
            let last = chunk.count - 1
            if try less(chunk.keys[(last * keyCount)..<((last + 1) * keyCount)], chunk.handles[last], probe, handle) {
                low = mid + 1
            } else {
                high = mid
            }
        }
        if low == chunks.count {
            guard let lastChunk = chunks.last else { return (0, 0) }
            return (lastChunk.index, lastChunk.count)
        }
        let chunk = chunks[low]
        var lo = 0, hi = chunk.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if try less(chunk.keys[(mid * keyCount)..<((mid + 1) * keyCount)], chunk.handles[mid], probe, handle) {
                lo = mid + 1
            } else {
                hi = mid
            }
        }
        return (low, lo)
    }

    // MARK: Changing

    /// Inserts a row in order; returns its global position.
    @discardableResult
    mutating func insert(handle: Int64, entity: Int32, keys: [DatabaseValue],
                         less: (ArraySlice<DatabaseValue>, Int64, ArraySlice<DatabaseValue>, Int64) throws -> Bool)
        throws -> Int {
        if chunks.isEmpty {
            let chunk = makeChunk()
            chunks = [chunk]
            sizes.reset([0])
        }
        if let sole = soleEntity, entity != sole {
            // A row of another entity: from now on every chunk keeps its rows' entities.
            for chunk in chunks { chunk.entities = Array(repeating: sole, count: chunk.count) }
            soleEntity = nil
        }
        var (slot, offset) = try insertionPosition(keys: keys, handle: handle, less: less)
        var chunk = chunks[slot]
        if chunk.count >= Self.chunkCapacity {
            split(slot)
            if offset > chunk.count {
                offset -= chunk.count
                slot += 1
                chunk = chunks[slot]
            }
        }
        chunk.handles.insert(handle, at: offset)
        if soleEntity == nil { chunk.entities.insert(entity, at: offset) }
        chunk.keys.insert(contentsOf: keys, at: offset * keyCount)
        handleIndex.set(handle, chunk: chunk.id)
        sizes.add(1, at: slot)
        return sizes.prefix(slot) + offset
    }

    /// Removes a row by handle; returns whether it was there.
    @discardableResult
    mutating func remove(_ handle: Int64) -> Bool {
        guard let id = handleIndex.remove(handle), let chunk = chunkByID[Int(id)],
              let offset = chunk.handles.firstIndex(of: handle) else { return false }
        chunk.handles.remove(at: offset)
        if soleEntity == nil { chunk.entities.remove(at: offset) }
        chunk.keys.removeSubrange((offset * keyCount)..<((offset + 1) * keyCount))
        sizes.add(-1, at: chunk.index)
        if chunk.count == 0 && chunks.count > 1 {
            chunkByID[Int(chunk.id)] = nil
            chunks.remove(at: chunk.index)
            renumber(from: chunk.index)
            sizes.reset(chunks.map(\.count))
        }
        return true
    }

    private mutating func split(_ slot: Int) {
        let chunk = chunks[slot]
        let half = chunk.count / 2
        let tail = makeChunk()
        tail.handles = Array(chunk.handles[half...])
        if soleEntity == nil { tail.entities = Array(chunk.entities[half...]) }
        tail.keys = Array(chunk.keys[(half * keyCount)...])
        chunk.handles.removeSubrange(half...)
        if soleEntity == nil { chunk.entities.removeSubrange(half...) }
        chunk.keys.removeSubrange((half * keyCount)...)
        for handle in tail.handles { handleIndex.set(handle, chunk: tail.id) }
        chunks.insert(tail, at: slot + 1)
        renumber(from: slot + 1)
        sizes.reset(chunks.map(\.count))
    }

    private func renumber(from start: Int) {
        for index in start..<chunks.count { chunks[index].index = index }
    }
}
