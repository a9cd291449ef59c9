import Foundation

/// One step of a ``MigrationPlan``: what it does, to which entity, and the SQL it runs.
///
/// Steps are data: a dry run prints them, tests compare them, and ``MigrationRunner`` runs their
/// statements in one transaction. Every identifier in the SQL is a name the library generated from a
/// model (``StoreSchema``), quoted; every value is a bound parameter.
public struct SchemaStep: Sendable, Equatable, CustomStringConvertible {
    /// What a step does.
    public enum Kind: String, Sendable, Equatable {
        /// Counts rows that would make the migration lose data; any row refuses it.
        case check
        /// Gathers one relationship's links (source key, destination key, order) from the old layout.
        case collectLinks
        /// Creates a table of the new layout under a temporary name.
        case createTable
        /// Copies one entity's rows into its new table, column by column.
        case copyRows
        /// Sets the entity-number column of a to-one whose destination has sub-entities.
        case fillEntityColumns
        /// Fills a many-to-many join table of the new layout from collected links.
        case fillJoinTable
        /// Writes `Z_PRIMARYKEY` for the new entity numbers.
        case rewritePrimaryKeys
        /// Drops a table of the old layout.
        case dropTable
        /// Gives a new table its final name.
        case renameTable
        /// Creates an index of the new layout.
        case createIndex
        /// Writes the new version's hashes and identifiers into `Z_METADATA`.
        case writeMetadata
        /// Drops the temporary link tables.
        case cleanUp
    }

    /// What the step does.
    public let kind: Kind
    /// The entity (or `Entity.relationship`) the step is about, if any.
    public let subject: String?
    /// One line saying what the step does.
    public let summary: String
    /// The statements, in order.
    package let statements: [MigrationStatement]
    /// For a check: what the migration is refused with when the count is not zero.
    package let refusal: MigrationRefusal?

    init(_ kind: Kind, subject: String?, _ summary: String, _ statements: [MigrationStatement],
         refusal: MigrationRefusal? = nil) {
        self.kind = kind
        self.subject = subject
        self.summary = summary
        self.statements = statements
        self.refusal = refusal
    }

    /// The statements as text, each followed by its bound values (`-- values: …`) when it has any.
    public var sql: [String] { statements.map(\.description) }

    /// The statements and their bound values as the runner executes them, for the benchmark's raw-SQLite
    /// twin (the package's own benchmark); not part of the public API.
    package var boundStatements: [(sql: String, arguments: [StoreValue])] {
        statements.map { ($0.sql, $0.arguments) }
    }

    /// `kind [subject] summary`: the line a dry run prints.
    public var description: String { "\(kind.rawValue) \(subject.map { "[\($0)] " } ?? "")\(summary)" }
}

/// One SQL statement and its bound values.
package struct MigrationStatement: Sendable, Equatable, CustomStringConvertible {
    package var sql: String
    package var arguments: [StoreValue] = []

    package var description: String {
        arguments.isEmpty ? sql : sql + "  -- values: " + arguments.map(Self.text).joined(separator: ", ")
    }

    /// A bound value as the plan prints it: blobs by size only.
    private static func text(_ value: StoreValue) -> String {
        switch value.storage {
        case .blob(let data): return "<\(data.count) bytes>"
        case .string(let string): return "'" + string.replacingOccurrences(of: "'", with: "''") + "'"
        default: return value.description
        }
    }
}

/// What a check refuses the migration with, given the count it found.
package enum MigrationRefusal: Sendable, Equatable {
    case missingRequiredValues(entity: String, attribute: String)
    case severalLinks(entity: String, relationship: String)
    case linksLost(entity: String, relationship: String)

    package func error(rowCount: Int) -> MigrationError {
        switch self {
        case .missingRequiredValues(let entity, let attribute):
            return .missingRequiredValues(entity: entity, attribute: attribute, rowCount: rowCount)
        case .severalLinks(let entity, let relationship):
            return .severalLinks(entity: entity, relationship: relationship, rowCount: rowCount)
        case .linksLost(let entity, let relationship):
            return .linksWouldBeLost(entity: entity, relationship: relationship, rowCount: rowCount)
        }
    }
}

/// A name the library made, quoted for SQL. Names come only from ``StoreSchema`` or from this folder's
/// fixed prefixes, never from input; quoting keeps them identifiers whatever they hold.
func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
