import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// One context adds to a relationship while another deletes the other end (cascade). Whatever the order
    /// of the saves, the store must never hold a row pointing at a deleted one: the second save either
    /// conflicts or takes the first into account.
    @Suite struct RelationshipRaceTests {
        enum Order: String, CaseIterable { case deleteSavesFirst, insertSavesFirst }

        @Test(arguments: Order.allCases)
        func insertingUnderAListThatAnotherContextDeletes(order: Order) throws {
            let stack = try TestStack(model: TestModels.todo())
            let setup = stack.context()
            let list = try setup.insertNewObject(forEntityName: "TodoList")
            try list.setValue("L", forKey: "title")
            let old = try setup.insertNewObject(forEntityName: "Item")
            try old.setValue("old", forKey: "name")
            try old.setValue(list, forKey: "list")
            try setup.save()

            let adder = stack.context(), deleter = stack.context()
            let adderList = try adder.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))[0]
            let item = try adder.insertNewObject(forEntityName: "Item")
            try item.setValue("new", forKey: "name")
            try item.setValue(adderList, forKey: "list")
            let deleterList = try deleter.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))[0]
            _ = try deleterList.value(forKey: "items")
            deleter.delete(deleterList)

            var outcomes: [String] = []
            for context in order == .deleteSavesFirst ? [deleter, adder] : [adder, deleter] {
                do {
                    try context.save()
                    outcomes.append("saved")
                } catch {
                    outcomes.append("\(type(of: error))")
                }
            }
            let problems = try StoreInvariants.violations(at: stack.url, model: stack.model)
            #expect(problems.isEmpty, "\(order) \(outcomes): \(problems)")
            // The list's version moved on (its to-many changed, or it was deleted): the second save conflicts.
            #expect(outcomes == ["saved", "ObjectGraphError"])
            // The list is gone either way, and so is every item that pointed at it (cascade or refusal).
            let queue = try DatabaseQueue(path: stack.url.path)
            let left = try queue.read { try String.fetchAll($0, sql: "SELECT ZNAME || ':' || IFNULL(ZLIST, '-') FROM ZITEM ORDER BY ZNAME") }
            print("RelationshipRaceTests: \(order.rawValue): \(outcomes), items left \(left)")
        }
    }
}
