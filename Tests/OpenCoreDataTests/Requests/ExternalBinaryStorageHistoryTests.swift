import Foundation
import Testing
@testable import OpenCoreData

/// Persistent history of attributes kept outside their rows (`allowsExternalBinaryDataStorage`): a delete's
/// tombstone holds the bytes the object had, not the column's stored form (marker and bytes, or the name of
/// a file the delete removes), for saves and batch deletes alike; updates name the attribute.
@Suite struct ExternalBinaryStorageHistoryTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Photo") {
                Attribute("name", .string) { $0.preservesValueInHistoryOnDeletion = true }
                Attribute("image", .binaryData) {
                    $0.allowsExternalBinaryDataStorage = true
                    $0.preservesValueInHistoryOnDeletion = true
                }
            }
        }
    }

    static func bytes(_ count: Int, seed: UInt8) -> Data { ExternalBinaryStorageTests.bytes(count, seed: seed) }

    /// One value in a file, one inline, one nil.
    static let images: [String: Data?] = [
        "file": bytes(200_000, seed: 71), "inline": bytes(30, seed: 72), "none": nil,
    ]

    /// A store at `url` with history, holding a photo per entry of `images`, and a context on it.
    static func context(at url: URL) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        for (name, image) in images.sorted(by: { $0.key < $1.key }) {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(image, forKey: "image")
        }
        try context.save()
        return context
    }

    /// The delete changes of the last transaction: each tombstone's image by its name.
    static func deletedImages(_ context: ManagedObjectContext) throws -> [String: PersistentHistoryChange.TombstoneValue] {
        let result = try #require(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as? PersistentHistoryResult)
        let last = try #require(result.transactions.last?.changes)
        var images: [String: PersistentHistoryChange.TombstoneValue] = [:]
        for change in last where change.changeType == .delete {
            let tombstone = try #require(change.tombstone)
            guard case .text(let name) = try #require(tombstone["name"]) else {
                Issue.record("tombstone without a name: \(tombstone)")
                continue
            }
            images[name] = tombstone["image"]
        }
        return images
    }

    static func expectedTombstones() -> [String: PersistentHistoryChange.TombstoneValue] {
        images.mapValues { image -> PersistentHistoryChange.TombstoneValue in
            guard let image else { return .null }
            return .data(image)
        }
    }

    static func folderEntries(_ url: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: ExternalBinaryStorage.directory(forStoreAt: url).path)) ?? []
    }

    @Test func aSavedDeleteKeepsTheBytesInItsTombstone() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Photos.sqlite")
        let context = try Self.context(at: url)
        #expect(Self.folderEntries(url).count == 1)
        for photo in try context.fetch(FetchRequest<ManagedObject>(entityName: "Photo")) { context.delete(photo) }
        try context.save()

        #expect(try Self.deletedImages(context) == Self.expectedTombstones())
        #expect(Self.folderEntries(url).isEmpty, "the deleted value's file is removed after the commit")
    }

    @Test func aBatchDeleteKeepsTheBytesInItsTombstone() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Photos.sqlite")
        let context = try Self.context(at: url)
        _ = try context.execute(BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Photo")))

        #expect(try Self.deletedImages(context) == Self.expectedTombstones())
        #expect(Self.folderEntries(url).isEmpty)
    }

    @Test func anUpdateNamesTheAttributeAndALaterDeleteKeepsTheNewBytes() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Photos.sqlite")
        let context = try Self.context(at: url)
        let request = FetchRequest<ManagedObject>(entityName: "Photo")
        request.predicate = try QueryPredicate(format: "name == 'inline'")
        let photo = try #require(try context.fetch(request).first)
        try photo.setValue(Self.bytes(150_000, seed: 73), forKey: "image")
        try context.save()
        let result = try #require(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)) as? PersistentHistoryResult)
        let changes = try #require(result.transactions.last?.changes)
        #expect(changes.count == 1)
        #expect(changes.first?.updatedProperties == ["image"])

        context.delete(photo)
        try context.save()
        #expect(try Self.deletedImages(context) == ["inline": .data(Self.bytes(150_000, seed: 73))])
    }
}
