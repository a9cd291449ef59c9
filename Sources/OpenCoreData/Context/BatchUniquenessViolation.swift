import Foundation

/// A batch request refused by one of the store's unique indexes (the model's uniqueness constraints), turned
/// into the ``ObjectGraphError/validationFailed(_:)`` a save gives: a ``ValidationFailure`` with
/// ``ValidationFailure/Rule/uniquenessViolation`` naming the constraint's entity and keys, rather than the
/// store's error. Once per failed request, never per row.
enum BatchUniquenessViolation {
    /// The validation failure `error` stands for when it is a unique index's refusal
    /// (``StoreError/uniqueConstraintFailed(path:columns:message:)``); nil for any other error. The request's `entity` and its super-entities are asked
    /// first, then every other entity (a derived attribute's follow-up may write elsewhere).
    static func failure(for error: StoreError, entity: EntityDescription, model: ManagedObjectModel) -> ObjectGraphError? {
        guard case .uniqueConstraintFailed(_, let columns, let message) = error else { return nil }
        var candidates: [EntityDescription] = []
        var current: EntityDescription? = entity
        while let declaring = current { candidates.append(declaring); current = declaring.superentity }
        candidates += model.entities.filter { other in !candidates.contains { $0 === other } }
        let named = Set(columns)
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
