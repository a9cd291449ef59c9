import Foundation

/// A batch request refused by one of SQLite's unique indexes (the model's uniqueness constraints), turned
/// into the ``ObjectGraphError/validationFailed(_:)`` a save gives: a ``ValidationFailure`` with
/// ``ValidationFailure/Rule/uniquenessViolation`` naming the constraint's entity and keys, rather than the
/// store's `SQLITE_CONSTRAINT` code. Once per failed request, never per row.
enum BatchUniquenessViolation {
    /// The validation failure `error` stands for when it is SQLite's unique-index refusal ("UNIQUE constraint
    /// failed: ZTAG.ZLABEL"); nil for any other error. The request's `entity` and its super-entities are asked
    /// first, then every other entity (a derived attribute's follow-up may write elsewhere).
    static func failure(for error: StoreError, entity: EntityDescription, model: ManagedObjectModel) -> ObjectGraphError? {
        // 19 is SQLITE_CONSTRAINT; its UNIQUE and PRIMARYKEY kinds name the index's columns in the message.
        guard case .sqlite(let code, let message, _) = error, code & 0xff == 19,
              message.contains("UNIQUE constraint failed") else { return nil }
        var candidates: [EntityDescription] = []
        var current: EntityDescription? = entity
        while let declaring = current { candidates.append(declaring); current = declaring.superentity }
        candidates += model.entities.filter { other in !candidates.contains { $0 === other } }
        let named = Set(message.split(separator: ":", maxSplits: 1).last.map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        } ?? [])
        for candidate in candidates {
            for keys in candidate.uniquenessConstraints {
                let columns = keys.compactMap { key in
                    model.schema.columnName(of: key, in: candidate).map { "\(candidate.tableName).\($0)" }
                }
                guard columns.count == keys.count, Set(columns) == named else { continue }
                let list = keys.joined(separator: ", ")
                return .validationFailed([ValidationFailure(
                    objectID: ManagedObjectID(temporaryFor: candidate), entity: candidate.name,
                    key: keys.joined(separator: ","), rule: .uniquenessViolation,
                    message: "a batch request would store two \(candidate.name) objects with the same \(list)")])
            }
        }
        // An index the constraints do not explain: still a uniqueness violation, named by the request's entity.
        return .validationFailed([ValidationFailure(objectID: ManagedObjectID(temporaryFor: entity), entity: entity.name,
                                                    key: "", rule: .uniquenessViolation, message: message)])
    }
}
