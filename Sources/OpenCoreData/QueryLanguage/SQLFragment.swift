
/// A piece of SQL text with the values bound to its `?` placeholders, in order.
///
/// Fragments carry their own arguments so that combining them (or repeating one, as BETWEEN does) can never
/// put a value at the wrong placeholder.
package struct SQLFragment: Sendable {
    package var sql: String
    package var arguments: [StoreValue]

    package init(_ sql: String, _ arguments: [StoreValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    package static func parameter(_ value: StoreValue) -> SQLFragment {
        value.isNull ? SQLFragment("NULL") : SQLFragment("?", [value])
    }

    /// Whether the fragment is one placeholder bound to a non-null value (as ``parameter(_:)`` makes it).
    package var isBoundValue: Bool { sql == "?" && arguments.count == 1 && !arguments[0].isNull }

    package static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs.sql + rhs.sql, lhs.arguments + rhs.arguments)
    }

    package static func + (lhs: SQLFragment, rhs: String) -> SQLFragment { SQLFragment(lhs.sql + rhs, lhs.arguments) }
    package static func + (lhs: String, rhs: SQLFragment) -> SQLFragment { SQLFragment(lhs + rhs.sql, rhs.arguments) }

    package static func joined(_ parts: [SQLFragment], separator: String) -> SQLFragment {
        SQLFragment(parts.map(\.sql).joined(separator: separator), parts.flatMap(\.arguments))
    }
}
