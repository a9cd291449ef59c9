import Foundation

/// One FROM scope: the rows of an entity under an alias, plus the to-one joins key paths needed.
package final class SQLScope {
    package let alias: String
    package let entity: EntityDescription
    package let table: String
    private(set) var joins: [String] = []
    private var joinAliases: [String: String] = [:]

    init(alias: String, entity: EntityDescription, table: String) {
        self.alias = alias
        self.entity = entity
        self.table = table
    }

    package var fromClause: String { ([table + " " + alias] + joins).joined(separator: " ") }

    /// The alias joined through `sourceAlias.column`, reusing an existing join.
    func join(from sourceAlias: String, column: String, to table: String, newAlias: () -> String) -> String {
        let key = sourceAlias + "." + column
        if let existing = joinAliases[key] { return existing }
        let alias = newAlias()
        joins.append("LEFT OUTER JOIN \(table) \(alias) ON \(sourceAlias).\(column) = \(alias).Z_PK")
        joinAliases[key] = alias
        return alias
    }
}
