import Foundation
import Testing
@testable import OpenCoreData

/// `PersistentContainer(name:bundle:)` finds the Xcode data model by name, as `NSPersistentContainer(name:)`
/// finds `<name>.momd`.
@Suite struct ContainerByModelNameTests {
    @Test func aContainerFindsItsModelByNameAndStoresObjects() throws {
        let container = try PersistentContainer(name: "Library", bundle: .module, subdirectory: "Fixtures")
        #expect(container.managedObjectModel.entitiesByName["Book"] != nil)
        let directory = TemporaryDirectory()
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: directory.file("Library.sqlite"))]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        let titles: [String] = try context.performAndWait {
            let book = try context.insertNewObject(forEntityName: "Book")
            // The fixture's Book requires an ISBN of 10 to 13 characters (its other required values have defaults).
            try book.setValue("9780441013593", forKey: "isbn")
            try book.setValue("Dune", forKey: "title")
            try context.save()
            return try context.fetch(FetchRequest<ManagedObject>(entityName: "Book")).compactMap { try $0.value(forKey: "title") as? String }
        }
        #expect(titles == ["Dune"])
    }

    /// A `.xcdatamodel` folder is found as well; this one is malformed XML, and the error says that (not
    /// "not found").
    @Test func aPlainModelFolderIsFoundAndItsDamageReported() throws {
        #expect {
            _ = try ManagedObjectModel(named: "Broken", in: .module, subdirectory: "Fixtures")
        } throws: { error in
            guard case ModelError.malformedModelFile(let path, _) = error else { return false }
            return path.hasSuffix("Broken.xcdatamodel/contents")
        }
    }

    @Test func aMissingModelNamesItselfAndWhereItWasLookedFor() throws {
        do {
            _ = try PersistentContainer(name: "NoSuchModel", bundle: .module, subdirectory: "Fixtures")
            Issue.record("a missing model was accepted")
        } catch let error as ModelError {
            guard case .modelNotFound(let name, let searched) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(name == "NoSuchModel")
            #expect(searched.contains { $0.hasSuffix("Fixtures") })
            #expect("\(error)".contains("NoSuchModel.xcdatamodeld"))
        }
    }
}
