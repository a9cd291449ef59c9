import Testing
@testable import OpenCoreData

@Suite struct ModelTests {
    @Test func buildsAModel() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Item") {
                .attribute("name", .string, optional: false)
                .toOne("list", "List", inverse: "items")
            }
            EntityDescription("List") {
                .attribute("title", .string)
                .toMany("items", "Item", inverse: "list", deleteRule: .cascade)
            }
        }
        #expect(model.entitiesByName["Item"]?.entityNumber == 1)
        #expect(model.entitiesByName["List"]?.entityNumber == 2)
    }
}
