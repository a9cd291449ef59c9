import Foundation

/// Reads or prunes a store's persistent history (Core Data's `NSPersistentHistoryChangeRequest`).
///
/// The store must be opened with ``StoreOptions/persistentHistoryTracking`` for saves to be recorded.
///
/// ```swift
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// request.predicate = try QueryPredicate(format: "author != %@", "importer")
/// let result = try context.execute(request) as! PersistentHistoryResult
/// for transaction in result.transactions { context.mergeChanges(fromContextDidSave: transaction.contextDidSave) }
/// ```
public final class PersistentHistoryChangeRequest: PersistentStoreRequest, @unchecked Sendable {
    // @unchecked Sendable: configured first, then executed, as every request.

    /// Which transactions the request covers.
    public enum Scope: Sendable, Hashable {
        /// After a token (every transaction when nil).
        case afterToken(PersistentHistoryToken?)
        /// Committed after a date.
        case afterDate(Date)
        /// Exactly these transactions, by number.
        case transactions(Set<Int64>)
    }

    /// What the request does with them.
    public enum Operation: Sendable, Hashable {
        /// Reads the transactions in the scope.
        case fetch
        /// Deletes the transactions *before* the scope's point (and their changes).
        case delete
    }

    /// What a fetch returns (`NSPersistentHistoryResultType`).
    public enum ResultType: Sendable, Hashable {
        /// The transactions with their changes.
        case transactionsAndChanges
        /// The transactions without their changes.
        case transactionsOnly
        /// The changes of every transaction, in one list (``PersistentHistoryResult/changes``).
        case changesOnly
        /// Only the number of transactions.
        case count
        /// The transactions' numbers (``PersistentHistoryResult/transactionNumbers``).
        case transactionIDs
        /// Only whether it ran (and the count).
        case statusOnly
    }

    /// The stores the request applies to (empty: every store of the coordinator).
    public var affectedStores: [PersistentStore] = []
    /// Which transactions the request covers.
    public let scope: Scope
    /// Whether the request reads or deletes history.
    public let operation: Operation
    /// What a fetch returns.
    public var resultType: ResultType = .transactionsAndChanges
    /// Keeps only the transactions it matches (keys of ``PersistentHistoryTransaction``: `author`,
    /// `contextName`, `timestamp`…), evaluated in memory on what the store returns.
    public var predicate: QueryPredicate?
    /// Keeps only the changes it matches (keys of ``PersistentHistoryChange``: `changeType`, `entityName`…).
    public var changePredicate: QueryPredicate?
    /// At most this many transactions (0: no limit), oldest first.
    public var fetchLimit = 0

    init(scope: Scope, operation: Operation) {
        self.scope = scope
        self.operation = operation
    }

    /// The transactions after `token` (every one when nil).
    public static func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(scope: .afterToken(token), operation: .fetch)
    }

    /// The transactions committed after `date`.
    public static func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(scope: .afterDate(date), operation: .fetch)
    }

    /// The transactions after `transaction` (every one when nil).
    public static func fetchHistory(after transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        fetchHistory(after: transaction?.token)
    }

    /// Exactly these transactions, by number.
    public static func fetchHistory(withTransactionNumbers numbers: Set<Int64>) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(scope: .transactions(numbers), operation: .fetch)
    }

    /// Deletes the transactions up to and including `token`'s, but none a registered history reader has not
    /// seen (``PersistentHistoryResult/heldBackByReaders`` names the readers that kept some).
    public static func deleteHistory(before token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(scope: .afterToken(token), operation: .delete)
    }

    /// Deletes the transactions committed before `date`, but none a registered history reader has not seen.
    public static func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(scope: .afterDate(date), operation: .delete)
    }

    /// Deletes `transaction` and every earlier one, but none a registered history reader has not seen.
    public static func deleteHistory(before transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        deleteHistory(before: transaction?.token)
    }
}

/// What a ``PersistentHistoryChangeRequest`` returns (`NSPersistentHistoryResult`).
public final class PersistentHistoryResult: PersistentStoreResult, @unchecked Sendable {
    // @unchecked Sendable: immutable.

    /// What the request asked for.
    public let resultType: PersistentHistoryChangeRequest.ResultType
    /// The transactions, oldest first (with their changes for `.transactionsAndChanges`).
    public let transactions: [PersistentHistoryTransaction]
    /// The changes of every transaction, for `.changesOnly`.
    public let changes: [PersistentHistoryChange]
    /// Transactions fetched, or deleted.
    public let count: Int
    /// The numbers of the transactions, for `.transactionIDs`.
    public let transactionNumbers: [Int64]
    /// For a delete: the registered history readers (by name) that kept transactions the request asked to
    /// delete, because they had not seen them yet; empty when the request deleted all it asked for.
    /// See ``PersistentStoreCoordinator/registerPersistentHistoryReader(named:seenThrough:)``.
    public let heldBackByReaders: [String]

    init(resultType: PersistentHistoryChangeRequest.ResultType, transactions: [PersistentHistoryTransaction] = [],
         changes: [PersistentHistoryChange] = [], count: Int, transactionNumbers: [Int64] = [],
         heldBackByReaders: [String] = []) {
        self.resultType = resultType
        self.transactions = transactions
        self.changes = changes
        self.count = count
        self.transactionNumbers = transactionNumbers
        self.heldBackByReaders = heldBackByReaders
    }
}
