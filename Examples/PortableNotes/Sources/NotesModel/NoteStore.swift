import Foundation

/// The notes of one store file: Core Data code that builds against Core Data and OpenCoreData alike.
// @unchecked Sendable: its one property is the container, which both frameworks make safe to use from any
// thread (OpenCoreData's is Sendable; not every Core Data SDK says so).
public final class NoteStore: @unchecked Sendable {
    public let container: NSPersistentContainer

    /// Opens (or creates) the store at `url`.
    ///
    /// - Throws: when the model is missing or the store cannot be opened.
    public init(url: URL) throws {
        container = NSPersistentContainer(name: "Notes", managedObjectModel: try .named("Notes", in: .module))
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: url)]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        container.viewContext.automaticallyMergesChangesFromParent = true
    }

    /// Adds a note on the view context and saves it.
    ///
    /// - Throws: the save's error.
    @discardableResult
    public func add(title: String) throws -> Note {
        let context = container.viewContext
        let note = try Note(context: context)
        note.title = title
        note.createdAt = Date()
        try context.save()
        return note
    }

    /// Imports titles on a background context.
    ///
    /// - Throws: the save's error.
    public func importTitles(_ titles: [String]) async throws {
        try await container.performBackgroundTask { context in
            for title in titles {
                let note = try Note(context: context)
                note.title = title
                note.createdAt = Date()
            }
            try context.save()
        }
    }

    /// The notes whose title contains `text` (all without one), in the order people read titles in.
    ///
    /// - Throws: the fetch's error.
    public func notes(containing text: String? = nil) throws -> [Note] {
        let request = NSFetchRequest<Note>(entityName: "Note")
        if let text { request.predicate = try NSPredicate(format: "title CONTAINS[cd] %@", text) }
        request.sortDescriptors = [try NSSortDescriptor(key: "title", ascending: true, selector: "localizedCaseInsensitiveCompare:")]
        return try container.viewContext.fetch(request)
    }

    /// Brings saves of every other context into `context`, from Core Data's did-save notification.
    public func mergeSaves(into context: NSManagedObjectContext) -> NSObjectProtocol {
        NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: nil, queue: nil) { note in
            guard let saver = note.object as? NSManagedObjectContext, saver !== context,
                  saver.persistentStoreCoordinator === context.persistentStoreCoordinator else { return }
            context.performAndWait { context.mergeChanges(fromContextDidSave: note) }
        }
    }
}
