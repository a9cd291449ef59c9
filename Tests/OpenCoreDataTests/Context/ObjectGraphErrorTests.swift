import Foundation
import Testing
@testable import OpenCoreData

/// Each refusal of a malformed request names its culprit in a case of its own, on a real SQLite store.
@Suite struct ObjectGraphErrorTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Shape", abstract: true) {
                Attribute("name", .string)
            }
            EntityDescription("Circle", parent: "Shape") {
                Attribute("radius", .double)
            }
        }
    }

    final class UnrunnableRequest: PersistentStoreRequest, @unchecked Sendable {
        var affectedStores: [PersistentStore] = []
    }

    @Test func anAbstractEntityIsRefusedByNameForInsertsAndBatchInserts() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        expectObjectGraphError(.abstractEntity(name: "Shape")) { try context.insertNewObject(forEntityName: "Shape") }
        expectObjectGraphError(.abstractEntity(name: "Shape")) {
            try context.execute(BatchInsertRequest(entityName: "Shape", objects: [["name": "s"]]))
        }
        _ = try context.insertNewObject(forEntityName: "Circle")
        try context.save()
        #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Shape")) == 1)
    }

    @Test func aNegativeFetchBoundIsNamedWithItsValue() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        for (bound, set) in [("fetchLimit", { (r: FetchRequest<ManagedObject>) in r.fetchLimit = -2 }),
                             ("fetchOffset", { r in r.fetchOffset = -2 }),
                             ("fetchBatchSize", { r in r.fetchBatchSize = -2 })] {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            set(request)
            expectObjectGraphError(.negativeFetchBound(entity: "Item", bound: bound, value: -2)) { try context.fetch(request) }
        }
    }

    @Test func anUnusableFetchItemIsNamedWithItsListAndType() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let fetching = FetchRequest<[String: Any]>(entityName: "Item")
        fetching.resultType = .dictionary
        fetching.propertiesToFetch = ["name", 42]
        expectObjectGraphError(.unsupportedFetchItem(entity: "Item", list: "propertiesToFetch", itemType: "Int")) {
            try context.fetch(fetching)
        }
        let grouping = FetchRequest<[String: Any]>(entityName: "Item")
        grouping.resultType = .dictionary
        grouping.propertiesToFetch = ["name"]
        grouping.propertiesToGroupBy = [3.5]
        expectObjectGraphError(.unsupportedFetchItem(entity: "Item", list: "propertiesToGroupBy", itemType: "Double")) {
            try context.fetch(grouping)
        }
    }

    @Test func aResultTypeTheFetchDoesNotGiveIsNamed() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let ids = FetchRequest<String>(entityName: "Item")
        ids.resultType = .managedObjectID
        expectObjectGraphError(.fetchResultTypeMismatch(entity: "Item", returns: "ManagedObjectID", requested: "String")) {
            try context.fetch(ids)
        }
        let dictionaries = FetchRequest<String>(entityName: "Item")
        dictionaries.resultType = .dictionary
        expectObjectGraphError(.fetchResultTypeMismatch(entity: "Item", returns: "[String: Any]", requested: "String")) {
            try context.fetch(dictionaries)
        }
        let count = FetchRequest<String>(entityName: "Item")
        count.resultType = .count
        expectObjectGraphError(.fetchResultTypeMismatch(entity: "Item", returns: "Int", requested: "String")) {
            try context.fetch(count)
        }
    }

    @Test func aRequestAContextCannotRunIsNamedByType() throws {
        let stack = try TestStack(model: TestModels.todo())
        expectObjectGraphError(.unsupportedRequest(requestType: "UnrunnableRequest")) {
            try stack.context().execute(UnrunnableRequest())
        }
    }

    @Test func anIDOfAnotherModelIsNamed() throws {
        let other = try TestStack(model: TestModels.todo())
        let writer = other.context()
        let item = try writer.insertNewObject(forEntityName: "Item")
        try item.setValue("x", forKey: "name")
        try writer.save()
        let stack = try TestStack(model: TestModels.todo())
        expectObjectGraphError(.foreignObjectID(item.objectID)) { try stack.context().object(with: item.objectID) }
    }

    @Test func storeOpeningRefusalsNameWhatIsWrong() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
        expectObjectGraphError(.missingStoreURL) { try coordinator.addPersistentStore(type: .sqlite) }
        var options = StoreOptions()
        expectObjectGraphError(.unknownStoreOption(name: "NSNoSuchOption")) { try options.setOption(true, forKey: "NSNoSuchOption") }
        let url = TemporaryDirectory().file("m.sqlite")
        expectObjectGraphError(.unsupportedStoreType(name: InMemoryStoreType, operation: "Reading metadata at \(url.path)")) {
            try PersistentStoreCoordinator.metadataForPersistentStore(ofType: InMemoryStoreType, at: url)
        }
        expectObjectGraphError(.unsupportedStoreType(name: InMemoryStoreType, operation: "Replacing store files")) {
            try coordinator.replacePersistentStore(at: url, withPersistentStoreFrom: url, ofType: InMemoryStoreType)
        }
    }

    @Test func metadataAPropertyListCannotHoldIsRefusedAndNothingWritten() throws {
        let stack = try TestStack(model: TestModels.todo())
        let store = try #require(stack.coordinator.persistentStores.first)
        var metadata = try stack.coordinator.metadata(for: store)
        metadata["AppObject"] = NSObject()
        let refusal = #expect(throws: ObjectGraphError.self) { try stack.coordinator.setMetadata(metadata, for: store) }
        guard case .invalidStoreMetadata(let reason) = refusal else {
            Issue.record("not invalidStoreMetadata: \(String(describing: refusal))")
            return
        }
        #expect(!reason.isEmpty)
        #expect(try stack.coordinator.metadata(for: store)["AppObject"] == nil)
    }

    @Test func errorsAgreeOnlyWhenCaseAndCulpritDo() {
        #expect(caseAndCulprit(.abstractEntity(name: "Shape")) == caseAndCulprit(.abstractEntity(name: "Shape")))
        #expect(caseAndCulprit(.abstractEntity(name: "Shape")) != caseAndCulprit(.abstractEntity(name: "Circle")))
        #expect(caseAndCulprit(.unknownStoreOption(name: "A")) != caseAndCulprit(.libraryMetadataKey("A")))
        #expect(caseAndCulprit(.notABatchAttribute(entity: "Item", key: "list", row: 1))
                != caseAndCulprit(.notABatchAttribute(entity: "Item", key: "list", row: nil)))
        #expect(caseAndCulprit(.missingStoreURL) != caseAndCulprit(.batchDeleteWithoutSelection))
    }

    @Test func everyNewMessageNamesItsCulprit() {
        let messages: [(ObjectGraphError, [String])] = [
            (.abstractEntity(name: "Shape"), ["Shape", "abstract"]),
            (.negativeFetchBound(entity: "Item", bound: "fetchOffset", value: -3), ["Item", "fetchOffset", "-3"]),
            (.unsupportedFetchItem(entity: "Item", list: "propertiesToGroupBy", itemType: "Double"),
             ["Item", "propertiesToGroupBy", "Double"]),
            (.fetchResultTypeMismatch(entity: "Item", returns: "Int", requested: "String"), ["Item", "Int", "String"]),
            (.unsupportedRequest(requestType: "Odd"), ["Odd"]),
            (.notABatchAttribute(entity: "Item", key: "list", row: nil), ["Item.list", "batch update"]),
            (.notABatchAttribute(entity: "Item", key: "list", row: 7), ["Row 7", "Item.list", "batch insert"]),
            (.unsupportedBatchValue(entity: "Photo", key: "image", reason: "why"), ["Photo.image", "why"]),
            (.emptyBatchUpdate(entity: "Item"), ["Item", "propertiesToUpdate"]),
            (.batchDeleteWithoutSelection, ["batch delete"]),
            (.notATransformableAttribute(entity: "Book", key: "title"), ["Book.title", "Transformable"]),
            (.fetchedPropertyOnStoredRows(entity: "Tag", key: "same"), ["Tag.same", "fetched property"]),
            (.unknownStoreOption(name: "NSOdd"), ["NSOdd"]),
            (.invalidStoreOption(name: "NSOdd", value: "String", expected: "a boolean"), ["NSOdd", "String", "a boolean"]),
            (.unsupportedStoreType(name: "Binary", operation: nil), ["Binary", SQLiteStoreType]),
            (.unsupportedStoreType(name: "InMemory", operation: "Replacing store files"),
             ["InMemory", "Replacing store files", SQLiteStoreType]),
            (.libraryMetadataKey("NSStoreUUID"), ["NSStoreUUID"]),
            (.invalidStoreMetadata(reason: "bad value"), ["bad value"]),
            (.unknownConfiguration("Cloud"), ["Cloud"]),
            (.missingStoreURL, ["URL"]),
            (.storeModelMismatch(path: "/tmp/x.sqlite"), ["/tmp/x.sqlite", "another model"]),
        ]
        for (error, parts) in messages {
            for part in parts { #expect(error.description.contains(part), "\(error.description) lacks \(part)") }
        }
    }
}
