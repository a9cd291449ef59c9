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
