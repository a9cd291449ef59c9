import Foundation

/// The rows a batch update or delete acts on, in store terms: the compiled predicate's FROM clause
/// (aliased t0), the WHERE clause with the entity filter for shared tables, and its bound values. Built
/// from the query compiler's output; every name comes from the schema.
package struct BatchSelection {
    package let fromClause: String
    /// ` WHERE …`, or empty for every row of the table.
    package let whereSQL: String
    package let arguments: [StoreValue]

    /// The rows of `entity` (and its sub-entities' with `includesSubentities`) that `compiled` (made
    /// without the entity filter) selects.
    init(entity: EntityDescription, includesSubentities: Bool, compiled: PredicateSQLCompiler.Compiled) {
        var conditions: [String] = []
        if entity.superentity != nil || !entity.subentities.isEmpty {
            let numbers = includesSubentities ? entity.entityNumbersIncludingSubentities : [entity.entityNumber]
            conditions.append("t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))")
        }
        if let predicateSQL = compiled.whereClause { conditions.append("(\(predicateSQL))") }
        fromClause = compiled.fromClause
        whereSQL = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        arguments = compiled.arguments
    }

    /// The rows of `entity`'s table with the keys a residual predicate kept (``ResidualKeySelection``): they
    /// are already of the right entities.
    init(entity: EntityDescription, keys: ResidualKeySelection) {
        fromClause = "\(entity.tableName) t0"
        whereSQL = " WHERE " + keys.condition.sql
        arguments = keys.condition.arguments
    }

    private init() {
        fromClause = ""
        whereSQL = ""
        arguments = []
    }

    /// No filter: a batch delete of listed object IDs.
    static let none = BatchSelection()
}

package extension ManagedObjectModel {
    /// Whether a batch delete of `table`'s rows is one `DELETE`: no relationship (transient ones aside) leads
    /// out of the table or into it, so there is no cascade, deny rule, foreign key or join row to follow.
    func deletesAlone(fromTable table: String) -> Bool {
        !entitiesByNumber.contains { candidate in
            candidate.properties.contains { property in
                guard let relationship = property as? RelationshipDescription, !relationship.isTransient else { return false }
                return candidate.tableName == table || relationship.destinationEntity.tableName == table
            }
        }
    }
}
