import Foundation
@testable import OpenCoreData

/// Models and stores the tests share.
enum TestModels {
    /// Lists and items (one-to-many, cascade), tags (many-to-many), every attribute type on Item.
    static func todo() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("TodoList") {
                Attribute("title", .string, optional: false)
                ToMany("items", "Item", inverse: "list", deleteRule: .cascade)
            }
            EntityDescription("Item") {
                Attribute("name", .string, optional: false) { $0.maxLength = 40 }
                Attribute("createdAt", .date)
                Attribute("done", .boolean, default: false)
                Attribute("priority", .integer16, default: Int16(0)) { $0.minValue = 0; $0.maxValue = 9 }
                Attribute("count", .integer32)
                Attribute("big", .integer64)
                Attribute("score", .double)
                Attribute("ratio", .float)
                Attribute("price", .decimal)
                Attribute("blob", .binaryData)
                Attribute("uuid", .uuid)
                Attribute("link", .uri)
                Attribute("scratch", .string, transient: true)
                ToOne("list", "TodoList", inverse: "items")
                ToMany("tags", "Tag", inverse: "items")
            }
            EntityDescription("Tag") {
                Attribute("label", .string)
                ToMany("items", "Item", inverse: "tags", deleteRule: .deny)
            }
        }
    }

    /// Seed 004's banks: info with a to-one details.
    static func banks() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("FailedBankInfo") {
                Attribute("name", .string)
                Attribute("city", .string)
                Attribute("state", .string)
                ToOne("details", "FailedBankDetails", inverse: "info", deleteRule: .cascade)
            }
            EntityDescription("FailedBankDetails") {
                Attribute("closeDate", .date)
                Attribute("updatedDate", .date)
                Attribute("zip", .integer32)
                ToOne("info", "FailedBankInfo", inverse: "details")
            }
        }
    }
}

/// A temporary folder removed when the value goes away.
final class TemporaryDirectory {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}

/// A coordinator on a fresh store file, and helpers to make contexts on it.
struct TestStack {
    let directory = TemporaryDirectory()
    let model: ManagedObjectModel
    let coordinator: PersistentStoreCoordinator
    let url: URL

    init(model: ManagedObjectModel, inMemory: Bool = false) throws {
        self.model = model
        coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        url = directory.file("Test.sqlite")
        if inMemory {
            try coordinator.addPersistentStore(type: .inMemory)
        } else {
            try coordinator.addPersistentStore(type: .sqlite, at: url)
        }
    }

    func context(_ type: ManagedObjectContext.ConcurrencyType = .confinement) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: type)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// A context on a new coordinator over the same store file: nothing cached from the writer.
    func freshContext() throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return context
    }
}

extension FetchRequest where Result == ManagedObject {
    /// The to-do model's items by name, read `batchSize` at a time (0: all at once).
    static func itemsByName(batchSize: Int = 0) -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        request.fetchBatchSize = batchSize
        return request
    }
}
