import Foundation
import OpenCoreDataImport
import OpenCoreData

/// How `history` and `watch` print a transaction: one line of text, or one JSON object a line.
enum TransactionText {
    /// `#12 2026-11-25T10:00:00.5Z by ocd import (context, process 4242): 3 inserted, 1 updated, 0 deleted`.
    static func plain(_ transaction: PersistentHistoryTransaction) -> String {
        let changes = transaction.changes ?? []
        let count = { (type: PersistentHistoryChangeType) in changes.filter { $0.changeType == type }.count }
        let who = [transaction.contextName, transaction.processID.map { "process \($0)" }].compactMap { $0 }
        return "#\(transaction.transactionNumber) \(DateText.iso8601(transaction.timestamp))"
            + " by \(TerminalText.escaped(transaction.author ?? "(no author)"))"
            + (who.isEmpty ? "" : " (\(TerminalText.escaped(who.joined(separator: ", "))))")
            + ": \(count(.insert)) inserted, \(count(.update)) updated, \(count(.delete)) deleted"
    }

    /// `{"transaction":12,"timestamp":…,"author":…,"inserted":[uri…],"updated":{uri:[key…]},"deleted":[uri…]}`.
    static func json(_ transaction: PersistentHistoryTransaction) -> String {
        let changes = transaction.changes ?? []
        func uris(_ type: PersistentHistoryChangeType) -> String {
            "[" + changes.filter { $0.changeType == type }
                .map { ValueText.quoted($0.changedObjectID.uriRepresentation().absoluteString) }.joined(separator: ",") + "]"
        }
        let updated = changes.filter { $0.changeType == .update }.map { change in
            ValueText.quoted(change.changedObjectID.uriRepresentation().absoluteString) + ":["
                + (change.updatedProperties ?? []).sorted().map(ValueText.quoted).joined(separator: ",") + "]"
        }
        let fields = [
            "\"transaction\":\(transaction.transactionNumber)",
            "\"timestamp\":\(ValueText.quoted(DateText.iso8601(transaction.timestamp)))",
            "\"author\":\(ValueText.json(transaction.author))",
            "\"contextName\":\(ValueText.json(transaction.contextName))",
            "\"process\":\(ValueText.json(transaction.processID))",
            "\"inserted\":\(uris(.insert))",
            "\"updated\":{\(updated.joined(separator: ","))}",
            "\"deleted\":\(uris(.delete))",
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The entity `--entity` names, or nil when none is given.
    /// - Throws: `OCDError` when the model has no such entity.
    static func entity(named name: String?, in model: ManagedObjectModel) throws -> EntityDescription? {
        guard let name else { return nil }
        guard let found = model.entitiesByName[name] else {
            throw OCDError("the model has no entity '\(name)' (it has \(model.entities.map(\.name).sorted().joined(separator: ", ")))")
        }
        return found
    }

    /// The transaction with only the changes of `entity` (and its sub-entities); nil when none is left.
    static func filtered(_ transaction: PersistentHistoryTransaction, entity: EntityDescription?) -> PersistentHistoryTransaction? {
        guard let entity else { return transaction }
        let kept = transaction.keepingChanges { $0.changedObjectID.entity.isKind(of: entity) }
        return kept.changes?.isEmpty == false ? kept : nil
    }
}
