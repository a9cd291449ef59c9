import Foundation

extension PersistentHistoryChangeRequest: ContextExecutable {
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let store = try coordinator.primaryBackend()
        try checkTokens(of: store)
        return try store.execute(self)
    }
}

extension ManagedObjectContext {
    /// Brings transactions read from the persistent history into this context, as a save made elsewhere:
    /// updated objects are refreshed, deleted ones become deleted, inserted ones can be fetched; results
    /// controllers on the context report the changes as for a local save.
    ///
    /// ```swift
    /// let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: lastToken)) as! PersistentHistoryResult
    /// context.mergeChanges(fromHistory: result.transactions)
    /// lastToken = result.transactions.last?.token ?? lastToken
    /// ```
    public func mergeChanges(fromHistory transactions: [PersistentHistoryTransaction]) {
        let saved = transactions.contextDidSave
        guard !saved.isEmpty else { return }
        persistentStoreCoordinator?.rowCache.remove(saved.updatedObjectIDs.union(saved.deletedObjectIDs))
        mergeChanges(fromContextDidSave: saved)
    }
}

extension PersistentStoreCoordinator {
    /// The token of the newest transaction in the stores' history (Core Data's
    /// `currentPersistentHistoryToken(fromStores:)`); nil without a store.
    /// - Throws: `StoreError` when the store cannot be read (a PostgreSQL store's errors for a server).
    public func currentPersistentHistoryToken() throws -> PersistentHistoryToken? {
        // Any kind of store: `persistentStores` lists only the SQLite ones.
        guard let store = storeBackends.first else { return nil }
        return try store.currentHistoryToken()
    }
}
