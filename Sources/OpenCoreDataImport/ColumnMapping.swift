import Foundation
import OpenCoreData

/// Which attribute each column (or JSON key) of an import file fills: `--map column=attribute` first,
/// then the attribute of exactly the same name, then of the same name ignoring case. Columns that match no attribute are ignored
/// (and listed); relationships are not filled by import.
public struct ColumnMapping: Sendable {
    /// Column name → attribute.
    public let attributes: [String: AttributeDescription]
    /// Columns matching no attribute.
    public let ignored: [String]

    /// Maps `columns` to the stored attributes of `entity`, `overrides` (`column=attribute`) first.
    ///
    /// - Throws: ``ImportError`` for an override that is not `column=attribute`, names no attribute of
    ///   the entity, or names no column of the file.
    public init(columns: [String], entity: EntityDescription, overrides: [String]) throws {
        let stored = entity.allProperties.compactMap { $0 as? AttributeDescription }.filter { !$0.isTransient }
        func attribute(named name: String) -> AttributeDescription? {
            stored.first { $0.name == name } ?? stored.first { $0.name.lowercased() == name.lowercased() }
        }
        var explicit: [String: AttributeDescription] = [:]
        for pair in overrides {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ImportError("--map '\(pair)': write column=attribute")
            }
            guard let target = attribute(named: parts[1]) else {
                let names = stored.map(\.name).sorted().joined(separator: ", ")
                throw ImportError("--map '\(pair)': \(entity.name) has no attribute '\(parts[1])' (it has \(names))")
            }
            guard let column = columns.first(where: { $0 == parts[0] }) ?? columns.first(where: { $0.lowercased() == parts[0].lowercased() }) else {
                throw ImportError("--map '\(pair)': the file has no column '\(parts[0])'")
            }
            explicit[column] = target
        }
        var mapped = explicit
        // Exact names first, so a column `name` fills `name` even when a column `NAME` comes before it;
        // then the rest ignoring case. A column named like an attribute that another column already
        // fills is ignored.
        for column in columns where explicit[column] == nil {
            if let target = stored.first(where: { $0.name == column }), !mapped.values.contains(where: { $0 === target }) {
                mapped[column] = target
            }
        }
        var ignored: [String] = []
        for column in columns where mapped[column] == nil {
            if let target = attribute(named: column), !mapped.values.contains(where: { $0 === target }) {
                mapped[column] = target
            } else {
                ignored.append(column)
            }
        }
        attributes = mapped
        self.ignored = ignored
    }
}
