import Foundation
import Testing
@testable import OpenCoreData

/// An item whose `awakeFromFetch` loads another object of the same context: an item with an odd key reads
/// the item with the next key (the next row in the results, in the same batch). It keeps what it read.
final class PairedItem: ManagedObject {
    override class var entityName: String { "Item" }
    var partner: ManagedObject?
    var awakeCount = 0

    override func awakeFromFetch() {
        awakeCount += 1
        let key = objectID.primaryKey
        guard key % 2 == 1, let context = managedObjectContext, let store = objectID.store else { return }
        partner = try? context.existingObject(with: ManagedObjectID(entity: entity, primaryKey: key + 1, store: store))
    }
}

/// Objects are made, registered and awoken in one place; awake hooks run once their batch is registered, so a
/// hook that loads more objects of the same context finds the batch's objects and never makes a second object
/// for one of its rows.
@Suite struct ObjectMaterializerTests {
    static let count = 40

    private static func seededStack() throws -> TestStack {
        let model = try ManagedObjectModel {
            EntityDescription("Item", class: PairedItem.self) {
                Attribute("name", .string)
                Attribute("order", .integer64)
            }
        }
        let stack = try TestStack(model: model)
        let writer = stack.context()
        for index in 0..<count {
            let item = try writer.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(index)", forKey: "name")
            try item.setValue(Int64(index), forKey: "order")
        }
        try writer.save()
        return stack
    }

    private static func byOrder(batchSize: Int) -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "order")]
        request.fetchBatchSize = batchSize
        return request
    }

    /// Each object is the context's one object for its ID, awoken once, and an odd one holds the next one.
    private static func checkPairs(_ objects: [ManagedObject], in context: ManagedObjectContext,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(objects.count == count, sourceLocation: sourceLocation)
        #expect(context.registry.count == count, "objects registered", sourceLocation: sourceLocation)
        #expect(context.registry.invariantViolations() == [], sourceLocation: sourceLocation)
        for (position, object) in objects.enumerated() {
            let item = try #require(object as? PairedItem, sourceLocation: sourceLocation)
            #expect(item.objectID.primaryKey == Int64(position + 1), sourceLocation: sourceLocation)
            #expect(context.registeredObject(for: item.objectID) === item, "position \(position)", sourceLocation: sourceLocation)
            #expect(item.awakeCount == 1, "position \(position) awoken \(item.awakeCount) times", sourceLocation: sourceLocation)
            #expect(try item.value(forKey: "name") as? String == "Item \(position)", sourceLocation: sourceLocation)
            if position % 2 == 0 {
                #expect(item.partner === objects[position + 1], "position \(position)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func awakeHookLoadingMoreObjectsDuringAFetch() throws {
        let stack = try Self.seededStack()
        let context = stack.context()
        let objects: [ManagedObject] = try context.fetch(Self.byOrder(batchSize: 0))
        try Self.checkPairs(objects, in: context)
    }

    @Test func awakeHookLoadingMoreObjectsDuringABatchedFetch() throws {
        let stack = try Self.seededStack()
        let context = stack.context()
        let results: FetchResults<ManagedObject> = try context.fetch(Self.byOrder(batchSize: 10))
        try Self.checkPairs(Array(results), in: context)
    }

    @Test func awakeHookLoadingMoreObjectsDuringAControllerBatch() throws {
        let stack = try Self.seededStack()
        let context = stack.context()
        let controller = try FetchedResultsController(fetchRequest: Self.byOrder(batchSize: 10), managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        let objects = try (0..<Self.count).map { try controller.object(at: IndexPath(item: $0, section: 0)) }
        try Self.checkPairs(objects, in: context)
    }

    @Test func awakeHookLoadingMoreObjectsDuringABatchByID() throws {
        let stack = try Self.seededStack()
        let context = stack.context()
        let ids = try context.fetch(Self.byOrder(batchSize: 0)).map(\.objectID)
        let fresh = stack.context()
        let objects = try fresh.materializer.loadBatch(ids.map { ManagedObjectID(entity: $0.entity, primaryKey: $0.primaryKey, store: $0.store) })
        try Self.checkPairs(objects, in: fresh)
    }

    @Test func awakeHookLoadingMoreObjectsDuringAnAsynchronousFetch() async throws {
        let stack = try Self.seededStack()
        let context = stack.context(.privateQueue)
        let objects = try await context.fetchInBackground(Self.byOrder(batchSize: 0))
        try context.performAndWait { try Self.checkPairs(objects, in: context) }
    }
}

/// State kept in stored properties set by the lifecycle hooks, and a class that does not opt in to reuse.
class HookedItem: ManagedObject {
    override class var entityName: String { "Item" }
    var awokenKey: Int64 = 0
    var insertedHere = false

    override func awakeFromFetch() { awokenKey = objectID.primaryKey }

    override func awakeFromInsert() { insertedHere = true }
}

/// The same state, in a class that opts in: what `awakeFromFetch` sets is set anew for each row.
final class ReusableHookedItem: HookedItem {
    override class var allowsInstanceReuse: Bool { true }
}

/// Reuse never carries one object's state into another row's object.
@Suite struct ObjectReuseStateTests {
    private static func stack(objectClass: HookedItem.Type) throws -> TestStack {
        let model = try ManagedObjectModel {
            EntityDescription("Item", class: objectClass) { Attribute("name", .string) }
        }
        let stack = try TestStack(model: model)
        let writer = stack.context()
        for index in 0..<120 {
            let item = try writer.insertNewObject(forEntityName: "Item")
            #expect((item as? HookedItem)?.insertedHere == true)
            try item.setValue(String(format: "Item %03d", index), forKey: "name")
        }
        try writer.save()
        return stack
    }

    /// Moves through every row twice, a batch of 10 at a time, checking each object's hook state.
    private static func walk(_ stack: TestStack, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let context = stack.context()
        let controller = try FetchedResultsController(fetchRequest: FetchRequest.itemsByName(batchSize: 10),
                                                      managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        for round in 0..<2 {
            for position in 0..<120 {
                let object = try controller.object(at: IndexPath(item: position, section: 0))
                let item = try #require(object as? HookedItem, sourceLocation: sourceLocation)
                #expect(try item.value(forKey: "name") as? String == String(format: "Item %03d", position),
                        sourceLocation: sourceLocation)
                #expect(item.awokenKey == item.objectID.primaryKey, "round \(round), position \(position)",
                        sourceLocation: sourceLocation)
                #expect(!item.insertedHere, "round \(round), position \(position)", sourceLocation: sourceLocation)
            }
        }
        #expect(context.registry.invariantViolations() == [], sourceLocation: sourceLocation)
        return context.spares.reusedCount
    }

    @Test func hookStateOfAClassNotOptingInIsNeverReused() throws {
        #expect(try Self.walk(Self.stack(objectClass: HookedItem.self)) == 0)
    }

    @Test func hookStateOfAClassOptingInIsSetAnewForEachRow() throws {
        #expect(try Self.walk(Self.stack(objectClass: ReusableHookedItem.self)) > 0)
    }

    @Test func objectsInsertedAndSavedInTheContextKeepTheirInsertState() throws {
        let stack = try Self.stack(objectClass: ReusableHookedItem.self)
        let context = stack.context()
        var inserted: [HookedItem] = []
        for index in 0..<5 {
            let item = try #require(context.insertNewObject(forEntityName: "Item") as? HookedItem)
            try item.setValue(String(format: "New %03d", index), forKey: "name")
            inserted.append(item)
        }
        try context.save()
        let controller = try FetchedResultsController(fetchRequest: FetchRequest.itemsByName(batchSize: 10),
                                                      managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        for position in 0..<125 {
            let item = try #require(try controller.object(at: IndexPath(item: position, section: 0)) as? HookedItem)
            let isNew = (try item.value(forKey: "name") as? String)?.hasPrefix("New") == true
            #expect(item.insertedHere == isNew, "position \(position)")
            if !isNew { #expect(item.awokenKey == item.objectID.primaryKey, "position \(position)") }
        }
        #expect(inserted.allSatisfy { $0.insertedHere && $0.managedObjectContext === context })
    }
}
