/// What makes a batch insert an upsert, as Core Data's batch insert is, in store terms (the same on every
/// store): the unique indexes of the uniqueness constraints that cover the entity, and the columns a batch
/// row writes over the stored row it meets.
package struct BatchUpsertPlan: Sendable {
    /// One uniqueness constraint's unique index: its name, columns and partial `WHERE` (names the schema made).
    package struct Constraint: Sendable {
        package let indexName: String
        package let columns: [String]
        package let whereClause: String?
    }

    /// The constraints, the entity's own first, then each super-entity's, in declaration order.
    package let constraints: [Constraint]
    /// The attribute columns the batch row writes over the stored row; the stored row's key and entity stay.
    /// A derived attribute that reads related objects keeps the stored row's value: the batch row has no
    /// related objects, and the stored row's have not changed.
    package let updatedColumns: [String]

    /// The plan for batch inserts of `entity`; nil for an entity without uniqueness constraints.
    package init?(entity: EntityDescription, schema: StoreSchema) {
        var constraints: [Constraint] = []
        var declaring: EntityDescription? = entity
        while let current = declaring {
            for position in current.uniquenessConstraints.indices {
                let name = "Z_\(current.name.uppercased())_UNIQUE_\(position)"
                guard let index = schema.indexes.first(where: { $0.name == name }) else { continue }
                constraints.append(Constraint(indexName: index.name, columns: index.columns, whereClause: index.whereClause))
            }
            declaring = current.superentity
        }
        guard !constraints.isEmpty else { return nil }
        self.constraints = constraints
        updatedColumns = entity.storage.indices.compactMap { slot -> String? in
            guard case .attribute(let column, _) = entity.storage[slot] else { return nil }
            if let derivation = (entity.allProperties[slot] as? AttributeDescription)?.derivationExpression,
               !DerivationCheck.relationships(readBy: derivation, of: entity).isEmpty { return nil }
            return column
        }
    }
}
