import Foundation

/// A batch delete's walk over the object graph, written once for every store: the rows the request names,
/// their cascades (breadth first, every row once), the deny rules that refuse the whole request, then per
/// table the to-one foreign keys elsewhere set to NULL (moving their `Z_OPT` on), the join rows and the
/// table's own to-many keys cleared, and the rows removed. Keys travel as bound `IN (?, …)` lists of at most
/// ``keysPerStatement``.
///
/// What differs by backend is only how one table's rows go, `deleteRows`: the SQLite store first lists the
/// files of values kept outside them, the PostgreSQL store reads back the columns a history tombstone keeps.
package struct BatchDeleteCascade<Session: SQLSession> {
    /// Keys bound in one statement: well under SQLite's and PostgreSQL's limits on bound values.
    package static var keysPerStatement: Int { 500 }

    /// The store's model.
    package let model: ManagedObjectModel
    /// The store the IDs belong to.
    package let identity: StoreIdentity
    /// The transaction's session.
    package let session: Session

    /// A cascade over `model`'s rows through `session`, naming objects of the store `identity`.
    package init(model: ManagedObjectModel, identity: StoreIdentity, session: Session) {
        self.model = model
        self.identity = identity
        self.session = session
    }

    /// What a delete did: the rows deleted, in the order met, and the rows whose foreign keys were cleared
    /// and that were not deleted themselves.
    package struct Outcome {
        /// The deleted rows, each once.
        package var deleted: [ManagedObjectID]
        /// The rows that stay, with a foreign key that pointed at a deleted row now NULL.
        package var nullified: [ManagedObjectID]
    }

    /// Deletes `initial` (temporary IDs skipped), or the rows `selection` names, with everything the delete
    /// rules reach; `deleteRows(table, list, keys)` removes the rows of `table` whose `Z_PK` is in `list`
    /// (`(?, ?, …)`, with `keys` bound).
    ///
    /// - Throws: ``ObjectGraphError/validationFailed(_:)`` with ``ValidationFailure/Rule/deleteDenied`` when a
    ///   deny rule refuses (the caller's transaction then writes nothing); what the session or `deleteRows` throws.
    package func run(initial: [ManagedObjectID]?, entity: EntityDescription, selection: BatchSelection,
                     deleteRows: (_ table: String, _ list: String, _ keys: [StoreValue]) throws -> Void) throws -> Outcome {
        // 1. The rows the request names.
        let named: [ManagedObjectID]
        if let initial {
            named = initial.filter { !$0.isTemporaryID }
        } else {
            named = try session.rows("SELECT t0.Z_ENT, t0.Z_PK FROM \(selection.fromClause)\(selection.whereSQL)",
                                     selection.arguments).map { objectID($0, default: entity) }
        }
        // 2. Cascades, breadth first; every ID once (a joined selection may name a row more than once).
        var seen = Set<ManagedObjectID>()
        var deleted = named.filter { seen.insert($0).inserted }
        var frontier = deleted
        while !frontier.isEmpty {
            var next: [ManagedObjectID] = []
            for (source, ids) in Dictionary(grouping: frontier, by: { $0.entity }) {
                for (slot, property) in source.allProperties.enumerated() {
                    guard let relationship = property as? RelationshipDescription, relationship.deleteRule == .cascade else { continue }
                    for id in try relatedIDs(of: ids, relationship: relationship, storage: source.storage[slot])
                    where seen.insert(id).inserted {
                        next.append(id)
                        deleted.append(id)
                    }
                }
            }
            frontier = next
        }
        // 3. Deny rules: related rows that are not themselves going away refuse the whole request.
        for (source, ids) in Dictionary(grouping: deleted, by: { $0.entity }) {
            for (slot, property) in source.allProperties.enumerated() {
                guard let relationship = property as? RelationshipDescription, relationship.deleteRule == .deny else { continue }
                let related = try relatedIDs(of: ids, relationship: relationship, storage: source.storage[slot])
                if let survivor = related.first(where: { !seen.contains($0) }) {
                    throw ObjectGraphError.validationFailed([ValidationFailure(
                        objectID: ids[0], entity: source.name, key: relationship.name, rule: .deleteDenied,
                        message: "delete denied: \(survivor) is still related")])
                }
            }
        }
        // 4. Foreign keys and join rows pointing at the deleted rows, then the rows themselves, table by table
        // in the order the tables were met.
        var updated: [ManagedObjectID] = []
        var keysByTable: [String: [Int64]] = [:]
        var tableOrder: [String] = []
        for id in deleted {
            let table = id.entity.tableName
            if keysByTable[table] == nil { tableOrder.append(table) }
            keysByTable[table, default: []].append(id.primaryKey)
        }
        for table in tableOrder {
            let keys = Array(Set(keysByTable[table] ?? [])).sorted()
            for start in stride(from: 0, to: keys.count, by: Self.keysPerStatement) {
                let chunk = keys[start..<min(start + Self.keysPerStatement, keys.count)].map(\.storeValue)
                let list = "(" + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")"
                // Foreign keys elsewhere that point into this table's deleted rows.
                for other in model.entitiesByNumber {
                    for property in other.properties {
                        guard let relationship = property as? RelationshipDescription,
                              relationship.destinationEntity.tableName == table,
                              let otherSlot = other.slotByName[relationship.name] else { continue }
                        switch other.storage[otherSlot] {
                        case .toOne(let column, _, let entityColumn, _):
                            var assignments = "\(column) = NULL"
                            if let entityColumn { assignments += ", \(entityColumn) = NULL" }
                            updated += try session.rows(
                                "UPDATE \(other.tableName) SET \(assignments), Z_OPT = Z_OPT + 1 WHERE \(column) IN \(list) RETURNING Z_ENT, Z_PK",
                                chunk).map { objectID($0, default: other) }
                        case .toManyByJoinTable(let join):
                            try session.execute("DELETE FROM \(join.name) WHERE \(join.destinationColumn) IN \(list)", chunk)
                        default: break
                        }
                    }
                }
                // This table's own to-many links.
                for owner in model.entitiesByNumber where owner.tableName == table {
                    for storage in owner.storage {
                        switch storage {
                        case .toManyByJoinTable(let join):
                            try session.execute("DELETE FROM \(join.name) WHERE \(join.sourceColumn) IN \(list)", chunk)
                        case .toManyByForeignKey(let destination, let column, _):
                            try session.execute("UPDATE \(destination) SET \(column) = NULL WHERE \(column) IN \(list)", chunk)
                        default: break
                        }
                    }
                }
                try deleteRows(table, list, chunk)
            }
        }
        return Outcome(deleted: deleted, nullified: updated.filter { !seen.contains($0) })
    }

    /// The IDs related to some rows of one entity through one relationship.
    private func relatedIDs(of ids: [ManagedObjectID], relationship: RelationshipDescription,
                            storage: StoreSchema.PropertyStorage) throws -> [ManagedObjectID] {
        guard let first = ids.first, let destination = relationship.destinationEntity else { return [] }
        var result: [ManagedObjectID] = []
        for start in stride(from: 0, to: ids.count, by: Self.keysPerStatement) {
            let chunk = ids[start..<min(start + Self.keysPerStatement, ids.count)]
            guard let sql = RelatedRowsQuery.sql(storage: storage, sourceTable: first.entity.tableName,
                                                 destinationTable: destination.tableName, keyCount: chunk.count) else {
                return []
            }
            result += try session.rows(sql, chunk.map(\.primaryKey.storeValue)).map { objectID($0, default: destination) }
        }
        return result
    }

    /// The object ID of a `(Z_ENT, Z_PK)` row.
    package func objectID(_ row: [StoreValue], default entity: EntityDescription) -> ManagedObjectID {
        ManagedObjectID(keyRow: row, default: entity, model: model, store: identity)
    }
}
