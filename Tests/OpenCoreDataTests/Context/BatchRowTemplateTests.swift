import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Batch-insert rows against the naive reference: every value converts exactly as `setValue` converts it
/// (`ValueConversion.storeValue`), or is refused when that refuses it or a required value is missing.
@Suite struct BatchRowTemplateTests {
    /// One attribute per conversion the template picks, few enough that keys are found by comparing names.
    static func narrowModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Row") {
                Attribute("text", .string, optional: false)
                Attribute("when", .date)
                Attribute("flag", .boolean, default: true)
                Attribute("amount", .double)
                Attribute("big", .integer64, default: Int64(7))
                Attribute("small", .integer16)
            }
        }
    }

    /// What the reused buffer holds before a row is filled in; no column may keep it.
    static let stale = (-12345 as Int64).storeValue

    static func check(entity: EntityDescription, requiredKey: String, filler: Any) throws {
        let template = BatchRowTemplate(entity: entity, columnCount: entity.tableColumnCount)
        var checked = 0
        for attribute in entity.allProperties.compactMap({ $0 as? AttributeDescription }) where !attribute.isTransient {
            guard case .attribute(_, let column) = entity.storage[entity.slotByName[attribute.name]!] else { continue }
            for (label, value) in Reliability.HostileValueTests.values {
                // Skipped as in HostileValueTests: these trap inside Foundation's Decimal.
                if attribute.attributeType == .decimal && ["Double.nan", "Double.infinity", "Float.nan", "Float 1e30"].contains(label) {
                    continue
                }
                var dictionary: [String: Any] = [attribute.name: value as Any]
                if attribute.name != requiredKey { dictionary[requiredKey] = filler }
                let expected: StoreValue?
                do {
                    let converted = try ValueConversion.storeValue(value, for: attribute)
                    expected = converted.isNull && !attribute.isOptional ? nil : converted
                } catch {
                    expected = nil
                }
                var row = RowValues(repeating: Self.stale, count: entity.tableColumnCount)
                do {
                    try template.fill(&row, from: dictionary, index: 0)
                    #expect(expected != nil, "\(attribute.name) ← \(label): accepted, the reference refuses it")
                    if let expected {
                        let got = row[column]
                        #expect(got == expected, "\(attribute.name) ← \(label): \(got), expected \(expected)")
                    }
                    // Every other column is the default (or NULL): nothing left from the buffer's old contents.
                    #expect(!row.dropFirst().contains(Self.stale), "\(attribute.name) ← \(label): stale buffer value")
                } catch is ObjectGraphError {
                    #expect(expected == nil, "\(attribute.name) ← \(label): refused, the reference gives \(expected!)")
                }
                checked += 1
            }
        }
        #expect(checked > 0)
    }

    @Test func narrowEntityConvertsLikeSetValue() throws {
        let model = try Self.narrowModel()
        try Self.check(entity: model.entitiesByName["Row"]!, requiredKey: "text", filler: "t")
    }

    @Test func wideEntityConvertsLikeSetValue() throws {
        let model = try TestModels.todo()
        try Self.check(entity: model.entitiesByName["Item"]!, requiredKey: "name", filler: "n")
    }

    @Test func narrowEntityRefusesUnknownAndRelationshipKeys() throws {
        let model = try TestModels.todo()
        let tag = model.entitiesByName["Tag"]!
        let template = BatchRowTemplate(entity: tag, columnCount: tag.tableColumnCount)
        var row = RowValues(repeating: .null, count: tag.tableColumnCount)
        do {
            try template.fill(&row, from: ["label": "x", "nope": 1], index: 0)
            Issue.record("an unknown key was accepted")
        } catch ObjectGraphError.unknownKey(let entity, let key) {
            #expect(entity == "Tag" && key == "nope")
        }
        expectObjectGraphError(.notABatchAttribute(entity: "Tag", key: "items", row: 3)) {
            try template.fill(&row, from: ["items": NSNull()], index: 3)
        }
        try template.fill(&row, from: ["label": "x"], index: 0)
        #expect(row[1] == tag.entityNumber.storeValue)
    }
}
