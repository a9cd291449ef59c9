import Foundation
import Testing
@testable import OpenCoreData

/// `EntityDescription.slot(forKey:)` (names compared one by one for narrow entities) against the reference
/// `slotByName` dictionary, for every property and for keys that are not properties.
@Suite struct EntitySlotLookupTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Narrow") {
                Attribute("a", .string)
                Attribute("café", .string)
                Attribute("aVeryLongPropertyNameBeyondSmallStrings", .integer64)
            }
            EntityDescription("Child", parent: "Narrow") {
                Attribute("b", .boolean)
            }
            EntityDescription("Wide") {
                for index in 0..<20 { Attribute("p\(index)", .integer32) }
            }
        }
    }

    @Test func slotLookupAgreesWithTheDictionary() throws {
        let model = try Self.model()
        let unknown = ["", "A", "b ", "p20", "cafe", "aVeryLongPropertyNameBeyondSmallString", "aVeryLongPropertyNameBeyondSmallStrings!"]
        var checked = 0
        for entity in model.entities {
            #expect((entity.allProperties.count <= EntityDescription.linearSlotSearchLimit) == (entity.name != "Wide"))
            for key in entity.allProperties.map(\.name) + unknown {
                #expect(entity.slot(forKey: key) == entity.slotByName[key], "\(entity.name).\(key)")
                checked += 1
            }
            // Canonically equivalent spellings find the same property, as the dictionary does.
            #expect(entity.slot(forKey: "cafe\u{301}") == entity.slotByName["cafe\u{301}"])
        }
        #expect(checked > 20)
        #expect(model.entitiesByName["Child"]!.slot(forKey: "café") == 1)
        #expect(model.entitiesByName["Child"]!.slot(forKey: "b") == 3)
    }
}
