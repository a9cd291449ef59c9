import Foundation
import Testing
@testable import OpenCoreData

/// A subclass that overrides the required initializer as Swift spells it by default (no ownership modifier).
final class PlainlyInitializedItem: ManagedObject {
    override class var entityName: String { "Item" }
    private(set) var madeWithEntity: String?

    required init(entity: EntityDescription, id: ManagedObjectID) {
        madeWithEntity = entity.name
        super.init(entity: entity, id: id)
    }
}

/// Overriding `init(entity:id:)` is the documented way to set a subclass up; the library must not assume
/// how the override takes its entity. When the base initializer lent its entity (`__shared`) and an override
/// took it owned, every object made released the entity once too often, and freeing the context crashed.
struct SubclassInitializerTests {
    @Test func anOverrideTakingItsEntityPlainlyKeepsTheModelIntact() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Item", class: PlainlyInitializedItem.self) { Attribute("name", .string) }
        }
        let stack = try TestStack(model: model)
        let entity = try #require(stack.model.entitiesByName["Item"])
        let before = _getRetainCount(entity)
        for round in 0..<3 {
            do {
                let context = stack.context()
                for index in 0..<50 {
                    let item = try context.insertNewObject(forEntityName: "Item")
                    try item.setValue("item \(round)-\(index)", forKey: "name")
                    #expect((item as? PlainlyInitializedItem)?.madeWithEntity == "Item")
                }
                try context.save()
            }
            do {
                // Objects made from rows go through the same initializer.
                let context = stack.context()
                let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
                #expect(items.count == 50 * (round + 1))
                #expect(items.allSatisfy { ($0 as? PlainlyInitializedItem)?.madeWithEntity == "Item" })
                #expect(try items.compactMap { try $0.value(forKey: "name") as? String }.count == items.count)
            }
        }
        #expect(_getRetainCount(entity) == before, "objects made and freed changed the entity's retain count")
        #expect(entity.name == "Item" && entity.attributesByName["name"] != nil)
    }
}
