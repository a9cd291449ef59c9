import Foundation
import Testing
@testable import OpenCoreData

/// A fetch or count in a child context answers from its parent chain's state: objects a parent inserted
/// and has not saved are matched, objects a parent deleted are gone, objects a parent changed are matched
/// on their changed values. The expected answer is always the one the same request gives after the
/// parents have saved.
@Suite struct ChildContextFetchTests {
    /// Saved: a (not done), b (done), c (done). The parent then inserts d (done) and e (not done),
    /// marks a done, b not done, and deletes c: `done == YES` must then give a and d.
    @discardableResult
    private static func parentWithUnsavedChanges(_ stack: TestStack, _ parent: ManagedObjectContext) throws
        -> [String: ManagedObjectID] {
        try parent.performAndWait {
            var saved: [String: ManagedObject] = [:]
            for (name, done) in [("a", false), ("b", true), ("c", true)] {
                let item = try parent.insertNewObject(forEntityName: "Item")
                try item.setValue(name, forKey: "name")
                try item.setValue(done, forKey: "done")
                saved[name] = item
            }
            try parent.save()
            for (name, done) in [("d", true), ("e", false)] {
                let item = try parent.insertNewObject(forEntityName: "Item")
                try item.setValue(name, forKey: "name")
                try item.setValue(done, forKey: "done")
            }
            try saved["a"]!.setValue(true, forKey: "done")
            try saved["b"]!.setValue(false, forKey: "done")
            parent.delete(saved["c"]!)
            return saved.mapValues(\.objectID)
        }
    }

    private static func doneRequest<T>(_ type: T.Type) throws -> FetchRequest<T> {
        let request = FetchRequest<T>(entityName: "Item")
        request.predicate = try QueryPredicate(format: "done == YES")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        return request
    }

    /// Objects, IDs and a count from `context`, as plain values to compare.
    private static func answers(_ context: ManagedObjectContext) throws -> (names: [String], ids: Int, count: Int) {
        try context.performAndWait {
            let objects: [ManagedObject] = try context.fetch(doneRequest(ManagedObject.self))
            let names = try objects.map { try $0.value(forKey: "name") as? String ?? "?" }
            let idRequest = try doneRequest(ManagedObjectID.self)
            idRequest.resultType = .managedObjectID
            let ids: [ManagedObjectID] = try context.fetch(idRequest)
            #expect(Set(ids) == Set(objects.map(\.objectID)))
            return (names, ids.count, try context.count(for: doneRequest(ManagedObject.self)))
        }
    }

    /// Saves `contexts` in order, then asks a fresh context of the store: it must answer as the child did.
    private static func expectSameAfterSaving(_ contexts: [ManagedObjectContext], _ stack: TestStack,
                                              _ seen: (names: [String], ids: Int, count: Int)) throws {
        for context in contexts { try context.performAndWait { try context.save() } }
        let fresh = try answers(stack.context())
        #expect(fresh.names == seen.names)
        #expect(fresh.ids == seen.ids)
        #expect(fresh.count == seen.count)
    }

    @Test(arguments: [ManagedObjectContext.ConcurrencyType.confinement, .privateQueue])
    func childFetchSeesParentInsertsUpdatesAndDeletes(_ type: ManagedObjectContext.ConcurrencyType) throws {
        let stack = try TestStack(model: TestModels.todo())
        let parent = stack.context(type)
        try Self.parentWithUnsavedChanges(stack, parent)
        let child = ManagedObjectContext(concurrencyType: type)
        child.parent = parent
        let seen = try Self.answers(child)
        #expect(seen.names == ["a", "d"])
        #expect(seen.ids == 2)
        #expect(seen.count == 2)

        try Self.expectSameAfterSaving([parent], stack, seen)
    }

    @Test func grandchildSeesEveryAncestorsChanges() throws {
        let stack = try TestStack(model: TestModels.todo())
        let root = stack.context()
        let saved = try Self.parentWithUnsavedChanges(stack, root)
        let middle = ManagedObjectContext(concurrencyType: .confinement)
        middle.parent = root
        // The middle context adds f (done) and deletes a; it has not looked at the root's new objects.
        let f = try middle.insertNewObject(forEntityName: "Item")
        try f.setValue("f", forKey: "name")
        try f.setValue(true, forKey: "done")
        middle.delete(try middle.existingObject(with: saved["a"]!))
        let leaf = ManagedObjectContext(concurrencyType: .confinement)
        leaf.parent = middle
        let seen = try Self.answers(leaf)
        #expect(seen.names == ["d", "f"])
        #expect(seen.count == 2)

        try Self.expectSameAfterSaving([middle, root], stack, seen)
    }

    /// `includesPendingChanges = false` leaves out the asking context's own unsaved changes; for a child,
    /// its parent is its store, so the parent's changes stay in.
    @Test func excludingPendingChangesKeepsTheParentsState() throws {
        let stack = try TestStack(model: TestModels.todo())
        let parent = stack.context()
        try Self.parentWithUnsavedChanges(stack, parent)
        let child = ManagedObjectContext(concurrencyType: .confinement)
        child.parent = parent
        let own = try child.insertNewObject(forEntityName: "Item")
        try own.setValue("g", forKey: "name")
        try own.setValue(true, forKey: "done")
        #expect(try child.count(for: Self.doneRequest(ManagedObject.self)) == 3)
        let request = try Self.doneRequest(ManagedObject.self)
        request.includesPendingChanges = false
        let objects: [ManagedObject] = try child.fetch(request)
        #expect(try objects.map { try $0.value(forKey: "name") as? String } == ["a", "d"])
        #expect(try child.count(for: request) == 2)
    }
}
