import Foundation
import OpenCoreData

/// Imports rows into one entity: every row is converted first (``AttributeValueConverter``), so a bad
/// row is found before anything is written; then the good rows are inserted and saved in one save
/// (one transaction), with a progress bar.
public enum RecordImporter {
    /// A row that was not imported, and why.
    public struct Refused: Sendable, CustomStringConvertible {
        /// `row N` or `line N`.
        public let location: String
        /// Why, naming the column and value.
        public let reason: String
        /// `location: reason`.
        public var description: String { "\(location): \(reason)" }
    }

    /// The attribute values of every row that converts, and the reasons the others do not.
    public static func convert(_ records: [ImportRecord], mapping: ColumnMapping,
                        entity: EntityDescription) -> (rows: [[String: any Sendable]], refused: [Refused]) {
        let required = entity.allProperties.compactMap { $0 as? AttributeDescription }.filter {
            !$0.isOptional && !$0.isTransient && $0.defaultValue == nil
        }
        var rows: [[String: any Sendable]] = []
        var refused: [Refused] = []
        for record in records {
            if let unreadable = record.unreadable {
                refused.append(Refused(location: record.location, reason: unreadable))
                continue
            }
            do {
                var values: [String: any Sendable] = [:]
                for (column, field) in record.fields.sorted(by: { $0.key < $1.key }) {
                    guard let attribute = mapping.attributes[column] else { continue }
                    do {
                        if let value = try AttributeValueConverter.value(field, for: attribute) {
                            // The library's own rule, so a row accepted here is never refused at insert.
                            try attribute.checkStorable(Self.settable(value))
                            values[attribute.name] = value
                        }
                    } catch {
                        let target = column == attribute.name ? "" : " (\(attribute.name))"
                        throw AttributeValueConverter.Refusal(description: "column '\(column)'\(target): \(error)")
                    }
                }
                if let missing = required.first(where: { values[$0.name] == nil }) {
                    throw AttributeValueConverter.Refusal(description: "\(missing.name) is required but has no value")
                }
                rows.append(values)
            } catch {
                refused.append(Refused(location: record.location, reason: "\(error)"))
            }
        }
        return (rows, refused)
    }

    /// What `setValue` gets for a converted value: a JSON value for a transformable attribute (kept as its
    /// ``ImportField``, which is `Sendable`) in its Foundation form, which the transformer archives.
    static func settable(_ value: any Sendable) -> Any {
        (value as? ImportField)?.propertyListValue ?? value
    }

    /// Inserts `rows` as new objects of `entity` and saves once; nothing is written if the save fails.
    ///
    /// - Throws: `ObjectGraphError` when an object cannot be made or given a value, ``ImportError`` when
    ///   the save fails (the context is rolled back, so nothing is written).
    public static func insert(_ rows: [[String: any Sendable]], entity: String, into context: ManagedObjectContext,
                              progress: ((Int) -> Void)? = nil) throws {
        try context.performAndWait {
            for (index, values) in rows.enumerated() {
                let object = try context.insertNewObject(forEntityName: entity)
                for (key, value) in values { try object.setValue(Self.settable(value), forKey: key) }
                progress?(index + 1)
            }
            do {
                try context.save()
            } catch {
                context.rollback()
                throw ImportError("the save failed, so nothing was imported: \(error)")
            }
        }
    }
}
