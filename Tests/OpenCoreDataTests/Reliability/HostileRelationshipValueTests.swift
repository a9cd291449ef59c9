import Foundation
import Testing
@testable import OpenCoreData

extension Reliability {
    /// Wrong things through the key-value calls of relationships: wrong types, wrong entities, objects of
    /// another context or coordinator, deleted objects. Each is refused with an `ObjectGraphError` or leads
    /// to a save after which the store's invariants hold.
    @Suite struct HostileRelationshipValueTests {
        @Test func wrongTargetsAreRefusedOrSavedConsistently() throws {
            let stack = try TestStack(model: TestModels.todo())
            let setup = stack.context()
            try setup.insertNewObject(forEntityName: "TodoList").setValue("saved", forKey: "title")
            try setup.insertNewObject(forEntityName: "Tag").setValue("saved", forKey: "label")
            try setup.save()
            let elsewhere = try TestStack(model: TestModels.todo())
            let foreignContext = elsewhere.context()
            let foreignList = try foreignContext.insertNewObject(forEntityName: "TodoList")
            try foreignList.setValue("foreign", forKey: "title")

            var tried = 0, refused = 0, saved = 0
            // Each case gets a fresh context: (label, key, value maker).
            let cases: [(String, String, (ManagedObjectContext) throws -> Any?)] = [
                ("string as to-one", "list", { _ in "a list" }),
                ("number as to-one", "list", { _ in 42 }),
                ("array as to-one", "list", { try [$0.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))[0]] }),
                ("wrong entity as to-one", "list", { try $0.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))[0] }),
                ("object of another context", "list", { _ in try setup.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))[0] }),
                ("object of another coordinator", "list", { _ in foreignList }),
                ("deleted object as to-one", "list", { context in
                    let list = try context.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))[0]
                    context.delete(list)
                    return list
                }),
                ("single object as to-many", "tags", { try $0.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))[0] }),
                ("strings as to-many", "tags", { _ in ["a", "b"] }),
                ("string as to-many", "tags", { _ in "ab" }),
                ("wrong entity in to-many", "tags", { try Set($0.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))) }),
                ("data as to-many", "tags", { _ in Data([1, 2]) }),
                ("dictionary as to-many", "tags", { _ in ["k": 1] }),
                ("mixed array as to-many", "tags", { context in
                    [try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))[0], 7] as [Any]
                }),
                ("other context's tag in to-many", "tags", { _ in Set(try setup.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))) }),
                ("deleted tag in to-many", "tags", { context in
                    let tag = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))[0]
                    context.delete(tag)
                    return Set([tag])
                }),
                ("unknown key", "nope", { _ in 1 }),
                ("attribute key with an object", "name", { try $0.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))[0] }),
            ]
            for (label, key, make) in cases {
                tried += 1
                let context = stack.context()
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue("item \(label)", forKey: "name")
                do {
                    try item.setValue(try make(context), forKey: key)
                    try context.save()
                    saved += 1
                } catch is ObjectGraphError {
                    refused += 1
                }
                let problems = try StoreInvariants.violations(at: stack.url, model: stack.model)
                #expect(problems.isEmpty, "\(label): \(problems)")
            }
            print("HostileRelationshipValueTests: \(tried) cases, \(refused) refused, \(saved) saved")
            #expect(refused >= tried - 2)
        }
    }
}
