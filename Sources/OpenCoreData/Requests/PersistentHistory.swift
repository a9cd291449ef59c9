import Foundation

/// A point in a store's history: the transaction it names and every one before it (Core Data's
/// `NSPersistentHistoryToken`).
///
/// Tokens survive process restarts (they are `Codable`: keep the last one you processed and ask for the
/// history after it next time) and compare by their place in the store's history.
///
/// ```swift
/// let saved = try JSONEncoder().encode(token)
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: try JSONDecoder().decode(PersistentHistoryToken.self, from: saved))
/// ```
public struct PersistentHistoryToken: Sendable, Codable, Hashable, Comparable, CustomStringConvertible {
    /// The UUID of the store whose history this is.
    public let storeIdentifier: String
    /// The number of the last transaction the token covers (`ATRANSACTION.Z_PK`); 0 before the first.
    public let transactionNumber: Int64

    /// A token for a store's transaction.
    public init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    /// Orders tokens of one store by their transaction; tokens of different stores by store, so the order is
    /// total but means nothing across stores.
    public static func < (lhs: PersistentHistoryToken, rhs: PersistentHistoryToken) -> Bool {
        (lhs.storeIdentifier, lhs.transactionNumber) < (rhs.storeIdentifier, rhs.transactionNumber)
    }

    /// `store:transaction`, for logs and debugging.
    public var description: String { "\(storeIdentifier):\(transactionNumber)" }
}

/// What happened to an object in a transaction (`NSPersistentHistoryChangeType`; the numbers are the ones
/// Core Data stores in `ACHANGE.ZCHANGETYPE`).
public enum PersistentHistoryChangeType: Int, Sendable, Hashable, Codable {
    /// The object was inserted.
    case insert = 0
    /// Some of the object's properties changed.
    case update = 1
    /// The object was deleted.
    case delete = 2
}

/// One object's change in a transaction (`NSPersistentHistoryChange`).
public struct PersistentHistoryChange: Sendable, Hashable, KeyValueCoding {
    /// The change's number (`ACHANGE.Z_PK`).
    public let changeID: Int64
    /// The object that changed.
    public let changedObjectID: ManagedObjectID
    /// Whether the object was inserted, updated or deleted.
    public let changeType: PersistentHistoryChangeType
    /// For an update, the names of the properties that changed; nil for inserts and deletes.
    public let updatedProperties: Set<String>?
    /// For a delete, the values of the attributes marked `preservesValueInHistoryOnDeletion`, by name.
    public let tombstone: [String: TombstoneValue]?
    /// The number of the transaction the change belongs to.
    public let transactionNumber: Int64

    /// A preserved value; `Sendable` and comparable, unlike `Any`.
    public enum TombstoneValue: Sendable, Hashable {
        /// No value.
        case null
        /// A value SQLite holds as an integer (integer and Boolean attributes, among others).
        case integer(Int64)
        /// A value SQLite holds as a floating-point number (double and date attributes, among others).
        case real(Double)
        /// Text.
        case text(String)
        /// Bytes.
        case data(Data)

        /// The value as the attribute's Swift type would hold it for plain kinds (numbers, text, data);
        /// `nil` for `.null`.
        public var anyValue: Any? {
            switch self {
            case .null: return nil
            case .integer(let value): return value
            case .real(let value): return value
            case .text(let value): return value
            case .data(let value): return value
            }
        }
    }

    /// Keys for predicates on changes: `changeType` (its number), `entityName`, `changeID`,
    /// `transactionNumber`, `primaryKey`.
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` (entity `PersistentHistoryChange`) for any other
    ///   key.
    public func value(forKey key: String) throws -> Any? {
        switch key {
        case "changeType": return changeType.rawValue
        case "entityName": return changedObjectID.entity.name
        case "changeID": return changeID
        case "transactionNumber": return transactionNumber
        case "primaryKey": return changedObjectID.primaryKey
        default: throw ObjectGraphError.unknownKey(entity: "PersistentHistoryChange", key: key)
        }
    }
}

/// One save, batch request or other commit as the store's history recorded it
/// (`NSPersistentHistoryTransaction`).
public struct PersistentHistoryTransaction: Sendable, Hashable, KeyValueCoding {
    /// The transaction's number (`ATRANSACTION.Z_PK`): they count up, and never go back after pruning.
    public let transactionNumber: Int64
    /// When it committed.
    public let timestamp: Date
    /// The saving context's ``ManagedObjectContext/transactionAuthor``.
    public let author: String?
    /// The saving context's ``ManagedObjectContext/name``.
    public let contextName: String?
    /// The program that saved (its bundle identifier on Apple's systems, its name here).
    public let bundleID: String?
    /// The process that saved (its identifier).
    public let processID: String?
    /// The store the transaction is in.
    public let storeIdentifier: String
    /// Its changes; nil when the request asked for transactions only.
    public let changes: [PersistentHistoryChange]?

    /// The token that covers this transaction and every earlier one.
    public var token: PersistentHistoryToken {
        PersistentHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: transactionNumber)
    }

    /// The transaction as a save report, to merge into contexts with
    /// ``ManagedObjectContext/mergeChanges(fromContextDidSave:)`` (Core Data's `objectIDNotification()`).
    public var contextDidSave: ContextDidSave {
        var saved = ContextDidSave()
        for change in changes ?? [] {
            switch change.changeType {
            case .insert: saved.insertedObjectIDs.insert(change.changedObjectID)
            case .update:
                saved.updatedObjectIDs.insert(change.changedObjectID)
                saved.changedKeys[change.changedObjectID, default: []].formUnion(change.updatedProperties ?? [])
            case .delete: saved.deletedObjectIDs.insert(change.changedObjectID)
            }
        }
        // An object inserted and updated in the transactions merged is new to the reader: report it once.
        saved.updatedObjectIDs.subtract(saved.insertedObjectIDs)
        saved.updatedObjectIDs.subtract(saved.deletedObjectIDs)
        saved.insertedObjectIDs.subtract(saved.deletedObjectIDs)
        return saved
    }

    /// The same transaction with only the changes `isIncluded` keeps.
    public func keepingChanges(where isIncluded: (PersistentHistoryChange) throws -> Bool) rethrows -> PersistentHistoryTransaction {
        PersistentHistoryTransaction(
            transactionNumber: transactionNumber, timestamp: timestamp, author: author, contextName: contextName,
            bundleID: bundleID, processID: processID, storeIdentifier: storeIdentifier,
            changes: try changes.map { try $0.filter(isIncluded) })
    }

    /// Keys for predicates on transactions: `author`, `contextName`, `bundleID`, `processID`, `timestamp`,
    /// `transactionNumber`.
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` (entity `PersistentHistoryTransaction`) for any
    ///   other key.
    public func value(forKey key: String) throws -> Any? {
        switch key {
        case "author": return author
        case "contextName": return contextName
        case "bundleID": return bundleID
        case "processID": return processID
        case "timestamp": return timestamp
        case "transactionNumber": return transactionNumber
        default: throw ObjectGraphError.unknownKey(entity: "PersistentHistoryTransaction", key: key)
        }
    }
}

extension Array where Element == PersistentHistoryTransaction {
    /// Every transaction's changes as one save report, in order (a later change wins: an object inserted
    /// then deleted is reported deleted).
    public var contextDidSave: ContextDidSave {
        var saved = ContextDidSave()
        for transaction in self {
            let next = transaction.contextDidSave
            saved.deletedObjectIDs.formUnion(next.deletedObjectIDs)
            saved.insertedObjectIDs.formUnion(next.insertedObjectIDs)
            saved.updatedObjectIDs.formUnion(next.updatedObjectIDs)
            for (id, keys) in next.changedKeys { saved.changedKeys[id, default: []].formUnion(keys) }
        }
        saved.updatedObjectIDs.subtract(saved.insertedObjectIDs)
        saved.updatedObjectIDs.subtract(saved.deletedObjectIDs)
        saved.insertedObjectIDs.subtract(saved.deletedObjectIDs)
        return saved
    }
}

extension PersistentHistoryChange {
    /// A change as a store's history gives it (another store's reader builds these too).
    package static func recorded(changeID: Int64, changedObjectID: ManagedObjectID, changeType: PersistentHistoryChangeType,
                                 updatedProperties: Set<String>?, tombstone: [String: TombstoneValue]? = nil,
                                 transactionNumber: Int64) -> PersistentHistoryChange {
        PersistentHistoryChange(changeID: changeID, changedObjectID: changedObjectID, changeType: changeType,
                                updatedProperties: updatedProperties, tombstone: tombstone, transactionNumber: transactionNumber)
    }
}

extension PersistentHistoryTransaction {
    /// A transaction as a store's history gives it (another store's reader builds these too).
    package static func recorded(transactionNumber: Int64, timestamp: Date, author: String?, contextName: String?,
                                 bundleID: String?, processID: String?, storeIdentifier: String,
                                 changes: [PersistentHistoryChange]?) -> PersistentHistoryTransaction {
        PersistentHistoryTransaction(transactionNumber: transactionNumber, timestamp: timestamp, author: author,
                                     contextName: contextName, bundleID: bundleID, processID: processID,
                                     storeIdentifier: storeIdentifier, changes: changes)
    }
}
