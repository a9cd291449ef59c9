#if DEBUG
/// What tests (and debug builds after each batch read) check about a batched result's slots; not built in release.
extension BatchedObjects {
    /// What breaks the result's invariants in `batches` (all by default), in words: empty when it is sound.
    ///
    /// - A batch marked read is marked written.
    /// - Every slot of a batch never written is nil (its slots are initialized without releasing anything).
    /// - An object in a slot is the object of the ID at that position.
    func invariantViolations(batches: Range<Int>? = nil) -> [String] {
        var problems: [String] = []
        let all = 0..<((count + batchSize - 1) / batchSize)
        for batch in (batches ?? all).clamped(to: all) {
            let isRead = loadedBatches[batch >> 6] & (1 << UInt64(batch & 63)) != 0
            let isWritten = writtenBatches[batch >> 6] & (1 << UInt64(batch & 63)) != 0
            if isRead && !isWritten { problems.append("batch \(batch) is read but not marked written") }
            for index in batch * batchSize..<min((batch + 1) * batchSize, count) {
                guard let object = objects[index] else { continue }
                if !isWritten { problems.append("slot \(index) holds an object in batch \(batch), never written") }
                if object.objectID != id(at: index) { problems.append("slot \(index) holds \(object.objectID), not \(id(at: index))") }
            }
        }
        return problems
    }

    /// Puts another position's object in slot `index`: only for tests that show broken slots are reported.
    func breakSlotForTesting(_ index: Int, with object: ManagedObject) {
        objects[index] = object
    }
}
#endif
