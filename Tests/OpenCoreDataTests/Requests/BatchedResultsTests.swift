import Foundation
import Testing
@testable import OpenCoreData

/// Batched results (`fetchBatchSize`) against a plain fetch: whatever the sort (keys in or out of order),
/// the batch size, the order of access, objects registered before, and rows deleted behind the context's
/// back, every element is the object a plain fetch names, with its values; a deleted row's object is a
/// fault that reports the row gone.
@Suite struct BatchedResultsTests {
    @Test(arguments: [1, 2, 3, 4])
    func batchedElementsMatchAPlainFetch(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let stack = try TestStack(model: TestModels.todo(), inMemory: seed.isMultiple(of: 2))
        let writer = stack.context()
        let count = Int.random(in: 40...160, using: &generator)
        for index in 0..<count {
            let item = try writer.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(Int.random(in: 0..<1_000, using: &generator)) #\(index)", forKey: "name")
        }
        try writer.save()

        let reader = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        // Sorted by name, the keys of a batch are out of key order; unsorted, they are in order.
        if Bool.random(using: &generator) { request.sortDescriptors = [QuerySortDescriptor(key: "name")] }
        request.fetchBatchSize = Int.random(in: 1...25, using: &generator)
        let plainRequest = FetchRequest<ManagedObject>(entityName: "Item")
        plainRequest.sortDescriptors = request.sortDescriptors
        let expected = try stack.context().fetch(plainRequest).map { try ($0.objectID, $0.value(forKey: "name") as! String) }

        let results = try reader.fetch(request)
        #expect(results.count == count)
        // Some objects registered beforehand: their batches take the general path.
        for _ in 0..<3 {
            let id = expected[Int.random(in: 0..<count, using: &generator)].0
            _ = try reader.existingObject(with: id)
        }
        // Some rows deleted in the store after the fetch.
        var deleted = Set<ManagedObjectID>()
        for _ in 0..<Int.random(in: 0...5, using: &generator) {
            let id = expected[Int.random(in: 0..<count, using: &generator)].0
            guard !deleted.contains(id), reader.registeredObject(for: id) == nil else { continue }
            writer.delete(try writer.existingObject(with: id))
            deleted.insert(id)
        }
        try writer.save()

        for index in (0..<count).shuffled(using: &generator) {
            try expectLoadedObject(results[index], in: reader, matching: expected[index], deleted: deleted, position: index)
        }
        // The same element twice is the same object.
        #expect(results[0] === results[0])
    }

    /// Results that outlive their context hand out faults that report the problem when used, one per
    /// position, and the batches read before stay readable.
    @Test func resultsOutlivingTheirContextHandOutFaults() throws {
        let stack = try TestStack(model: TestModels.todo(), inMemory: true)
        let writer = stack.context()
        for index in 0..<30 { try writer.insertNewObject(forEntityName: "Item").setValue("Item \(index)", forKey: "name") }
        try writer.save()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        request.fetchBatchSize = 10
        var context: ManagedObjectContext? = stack.context()
        let results = try #require(context).fetch(request)
        let early = results[3]
        #expect(try early.value(forKey: "name") as? String == "Item 11")
        context = nil
        let late = results[25]
        #expect(late.isFault)
        #expect(throws: ObjectGraphError.self) { try late.value(forKey: "name") }
        #expect(results[25] === late)
        #expect(results[3] === early)
        #expect(try early.value(forKey: "name") as? String == "Item 11")
    }
}
