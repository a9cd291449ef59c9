import Foundation

/// A process (or part of one) that reads a store's persistent history and asked pruning to keep what it
/// has not read yet: see ``PersistentStoreCoordinator/registerPersistentHistoryReader(named:seenThrough:)``.
public struct PersistentHistoryReaderRegistration: Sendable, Hashable {
    /// The name it registered under (one registration per name and store).
    public let name: String
    /// The last transaction it said it has seen; pruning keeps every later one.
    public let seenThrough: PersistentHistoryToken
    /// When it last registered or moved its mark.
    public let updated: Date
}

extension PersistentStoreCoordinator {
    /// Registers a history reader under `name`, or moves its mark: it has seen every transaction through
    /// `token` (none when nil), and from now on pruning (``PersistentHistoryChangeRequest``'s `deleteHistory(before:)`) keeps every later transaction, whichever process prunes, until the reader moves its mark again or
    /// unregisters. The registration is in the store file, so it outlives the process: a reader that stops
    /// for good must unregister, or history grows.
    ///
    /// ```swift
    /// let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: lastToken)) as! PersistentHistoryResult
    /// context.mergeChanges(fromHistory: result.transactions)
    /// lastToken = result.transactions.last?.token ?? lastToken
    /// try coordinator.registerPersistentHistoryReader(named: "indexer", seenThrough: lastToken)
    /// ```
    ///
    /// - Throws: ``PersistentHistoryError/trackingOff(path:)`` when the store is not opened with history
    ///   tracking; ``PersistentHistoryError/invalidReaderName(_:)`` for an empty or over-long name;
    ///   ``PersistentHistoryError/tokenOfAnotherStore(token:store:)`` for a token of another store;
    ///   ``ObjectGraphError/noPersistentStore`` without a store; `StoreError` when the store cannot be
    ///   written (read-only, busy).
    public func registerPersistentHistoryReader(named name: String, seenThrough token: PersistentHistoryToken?) throws {
        let store = try storeKeepingHistoryReaders()
        guard !name.isEmpty, name.count <= HistoryReaderRegistry.maximumNameLength else {
            throw PersistentHistoryError.invalidReaderName(name)
        }
        if let token, token.storeIdentifier != store.identifier {
            throw PersistentHistoryError.tokenOfAnotherStore(token: token.description, store: store.displayPath)
        }
        try store.registerHistoryReader(name, seen: token?.transactionNumber ?? 0)
    }

    /// Removes the history reader `name`: pruning no longer keeps transactions for it. Returns whether it was
    /// registered.
    /// - Throws: ``PersistentHistoryError/trackingOff(path:)`` when the store is not opened with history
    ///   tracking; ``ObjectGraphError/noPersistentStore`` without a store; `StoreError` when the store cannot
    ///   be written.
    @discardableResult
    public func unregisterPersistentHistoryReader(named name: String) throws -> Bool {
        let store = try storeKeepingHistoryReaders()
        return try store.unregisterHistoryReader(name)
    }

    /// The registered history readers of the store, by name (empty when none ever registered).
    /// - Throws: ``ObjectGraphError/noPersistentStore`` without a store; `StoreError` when it cannot be read.
    public func persistentHistoryReaders() throws -> [PersistentHistoryReaderRegistration] {
        let store: any StoreBackend = try primaryBackend()
        return try store.historyReaders().map {
            PersistentHistoryReaderRegistration(
                name: $0.name, seenThrough: PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: $0.seen),
                updated: Date(timeIntervalSinceReferenceDate: $0.timestamp))
        }
    }

    /// The store, if it records history (the only stores whose registry may be written).
    private func storeKeepingHistoryReaders() throws -> any StoreBackend {
        let store: any StoreBackend = try primaryBackend()
        guard store.options.persistentHistoryTracking else { throw PersistentHistoryError.trackingOff(path: store.displayPath) }
        return store
    }
}
