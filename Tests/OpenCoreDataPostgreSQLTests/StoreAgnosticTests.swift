import Foundation
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Which store a store-agnostic test runs on.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgreSQL
    var testDescription: String { rawValue }
}

/// One store of either kind that several coordinators can open (a file, or a schema of the test server),
/// removed when the test ends.
final class SharedStoreLocation: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    let kind: StoreKind
    let model: ManagedObjectModel
    let options: StoreOptions
    private let folder: URL?
    private let configuration: PostgreSQLStoreConfiguration?

    init(_ kind: StoreKind, model: ManagedObjectModel, options: StoreOptions = StoreOptions()) throws {
        self.kind = kind
        self.model = model
        self.options = options
        switch kind {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-agnostic-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            self.folder = folder
            configuration = nil
        case .postgreSQL:
            folder = nil
            configuration = try PostgreSQLTestServer.freshConfiguration()
        }
    }

    deinit {
        if let folder { try? FileManager.default.removeItem(at: folder) }
        if let configuration { PostgreSQLTestServer.drop(configuration) }
    }

    /// A new coordinator with the store added, as an app opens it (with the location's options, or others).
    func coordinator(options: StoreOptions? = nil) throws -> PersistentStoreCoordinator {
        let options = options ?? self.options
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        switch kind {
        case .sqlite: try coordinator.addPersistentStore(type: .sqlite, at: folder!.appendingPathComponent("Store.sqlite"), options: options)
        case .postgreSQL: try coordinator.addPersistentStore(configuration: configuration!, options: options)
        }
        return coordinator
    }

    /// A context on a new coordinator (nothing cached from other contexts).
    func context(_ type: ManagedObjectContext.ConcurrencyType = .confinement) throws -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: type)
        context.persistentStoreCoordinator = try coordinator()
        return context
    }
}

/// The kinds to run on: SQLite always, PostgreSQL when a server is configured.
let agnosticKinds: [StoreKind] = PostgreSQLTestServer.isAvailable ? [.sqlite, .postgreSQL] : [.sqlite]

/// A library with delete rules: an author's books go with it (cascade), a book leaves its tags (nullify).
enum ShelfModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Author", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "born", type: .integer64),
                RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "author", deleteRule: .cascade),
            ]),
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "pages", type: .integer64),
                AttributeDescription(name: "price", type: .double),
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "books"),
            ]),
            EntityDescription(name: "Tag", properties: [
                AttributeDescription(name: "label", type: .string),
                RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "tags"),
            ]),
        ])
    }

    /// Three authors, twelve books with pages 100, 110, …, three tags; book i is by author i % 3 and tagged
    /// with tag i % 3 and, for even i, tag (i + 1) % 3.
    static func seed(_ context: ManagedObjectContext) throws {
        let authors = try (0..<3).map { index in
            let author = try context.insertNewObject(forEntityName: "Author")
            try author.setValue("Author \(index)", forKey: "name")
            try author.setValue(Int64(1900 + index), forKey: "born")
            return author
        }
        let tags = try ["red", "green", "blue"].map { label in
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue(label, forKey: "label")
            return tag
        }
        for index in 0..<12 {
            let book = try context.insertNewObject(forEntityName: "Book")
            try book.setValue("Book \(String(format: "%02d", index))", forKey: "title")
            try book.setValue(Int64(100 + 10 * index), forKey: "pages")
            try book.setValue(Double(index) + 0.5, forKey: "price")
            try book.setValue(authors[index % 3], forKey: "author")
            var bookTags: Set<ManagedObject> = [tags[index % 3]]
            if index % 2 == 0 { bookTags.insert(tags[(index + 1) % 3]) }
            try book.setValue(bookTags, forKey: "tags")
        }
        try context.save()
    }
}

func titles<Objects: Sequence<ManagedObject>>(_ objects: Objects) throws -> [String] {
    try objects.map { try #require($0.value(forKey: "title") as? String) }
}

func bookRequest(_ format: String? = nil, sortedBy key: String = "title", ascending: Bool = true) throws -> FetchRequest<ManagedObject> {
    let request = FetchRequest<ManagedObject>(entityName: "Book")
    if let format { request.predicate = try QueryPredicate(format: format) }
    request.sortDescriptors = [QuerySortDescriptor(key: key, ascending: ascending)]
    return request
}

/// Contexts, requests, merge policies and results controllers behave the same on an SQLite file and on a
/// PostgreSQL server, through the same coordinator API (the store boundary, docs/ARCHITECTURE.md).
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct StoreAgnosticTests {
    @Test(arguments: agnosticKinds)
    func insertSaveAndFetchWithPredicatesSortsLimitsAndOffsets(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        try ShelfModel.seed(location.context())
        let context = try location.context()
        #expect(try titles(context.fetch(bookRequest("pages >= 150", sortedBy: "pages", ascending: false)))
                == (5..<12).reversed().map { "Book \(String(format: "%02d", $0))" })
        #expect(try titles(context.fetch(bookRequest("author.name == 'Author 1' AND title BEGINSWITH 'Book 0'")))
                == ["Book 01", "Book 04", "Book 07"])
        #expect(try titles(context.fetch(bookRequest("ANY tags.label == 'blue'"))) == ["Book 02", "Book 04", "Book 05", "Book 08", "Book 10", "Book 11"])
        #expect(try titles(context.fetch(bookRequest("title CONTAINS[c] 'BOOK 1'"))) == ["Book 10", "Book 11"])
        let paged = try bookRequest()
        paged.fetchLimit = 3
        paged.fetchOffset = 4
        #expect(try titles(context.fetch(paged)) == ["Book 04", "Book 05", "Book 06"])
        let offsetOnly = try bookRequest()
        offsetOnly.fetchOffset = 10
        #expect(try titles(context.fetch(offsetOnly)) == ["Book 10", "Book 11"])
        let batched = try bookRequest()
        batched.fetchBatchSize = 5
        let all = try context.fetch(batched)
        #expect(all.count == 12)
        #expect(try titles(all) == (0..<12).map { "Book \(String(format: "%02d", $0))" })
        #expect(try context.count(for: bookRequest("price < 3")) == 3)
        let ids = FetchRequest<ManagedObjectID>(entityName: "Book")
        ids.resultType = .managedObjectID
        ids.predicate = try QueryPredicate(format: "pages == 100")
        #expect(try context.fetch(ids).count == 1)
    }

    @Test(arguments: agnosticKinds)
    func faultsAndRelationshipsOfEveryKind(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        try ShelfModel.seed(location.context())
        let context = try location.context()
        let book = try #require(context.fetch(bookRequest("title == 'Book 04'")).first)
        let author = try #require(book.value(forKey: "author") as? ManagedObject)
        #expect(try author.value(forKey: "name") as? String == "Author 1")
        let written = try #require(author.value(forKey: "books") as? Set<ManagedObject>)
        #expect(try titles(Array(written)).sorted() == ["Book 01", "Book 04", "Book 07", "Book 10"])
        let tags = try #require(book.value(forKey: "tags") as? Set<ManagedObject>)
        #expect(try tags.map { try #require($0.value(forKey: "label") as? String) }.sorted() == ["blue", "green"])
        let red = try #require(context.fetch({
            let request = FetchRequest<ManagedObject>(entityName: "Tag")
            request.predicate = try QueryPredicate(format: "label == 'red'")
            return request
        }()).first)
        let redBooks = try #require(red.value(forKey: "books") as? Set<ManagedObject>)
        #expect(try titles(Array(redBooks)).sorted() == ["Book 00", "Book 02", "Book 03", "Book 06", "Book 08", "Book 09"])
        // Changing a many-to-many and a to-one and reading them back through another coordinator.
        try book.setValue(Set([red]), forKey: "tags")
        try book.setValue(nil, forKey: "author")
        try context.save()
        let other = try location.context()
        let reread = try #require(other.fetch(bookRequest("title == 'Book 04'")).first)
        #expect(try reread.value(forKey: "author") == nil)
        let rereadTags = try #require(reread.value(forKey: "tags") as? Set<ManagedObject>)
        #expect(try rereadTags.map { try $0.value(forKey: "label") as? String } == ["red"])
    }

    @Test(arguments: agnosticKinds)
    func countsAndDictionaryResults(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        try ShelfModel.seed(location.context())
        let context = try location.context()
        let request = FetchRequest<[String: Any]>(entityName: "Book")
        request.resultType = .dictionary
        request.propertiesToFetch = [
            "author.name",
            ExpressionDescription(name: "total", expression: try QueryExpression(format: "sum:(pages)"), resultType: .integer64),
            ExpressionDescription(name: "books", expression: try QueryExpression(format: "count:(title)"), resultType: .integer64),
        ]
        request.propertiesToGroupBy = ["author.name"]
        request.sortDescriptors = [QuerySortDescriptor(key: "author.name")]
        let rows = try context.fetch(request)
        #expect(rows.map { $0["author.name"] as? String } == ["Author 0", "Author 1", "Author 2"])
        // Author 0: books 0, 3, 6, 9 → pages 100 + 130 + 160 + 190.
        #expect(rows.map { ($0["total"] as? Int64) ?? -1 } == [580, 620, 660])
        #expect(rows.map { ($0["books"] as? Int64) ?? -1 } == [4, 4, 4])
        let plain = FetchRequest<[String: Any]>(entityName: "Book")
        plain.resultType = .dictionary
        plain.propertiesToFetch = ["title", "price"]
        plain.predicate = try QueryPredicate(format: "pages > 180")
        plain.sortDescriptors = [QuerySortDescriptor(key: "price", ascending: false)]
        plain.fetchOffset = 1
        #expect(try context.fetch(plain).map { $0["title"] as? String } == ["Book 10", "Book 09"])
        #expect(try context.count(for: bookRequest("tags.@count == 2")) == 6)
    }

    @Test(arguments: agnosticKinds)
    func deleteRulesCascadeAndNullify(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        try ShelfModel.seed(location.context())
        let context = try location.context()
        let authors = FetchRequest<ManagedObject>(entityName: "Author")
        authors.predicate = try QueryPredicate(format: "name == 'Author 2'")
        context.delete(try #require(context.fetch(authors).first))
        try context.save()
        let other = try location.context()
        #expect(try other.count(for: bookRequest()) == 8)
        #expect(try other.count(for: bookRequest("author.name == 'Author 2'")) == 0)
        let tags = FetchRequest<ManagedObject>(entityName: "Tag")
        tags.sortDescriptors = [QuerySortDescriptor(key: "label")]
        let counts = try other.fetch(tags).map { try ($0.value(forKey: "books") as? Set<ManagedObject>)?.count ?? -1 }
        // Books 2, 5, 8, 11 are gone, and with them their links: blue 6 → 2, green 6 → 6, red 6 → 4.
        #expect(counts == [2, 6, 4])
    }

    /// A uniqueness constraint met against a row another coordinator saved is merged by the policy: one tag
    /// stays, holding the saving context's values (object trump).
    @Test(arguments: agnosticKinds)
    func uniquenessConstraintMergedAgainstAStoredRow(kind: StoreKind) throws {
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "label", type: .string),
            AttributeDescription(name: "weight", type: .integer64),
        ])
        tag.uniquenessConstraints = [["label"]]
        let location = try SharedStoreLocation(kind, model: try ManagedObjectModel(entities: [tag]))
        let first = try location.context()
        let stored = try first.insertNewObject(forEntityName: "Tag")
        try stored.setValue("red", forKey: "label")
        try stored.setValue(Int64(1), forKey: "weight")
        try first.save()
        let second = try location.context()
        second.mergePolicy = .mergeByPropertyObjectTrump
        let duplicate = try second.insertNewObject(forEntityName: "Tag")
        try duplicate.setValue("red", forKey: "label")
        try duplicate.setValue(Int64(2), forKey: "weight")
        try second.save()
        let tags = try location.context().fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
        #expect(tags.count == 1)
        #expect(try tags.first?.value(forKey: "weight") as? Int64 == 2)
    }

    /// Two coordinators edit the same book; the second save meets the first one's version.
    @Test(arguments: agnosticKinds)
    func optimisticLockingWithEveryMergePolicy(kind: StoreKind) throws {
        let policies: [MergePolicy] = [.error, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback]
        for policy in policies {
            let location = try SharedStoreLocation(kind, model: ShelfModel.make())
            try ShelfModel.seed(location.context())
            let first = try location.context(), second = try location.context()
            let mine = try #require(first.fetch(bookRequest("title == 'Book 03'")).first)
            let theirs = try #require(second.fetch(bookRequest("title == 'Book 03'")).first)
            try theirs.setValue(Int64(999), forKey: "pages")
            try theirs.setValue(9.5, forKey: "price")
            try second.save()
            try mine.setValue(Int64(111), forKey: "pages")
            first.mergePolicy = policy
            if policy == .error {
                #expect(throws: ObjectGraphError.self) { try first.save() }
                continue
            }
            try first.save()
            let stored = try #require(location.context().fetch(bookRequest("title == 'Book 03'")).first)
            let pages = try stored.value(forKey: "pages") as? Int64, price = try stored.value(forKey: "price") as? Double
            switch policy {
            case .mergeByPropertyStoreTrump: #expect(pages == 999 && price == 9.5, "\(policy)")
            case .mergeByPropertyObjectTrump: #expect(pages == 111 && price == 9.5, "\(policy)")
            case .overwrite: #expect(pages == 111 && price == 3.5, "\(policy)")
            default: #expect(pages == 999 && price == 9.5, "\(policy)")
            }
        }
    }

    @Test(arguments: agnosticKinds)
    func resultsControllerReportsInsertsUpdatesAndDeletes(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        try ShelfModel.seed(location.context())
        let coordinator = try location.coordinator()
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let request = try bookRequest("pages < 150")
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        let recorder = ChangeRecorder()
        controller.delegate = recorder
        try controller.performFetch()
        #expect(try titles(controller.fetchedObjects.map(Array.init) ?? []) == ["Book 00", "Book 01", "Book 02", "Book 03", "Book 04"])
        let new = try context.insertNewObject(forEntityName: "Book")
        try new.setValue("Book 00a", forKey: "title")
        try new.setValue(Int64(1), forKey: "pages")
        try context.save()
        let third = try #require(controller.fetchedObjects?[3])
        try third.setValue(Int64(149), forKey: "pages")
        context.delete(try #require(controller.fetchedObjects?[0]))
        try context.save()
        #expect(try titles(controller.fetchedObjects.map(Array.init) ?? []) == ["Book 00a", "Book 01", "Book 02", "Book 03", "Book 04"])
        #expect(recorder.changes.contains { $0.type == .insert })
        #expect(recorder.changes.contains { $0.type == .update })
        #expect(recorder.changes.contains { $0.type == .delete })
        // New controllers read the saved state from the store, the second one (same cache name) from the cache
        // file the first wrote, whose token the store computes in the same snapshot as the keys.
        let cacheName = "agnostic-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(at: ResultsCache.fileURL(forName: cacheName)) }
        for _ in 0..<2 {
            let reread = try FetchedResultsController(fetchRequest: try bookRequest("pages < 150"), managedObjectContext: location.context(),
                                                      sectionNameKeyPath: nil, cacheName: cacheName)
            try reread.performFetch()
            #expect(try titles(reread.fetchedObjects.map(Array.init) ?? []) == ["Book 00a", "Book 01", "Book 02", "Book 03", "Book 04"])
        }
    }

    /// Random predicates, sorts, limits and offsets over the same random objects saved to both stores
    /// through contexts: PostgreSQL fetches and counts what SQLite does.
    @Test(.enabled(if: PostgreSQLTestServer.isAvailable), arguments: [1, 2, 3] as [UInt64])
    func postgreSQLFetchesWhatSQLiteFetches(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let model = try ShelfModel.make()
        let sqlite = try SharedStoreLocation(.sqlite, model: model)
        let postgreSQL = try SharedStoreLocation(.postgreSQL, model: model)
        let words = ["alpha", "Beta", "gamma", "DELTA", "Ålesund", "naïve", "x"]
        var books: [(title: String, pages: Int64, price: Double?, author: Int?, tags: [Int])] = []
        for index in 0..<60 {
            books.append(("\(words[random.next(words.count)]) \(index)", Int64(random.next(400)),
                          random.next(5) == 0 ? nil : Double(random.next(1000)) / 8,
                          random.next(4) == 0 ? nil : random.next(4), (0..<random.next(3)).map { _ in random.next(3) }))
        }
        for location in [sqlite, postgreSQL] {
            let context = try location.context()
            let authors = try (0..<4).map { index in
                let author = try context.insertNewObject(forEntityName: "Author")
                try author.setValue("Author \(index)", forKey: "name")
                return author
            }
            let tags = try ["red", "green", "blue"].map { label in
                let tag = try context.insertNewObject(forEntityName: "Tag")
                try tag.setValue(label, forKey: "label")
                return tag
            }
            for book in books {
                let object = try context.insertNewObject(forEntityName: "Book")
                try object.setValue(book.title, forKey: "title")
                try object.setValue(book.pages, forKey: "pages")
                try object.setValue(book.price, forKey: "price")
                try object.setValue(book.author.map { authors[$0] }, forKey: "author")
                try object.setValue(Set(book.tags.map { tags[$0] }), forKey: "tags")
            }
            try context.save()
        }
        let atoms = [
            "pages < %d", "pages >= %d", "pages == %d", "pages != %d", "pages BETWEEN {%d, 300}", "price > %d", "price == nil",
            "title BEGINSWITH[c] 'a'", "title CONTAINS 'a'", "title ENDSWITH '%d'", "title LIKE '*e?a*'", "title ==[c] 'x %d'",
            "author.name == 'Author %d'", "author == nil", "ANY tags.label == 'red'", "tags.@count >= 2", "NONE tags.label == 'blue'",
            "SUBQUERY(tags, $t, $t.label BEGINSWITH 'g').@count > 0", "title IN {'x 3', 'alpha 4', 'Beta 5'}",
        ]
        func atom() -> String {
            atoms[random.next(atoms.count)].replacingOccurrences(of: "%d", with: String(random.next(400)))
        }
        let sorts = [["title"], ["pages", "title"], ["price", "title"], ["author.name", "title"]]
        let sqliteContext = try sqlite.context(), postgreSQLContext = try postgreSQL.context()
        for _ in 0..<60 {
            var format = atom()
            switch random.next(4) {
            case 0: format = "(\(format)) AND (\(atom()))"
            case 1: format = "(\(format)) OR (\(atom()))"
            case 2: format = "NOT (\(format))"
            default: break
            }
            let request = FetchRequest<ManagedObject>(entityName: "Book")
            request.predicate = try QueryPredicate(format: format)
            let keys = sorts[random.next(sorts.count)]
            let ascending = random.next(2) == 0
            request.sortDescriptors = keys.map { QuerySortDescriptor(key: $0, ascending: ascending) }
            if random.next(3) == 0 { request.fetchLimit = 1 + random.next(10) }
            if random.next(3) == 0 { request.fetchOffset = random.next(10) }
            let expected = try titles(sqliteContext.fetch(request))
            #expect(try titles(postgreSQLContext.fetch(request)) == expected, "\(format) sorted by \(keys) \(ascending)")
            #expect(try postgreSQLContext.count(for: request) == sqliteContext.count(for: request), "\(format)")
        }
    }

    /// What the coordinator lists: `persistentStores` every store, `postgreSQLStores` the PostgreSQL ones,
    /// `persistentStoreCount` all of them; a PostgreSQL store opened from a URL serves contexts, and once
    /// removed they have no store.
    @Test func coordinatorListsAndRemovesAPostgreSQLStore() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ShelfModel.make())
        var components = try #require(URLComponents(string: PostgreSQLTestServer.url!))
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "schema", value: configuration.schema)]
        let url = try #require(components.url)
        let store = try coordinator.addPersistentStore(type: .postgreSQL, at: url)
        #expect(coordinator.persistentStores.map(ObjectIdentifier.init) == [ObjectIdentifier(store)])
        #expect(coordinator.postgreSQLStores.map(ObjectIdentifier.init) == [ObjectIdentifier(store)])
        #expect(coordinator.persistentStoreCount == 1)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let author = try context.insertNewObject(forEntityName: "Author")
        try author.setValue("Ada", forKey: "name")
        try context.save()
        #expect(author.objectID.uriRepresentation().host?.caseInsensitiveCompare(store.identifier) == .orderedSame)
        #expect(coordinator.managedObjectID(forURIRepresentation: author.objectID.uriRepresentation()) == author.objectID)
        coordinator.remove(store)
        #expect(coordinator.persistentStoreCount == 0)
        do {
            _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "Author"))
            Issue.record("a context counted without a store")
        } catch ObjectGraphError.noPersistentStore {}
    }

    /// Predicates PostgreSQL cannot say as memory does are answered in the app by fetches, batch updates and
    /// batch deletes.
    @Test func postgreSQLAnswersInTheAppWhatItsSQLCannotSay() throws {
        let location = try SharedStoreLocation(.postgreSQL, model: ShelfModel.make())
        try ShelfModel.seed(location.context())
        let context = try location.context()
        let update = BatchUpdateRequest(entityName: "Book")
        update.predicate = try QueryPredicate(format: "title ==[cd] 'book 01'")
        update.propertiesToUpdate = ["pages": Int64(1)]
        // A batch update selects the rows in the app where the server cannot, then updates them by key.
        #expect((try context.execute(update) as? BatchResult)?.count == 1)
        #expect(try context.count(for: bookRequest("pages == 1")) == 1)
        // A fetch is answered in the app where the server cannot say it alike.
        let folded: [ManagedObject] = try context.fetch(bookRequest("title ==[cd] 'book 01'"))
        #expect(folded.count == 1)
        // A batch delete selects the rows in the app where the server cannot, then deletes them by key.
        let deleted = try context.execute(BatchDeleteRequest(fetchRequest: try bookRequest("title MATCHES 'Book(?= 0).*'")))
        #expect((deleted as? BatchResult)?.count == 10)
        #expect(try context.count(for: bookRequest()) == 2)
    }
}

/// The change feed on PostgreSQL: another coordinator's save (another process's, as far as the store can
/// tell) reaches a watching coordinator as the remote-change notification, merged into a results controller.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLRemoteChangeTests {
    /// Waits for `condition`; the deadline only bounds how long a failure takes.
    static func eventually(_ seconds: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return try condition()
    }

    @Test func anotherCoordinatorsSaveIsNotifiedAndMergedIntoAResultsController() throws {
        let location = try SharedStoreLocation(.postgreSQL, model: ShelfModel.make(),
                                               options: StoreOptions(persistentHistoryTracking: true, remoteChangeNotifications: true))
        let writer = try location.context()
        let first = try writer.insertNewObject(forEntityName: "Book")
        try first.setValue("first", forKey: "title")
        try writer.save()

        let watching = try location.coordinator()
        let notifications = Mutex<[PersistentHistoryToken?]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: PersistentStoreCoordinator.remoteChangeNotification, object: watching, queue: nil) { note in
            let token = note.userInfo?[PersistentStoreCoordinator.historyTokenKey] as? PersistentHistoryToken
            notifications.withLock { $0.append(token) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue)
        reader.persistentStoreCoordinator = watching
        reader.automaticallyMergesChangesFromParent = true
        let controller = try reader.performAndWait {
            let controller = try FetchedResultsController(fetchRequest: try bookRequest(), managedObjectContext: reader,
                                                          sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            return controller
        }
        let second = try writer.insertNewObject(forEntityName: "Book")
        try second.setValue("second", forKey: "title")
        try first.setValue("a first", forKey: "title")
        try writer.save()

        #expect(try Self.eventually {
            try reader.performAndWait { try titles(Array(controller.fetchedObjects.map(Array.init) ?? [])) } == ["a first", "second"]
        })
        #expect(Self.eventually { notifications.withLock { $0.contains { ($0?.transactionNumber ?? 0) >= 2 } } })
        // A save through the watching coordinator reaches the controller as well (from the save itself).
        let own = ManagedObjectContext(concurrencyType: .confinement)
        own.persistentStoreCoordinator = watching
        let third = try own.insertNewObject(forEntityName: "Book")
        try third.setValue("third", forKey: "title")
        try own.save()
        #expect(try Self.eventually {
            try reader.performAndWait { try titles(Array(controller.fetchedObjects.map(Array.init) ?? [])) } == ["a first", "second", "third"]
        })
    }
}

/// Records what a results controller reports.
final class ChangeRecorder: FetchedResultsControllerDelegate, @unchecked Sendable {
    struct Change { var type: FetchedResultsChangeType; var old: IndexPath?; var new: IndexPath? }
    var changes: [Change] = []
    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject,
                    at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        changes.append(Change(type: type, old: indexPath, new: newIndexPath))
    }
}
