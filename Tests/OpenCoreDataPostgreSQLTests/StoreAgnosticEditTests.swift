import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Random edits through contexts (inserts, renames, relationship changes, deletes with their rules, edits in
/// a child context) applied alike to an SQLite file and to a PostgreSQL schema. After every save each store
/// holds what a naive model of the edits holds, and a results controller kept current by its change reports
/// lists what a fresh fetch lists.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct StoreAgnosticEditTests {
    /// The naive model: books by title, authors by name (ShelfModel: an author's books go with it, a deleted
    /// book leaves its tags).
    struct Shelf: Equatable {
        struct Book: Equatable { var pages: Int64; var author: String?; var tags: Set<String> }
        var books: [String: Book] = [:]
        var authors: Set<String> = []

        /// One line per book, as `snapshot(_:)` reads the store.
        var lines: [String] {
            books.map { title, book in
                "\(title) \(book.pages) by \(book.author ?? "-") [\(book.tags.sorted().joined(separator: ","))]"
            }.sorted()
        }
    }

    enum Edit {
        case insertBook(String, pages: Int64, author: String?, tags: [String])
        case insertAuthor(String)
        case setPages(String, Int64)
        case rename(String, to: String)
        case setAuthor(String, String?)
        case toggleTag(String, String)
        case deleteBook(String)
        case deleteAuthor(String)

        func apply(to shelf: inout Shelf) {
            switch self {
            case let .insertBook(title, pages, author, tags): shelf.books[title] = .init(pages: pages, author: author, tags: Set(tags))
            case let .insertAuthor(name): shelf.authors.insert(name)
            case let .setPages(title, pages): shelf.books[title]?.pages = pages
            case let .rename(title, new): shelf.books[new] = shelf.books.removeValue(forKey: title)
            case let .setAuthor(title, author): shelf.books[title]?.author = author
            case let .toggleTag(title, tag):
                if shelf.books[title]?.tags.remove(tag) == nil { shelf.books[title]?.tags.insert(tag) }
            case let .deleteBook(title): shelf.books[title] = nil
            case let .deleteAuthor(name):
                shelf.authors.remove(name)
                shelf.books = shelf.books.filter { $0.value.author != name }
            }
        }
    }

    static let tagLabels = ["red", "green", "blue"]

    /// An edit that makes sense on `shelf`, with fresh titles and names drawn from `counter`.
    static func edit(_ shelf: Shelf, _ random: inout SplitMix, _ counter: inout Int) -> Edit {
        let titles = shelf.books.keys.sorted(), authors = shelf.authors.sorted()
        func author() -> String? { authors.isEmpty || random.next(4) == 0 ? nil : authors[random.next(authors.count)] }
        counter += 1
        // Titles of mixed case and accents, so the controller's order is the store's text order.
        let stems = ["b", "B", "é", "E", "z"]
        let fresh = "\(stems[random.next(stems.count)])\(counter)"
        guard !titles.isEmpty else {
            return random.next(3) == 0 ? .insertAuthor("Author \(counter)") : .insertBook(fresh, pages: Int64(random.next(50)), author: author(), tags: [])
        }
        let title = titles[random.next(titles.count)]
        switch random.next(16) {
        case 0...3: return .insertBook(fresh, pages: Int64(random.next(50)), author: author(),
                                       tags: tagLabels.filter { _ in random.next(2) == 0 })
        case 4: return .insertAuthor("Author \(counter)")
        case 5...7: return .setPages(title, Int64(random.next(50)))
        case 8: return .rename(title, to: fresh)
        case 9, 10: return .setAuthor(title, author())
        case 11, 12: return .toggleTag(title, tagLabels[random.next(tagLabels.count)])
        case 13, 14: return .deleteBook(title)
        default: return authors.isEmpty ? .deleteBook(title) : .deleteAuthor(authors[random.next(authors.count)])
        }
    }

    /// Finds objects by their key (a book's title, an author's name) in a context, saved or not.
    static func object(_ entity: String, _ key: String, _ value: String, in context: ManagedObjectContext) throws -> ManagedObject {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try QueryPredicate(format: "%K == %@", argumentArray: [key, value])
        let found = try context.fetch(request)
        try #require(found.count == 1, "\(entity) \(value): \(found.count) found")
        return found[0]
    }

    static func apply(_ edit: Edit, in context: ManagedObjectContext) throws {
        func book(_ title: String) throws -> ManagedObject { try object("Book", "title", title, in: context) }
        func author(_ name: String?) throws -> ManagedObject? { try name.map { try object("Author", "name", $0, in: context) } }
        switch edit {
        case let .insertBook(title, pages, authorName, tags):
            let book = try context.insertNewObject(forEntityName: "Book")
            try book.setValue(title, forKey: "title")
            try book.setValue(pages, forKey: "pages")
            try book.setValue(author(authorName), forKey: "author")
            try book.setValue(Set(tags.map { try object("Tag", "label", $0, in: context) }), forKey: "tags")
        case let .insertAuthor(name):
            try context.insertNewObject(forEntityName: "Author").setValue(name, forKey: "name")
        case let .setPages(title, pages): try book(title).setValue(pages, forKey: "pages")
        case let .rename(title, new): try book(title).setValue(new, forKey: "title")
        case let .setAuthor(title, name): try book(title).setValue(author(name), forKey: "author")
        case let .toggleTag(title, label):
            let book = try book(title), tag = try object("Tag", "label", label, in: context)
            var tags = try #require(book.value(forKey: "tags") as? Set<ManagedObject>)
            if tags.remove(tag) == nil { tags.insert(tag) }
            try book.setValue(tags, forKey: "tags")
        case let .deleteBook(title): context.delete(try book(title))
        case let .deleteAuthor(name): context.delete(try #require(try author(name)))
        }
    }

    /// The store's books as `Shelf.lines` spells them, read by a context of a new coordinator.
    static func snapshot(_ location: SharedStoreLocation) throws -> [String] {
        let context = try location.context()
        return try context.fetch(FetchRequest<ManagedObject>(entityName: "Book")).map { book in
            let title = try #require(book.value(forKey: "title") as? String)
            let pages = try #require(book.value(forKey: "pages") as? Int64)
            let author = try (book.value(forKey: "author") as? ManagedObject)?.value(forKey: "name") as? String
            let tags = try #require(book.value(forKey: "tags") as? Set<ManagedObject>).map { try #require($0.value(forKey: "label") as? String) }
            return "\(title) \(pages) by \(author ?? "-") [\(tags.sorted().joined(separator: ","))]"
        }.sorted()
    }

    /// Books with fewer than 30 pages in sections by author, by title within one: what the controller lists,
    /// section by section.
    static func controllerRequest() throws -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Book")
        request.predicate = try QueryPredicate(format: "pages < 30")
        request.sortDescriptors = [QuerySortDescriptor(key: "author.name", ascending: true), QuerySortDescriptor(key: "title", ascending: true)]
        return request
    }

    static func listing(_ controller: FetchedResultsController<ManagedObject>) throws -> [String] {
        try (controller.sections ?? []).flatMap { section in
            try section.objects().map { "\(section.name): \(try #require($0.value(forKey: "title") as? String))" }
        }
    }

    /// One store's side of the test: its location, the context edits go through and a controller on it.
    struct Side {
        let location: SharedStoreLocation
        let context: ManagedObjectContext
        let controller: FetchedResultsController<ManagedObject>

        init(_ kind: StoreKind, model: ManagedObjectModel) throws {
            location = try SharedStoreLocation(kind, model: model)
            context = try location.context()
            for label in StoreAgnosticEditTests.tagLabels {
                try context.insertNewObject(forEntityName: "Tag").setValue(label, forKey: "label")
            }
            try context.save()
            controller = try FetchedResultsController(fetchRequest: StoreAgnosticEditTests.controllerRequest(), managedObjectContext: context,
                                                      sectionNameKeyPath: "author.name", cacheName: nil)
            try controller.performFetch()
        }

        /// Applies edits in the main context, or in a child of it saved into it, then saves.
        func apply(_ edits: [Edit], inChild: Bool) throws {
            if inChild {
                let child = ManagedObjectContext(concurrencyType: .confinement)
                child.parent = context
                for edit in edits { try StoreAgnosticEditTests.apply(edit, in: child) }
                try child.save()
            } else {
                for edit in edits { try StoreAgnosticEditTests.apply(edit, in: context) }
            }
            try context.save()
        }

        /// The controller's listing next to a fresh fetch's, grouped the same way.
        func listings() throws -> (kept: [String], fresh: [String]) {
            let fresh = try FetchedResultsController(fetchRequest: StoreAgnosticEditTests.controllerRequest(), managedObjectContext: location.context(),
                                                     sectionNameKeyPath: "author.name", cacheName: nil)
            try fresh.performFetch()
            return (try StoreAgnosticEditTests.listing(controller), try StoreAgnosticEditTests.listing(fresh))
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomEditsLeaveBothStoresAsTheModelSaysAndControllersCurrent(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let model = try ShelfModel.make()
        let sides = try [Side(.sqlite, model: model), Side(.postgreSQL, model: model)]
        var shelf = Shelf(), counter = 0, largest = 0
        for round in 0..<40 {
            var edits: [Edit] = []
            for _ in 0..<(1 + random.next(6)) {
                let edit = Self.edit(shelf, &random, &counter)
                edit.apply(to: &shelf)
                edits.append(edit)
            }
            largest = max(largest, shelf.books.count)
            let inChild = random.next(3) == 0
            var listings: [[String]] = []
            for side in sides {
                try side.apply(edits, inChild: inChild)
                #expect(try Self.snapshot(side.location) == shelf.lines, "\(side.location.kind), round \(round): \(edits)")
                let (kept, fresh) = try side.listings()
                #expect(kept == fresh, "\(side.location.kind), round \(round): the controller's list after \(edits)")
                listings.append(fresh)
            }
            #expect(listings[0] == listings[1], "round \(round): SQLite and PostgreSQL list differently after \(edits)")
        }
        #expect(largest >= 10, "the edits should build a shelf worth comparing")
    }
}
