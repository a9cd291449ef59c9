import Foundation
import Testing
@testable import OpenCoreData

/// Requests that read a to-one's key (`list.title`, in the predicate or as the section key): a related
/// object counts as changed for the rows only when a key the request reads changed. Inserting one item
/// into a list of a thousand reports one insert, not a thousand updates; renaming the list still moves
/// (or drops) every row of it.
@Suite struct ResultsRelatedChangeTests {
    static let itemCount = 1_000

    enum Shape: String, CaseIterable {
        /// `list.title == 'Big'`, by name.
        case predicate
        /// Sectioned by `list.title`, by name within.
        case section
    }

    private func request(_ shape: Shape) throws -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        switch shape {
        case .predicate:
            request.predicate = try QueryPredicate(format: "list.title == 'Big'")
            request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        case .section:
            request.sortDescriptors = [QuerySortDescriptor(key: "list.title"), QuerySortDescriptor(key: "name")]
        }
        return request
    }

    private func controller(_ shape: Shape, _ context: ManagedObjectContext) throws -> FetchedResultsController<ManagedObject> {
        let controller = try FetchedResultsController(fetchRequest: try request(shape), managedObjectContext: context,
                                                      sectionNameKeyPath: shape == .section ? "list.title" : nil,
                                                      cacheName: nil)
        try controller.performFetch()
        return controller
    }

    /// A store with list "Big" holding `itemCount` items and list "Small" holding three; returns the lists' IDs.
    private func seed(_ stack: TestStack) throws -> (big: ManagedObjectID, small: ManagedObjectID) {
        let context = stack.context()
        var lists: [ManagedObject] = []
        for (title, count) in [("Big", Self.itemCount), ("Small", 3)] {
            let list = try context.insertNewObject(forEntityName: "TodoList")
            try list.setValue(title, forKey: "title")
            for index in 0..<count {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue(String(format: "%@ %05d", title, index), forKey: "name")
                try item.setValue(list, forKey: "list")
            }
            lists.append(list)
        }
        try context.save()
        return (lists[0].objectID, lists[1].objectID)
    }

    /// Saves `change` made in a context of its own and merges the save into `reader`.
    private func saveElsewhere(_ stack: TestStack, into reader: ManagedObjectContext,
                               _ change: (ManagedObjectContext) throws -> Void) throws {
        let writer = stack.context()
        let saved = Captured<ContextDidSave?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification,
                                                              object: writer, queue: nil) { note in
            saved.value = note.userInfo?[ManagedObjectContext.didSaveKey] as? ContextDidSave
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try change(writer)
        try writer.save()
        reader.mergeChanges(fromContextDidSave: try #require(saved.value))
    }

    private func counts(_ recorder: ContractRecorder) -> [FetchedResultsChangeType: Int] {
        recorder.log.reduce(into: [:]) { $0[$1.0, default: 0] += 1 }
    }

    /// A seeded store, and a controller of `shape` on a context of its own, recorded.
    private struct Watched {
        let stack: TestStack
        let lists: (big: ManagedObjectID, small: ManagedObjectID)
        let context: ManagedObjectContext
        let frc: FetchedResultsController<ManagedObject>
        let recorder: ContractRecorder
    }

    private func startWatching(_ shape: Shape) throws -> Watched {
        let stack = try TestStack(model: TestModels.todo())
        let lists = try seed(stack)
        let context = stack.context()
        let frc = try controller(shape, context)
        return Watched(stack: stack, lists: lists, context: context, frc: frc, recorder: ContractRecorder(frc))
    }

    /// Inserts one item into the big list.
    private func insertItem(into big: ManagedObjectID, in context: ManagedObjectContext) throws {
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue("Big 99999", forKey: "name")
        try item.setValue(try context.existingObject(with: big), forKey: "list")
    }

    @Test(arguments: Shape.allCases)
    func oneItemSavedElsewhereIsOneInsert(_ shape: Shape) throws {
        let watched = try startWatching(shape)
        let (stack, frc, recorder) = (watched.stack, watched.frc, watched.recorder)
        try saveElsewhere(stack, into: watched.context) { try insertItem(into: watched.lists.big, in: $0) }
        #expect(counts(recorder) == [.insert: 1])
        #expect(recorder.problems.isEmpty)
        #expect(recorder.state == frc.sectionObjectIDs)
        #expect(try controller(shape, stack.context()).sectionObjectIDs == frc.sectionObjectIDs)
    }

    @Test(arguments: Shape.allCases)
    func oneItemInsertedInTheSameContextIsOneInsert(_ shape: Shape) throws {
        let watched = try startWatching(shape)
        let (frc, recorder) = (watched.frc, watched.recorder)
        try insertItem(into: watched.lists.big, in: watched.context)
        watched.context.processPendingChanges()
        #expect(counts(recorder) == [.insert: 1])
        #expect(recorder.problems.isEmpty)
        #expect(recorder.state == frc.sectionObjectIDs)
    }

    @Test(arguments: Shape.allCases)
    func renamingTheListStillMovesItsRows(_ shape: Shape) throws {
        let watched = try startWatching(shape)
        let (stack, frc, recorder) = (watched.stack, watched.frc, watched.recorder)
        try saveElsewhere(stack, into: watched.context) { writer in
            try writer.existingObject(with: watched.lists.big).setValue("Alpha", forKey: "title")
        }
        switch shape {
        case .predicate:
            // Every item of the list leaves the results.
            #expect(counts(recorder) == [.delete: Self.itemCount])
            #expect(frc.fetchedObjects?.isEmpty == true)
        case .section:
            // Every item of the list moves to the new section "Alpha", first.
            #expect(counts(recorder) == [.move: Self.itemCount])
            #expect(frc.sections?.map(\.name) == ["Alpha", "Small"])
        }
        #expect(recorder.problems.isEmpty)
        #expect(recorder.state == frc.sectionObjectIDs)
        #expect(try controller(shape, stack.context()).sectionObjectIDs == frc.sectionObjectIDs)
    }
}
