import Foundation
import Testing
@testable import OpenCoreData

@Suite struct ModelTests {
    @Test func buildsAModel() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Item") {
                Attribute("name", .string, optional: false)
                ToOne("list", "List", inverse: "items")
            }
            EntityDescription("List") {
                Attribute("title", .string)
                ToMany("items", "Item", inverse: "list", deleteRule: .cascade)
            }
        }
        #expect(model.entitiesByName["Item"]?.entityNumber == 1)
        #expect(model.entitiesByName["List"]?.entityNumber == 2)
    }
}

@Suite struct ModelFileHostileInputTests {
    /// Processing instructions without data crashed FoundationXML on Linux (found by the model-XML fuzzer;
    /// reproducers in Fuzz/Crashes/ModelXML). They are refused before parsing.
    @Test(arguments: ["<?x?><model/>", "<?xml version=\"1.0\"?><?xml?><model/>",
                      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE m [<?x?>]><model/>"])
    func processingInstructionsAreRefused(_ text: String) {
        #expect(throws: ModelError.self) { try ManagedObjectModel(xmlData: Data(text.utf8), source: "test") }
    }

    @Test func modelsAreFreedWhenNobodyHoldsThem() throws {
        weak var released: ManagedObjectModel?
        do {
            let model = try ManagedObjectModel {
                EntityDescription("Parent", abstract: true) { ToMany("children", "Child", inverse: "parent") }
                EntityDescription("Child", parent: "Parent") { ToOne("parent", "Parent", inverse: "children") }
            }
            released = model
            #expect(released != nil)
        }
        #expect(released == nil)
    }
}
