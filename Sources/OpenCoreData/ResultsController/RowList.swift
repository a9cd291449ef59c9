
/// The controller's rows in order: for each row a compact handle (its `Z_PK`, or minus the temporary
/// key of an unsaved object), its entity number, and its sort-key values as stored (in ``KeyColumn``s).
///
/// Rows live in chunks of at most ``RowList/chunkCapacity``; a ``CountedIndex`` over the chunk sizes
/// turns a chunk and an offset into a global position and back in O(log n), and a ``HandleIndex`` from
/// handle to chunk finds a row without its keys. Inserting or removing a row costs O(log n) plus a
/// move inside one chunk (a constant); splitting or dropping a chunk costs O(n / chunkCapacity), which
/// happens at most once every `chunkCapacity / 2` inserts into that chunk.
///
/// Memory per row: 8 (handle) + 4 (entity; nothing while every row has the same one) + per sort key 8
/// (numbers and dates), 24 (other values; more for long strings) or nothing (a key every row of the chunk
/// shares, as a section key does inside a section) + 4 in the handle index (dense primary keys): some
/// 20–28 bytes for one or two numeric sort keys.
struct RowList {
    static let chunkCapacity = 256

    final class Chunk {
        /// Stable while the chunk lives (its position in `chunks` is not).
        let id: UInt32
        init(id: UInt32) { self.id = id }
        // Unchecked: read on every access to a row, and only ever touched by the list's own methods, whose
        // accesses never overlap (reads are instantaneous, writes call nothing; the list lives on its
        // controller's context's queue). Saves two `swift_beginAccess` calls, about 76 instructions each, per
        // `object(at:)` (`frc-batch-on-access`).
        @exclusivity(unchecked) var handles: [Int64] = []
        /// Empty while the list has one entity for every row (`soleEntity`).
        @exclusivity(unchecked) var entities: [Int32] = []
        /// One column per sort key.
        var keys: [KeyColumn] = []
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
    /// Builds the list from rows already in order; `entities` is empty when every row is of `soleEntity`.
    init(keyCount: Int, sortedHandles handles: [Int64], entities: [Int32], soleEntity: Int32? = nil, keys: [KeyColumn]) {
        self.keyCount = keyCount
        if let soleEntity {
            self.soleEntity = soleEntity
        } else if let first = entities.first, !entities.contains(where: { $0 != first }) {
            self.soleEntity = first
        }
        let fill = Self.chunkCapacity * 3 / 4
        var start = 0
        while start < handles.count {
            let end = min(start + fill, handles.count)
            let chunk = makeChunk()
            chunk.handles = Array(handles[start..<end])
            if soleEntity == nil { chunk.entities = Array(entities[start..<end]) }
            chunk.keys = keys.map { $0.compacted(start..<end) }
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
    func row(at position: Int) -> (handle: Int64, entity: Int32)? {
        guard let (slot, offset) = sizes.locate(position) else { return nil }
        let chunk = chunks[slot]
        return (chunk.handles[offset], entity(chunk, offset))
    }

    /// Calls `body` with the handle and entity of each row in a range of positions, in order; positions
    /// outside the list are skipped.
    func forEachRow(in range: Range<Int>, _ body: (_ handle: Int64, _ entity: Int32) throws -> Void) rethrows {
        let range = range.clamped(to: 0..<count)
        guard !range.isEmpty, var (slot, offset) = sizes.locate(range.lowerBound) else { return }
        var remaining = range.count
        while remaining > 0 && slot < chunks.count {
            let chunk = chunks[slot]
            let end = min(chunk.count, offset + remaining)
            remaining -= end - offset
            while offset < end {
                try body(chunk.handles[offset], entity(chunk, offset))
                offset += 1
            }
            slot += 1
            offset = 0
        }
    }

    /// Every row in order.
    func forEach(_ body: (Int64, Int32, KeyRow) throws -> Void) rethrows {
        for chunk in chunks {
            let keys = chunk.keys
            for offset in 0..<chunk.count {
                try body(chunk.handles[offset], entity(chunk, offset), KeyRow(columns: keys, row: offset))
            }
        }
    }

    /// The global position, entity and keys of a row, found by its handle.
    func find(_ handle: Int64) -> (position: Int, entity: Int32, keys: [StoreValue])? {
        guard let chunk = chunk(holding: handle), let offset = chunk.handles.firstIndex(of: handle) else { return nil }
        return (sizes.prefix(chunk.index) + offset, entity(chunk, offset), chunk.keys.map { $0[offset] })
    }

    /// The first position whose row orders at or after `(keys, handle)` under `less` (binary search over
    /// chunks, then inside one chunk).
    func insertionPosition(keys probe: [StoreValue], handle: Int64,
                           less: (KeyRow, Int64, [StoreValue], Int64) throws -> Bool)
        throws -> (slot: Int, offset: Int) {
        // Only a sole chunk can be empty (emptied chunks are dropped while others remain).
        guard count > 0, !chunks.isEmpty else { return (0, 0) }
        // First chunk whose last row is not before the probe.
        var low = 0, high = chunks.count
        while low < high {
            let mid = (low + high) / 2
            let chunk = chunks[mid]
            let last = chunk.count - 1
            if try less(KeyRow(columns: chunk.keys, row: last), chunk.handles[last], probe, handle) {
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
        let columns = chunk.keys
        var lo = 0, hi = chunk.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if try less(KeyRow(columns: columns, row: mid), chunk.handles[mid], probe, handle) {
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
    mutating func insert(handle: Int64, entity: Int32, keys: [StoreValue],
                         less: (KeyRow, Int64, [StoreValue], Int64) throws -> Bool)
        throws -> Int {
        if chunks.isEmpty {
            let chunk = makeChunk()
            chunk.keys = Array(repeating: .empty, count: keyCount)
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
        for column in 0..<keyCount { chunk.keys[column].insert(keys[column], at: offset) }
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
        for column in 0..<keyCount { chunk.keys[column].remove(at: offset) }
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
        tail.keys = (0..<keyCount).map { chunk.keys[$0].split(at: half) }
        chunk.handles.removeSubrange(half...)
        if soleEntity == nil { chunk.entities.removeSubrange(half...) }
        for handle in tail.handles { handleIndex.set(handle, chunk: tail.id) }
        chunks.insert(tail, at: slot + 1)
        renumber(from: slot + 1)
        sizes.reset(chunks.map(\.count))
    }

    private func renumber(from start: Int) {
        for index in start..<chunks.count { chunks[index].index = index }
    }
}
