import Foundation
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// The shelf of `ShelfModel` with the author's books under another delete rule (to see nullify and deny).
enum RuledShelfModel {
    static func make(authorBooks rule: DeleteRule) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Author", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "born", type: .integer64),
                RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "author", deleteRule: rule),
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
}

/// Tags unique by label (one constraint) or by label and, separately, by code (two constraints).
enum UniqueTagModel {
    static func make(constraints: [[String]] = [["label"]]) throws -> ManagedObjectModel {
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "label", type: .string),
            AttributeDescription(name: "code", type: .integer64),
            AttributeDescription(name: "weight", type: .integer64),
        ])
        tag.uniquenessConstraints = constraints
        return try ManagedObjectModel(entities: [tag])
    }

    /// Every tag as "label code weight", sorted.
    static func snapshot(_ context: ManagedObjectContext) throws -> [String] {
        try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).map { tag in
            let label = try tag.value(forKey: "label") as? String ?? "nil"
            let code = try (tag.value(forKey: "code") as? Int64).map(String.init) ?? "nil"
            let weight = try (tag.value(forKey: "weight") as? Int64).map(String.init) ?? "nil"
            return "\(label) \(code) \(weight)"
        }.sorted()
    }
}

/// Every object of a shelf store, spelled out: authors with their books, books with their values, author
/// and tags, tags with their books. Two stores that hold the same graph give the same lines.
func shelfSnapshot(_ context: ManagedObjectContext) throws -> [String] {
    func names(_ value: Any?, key: String) throws -> String {
        let objects = (value as? Set<ManagedObject>) ?? []
        return try objects.map { try $0.value(forKey: key) as? String ?? "nil" }.sorted().joined(separator: ",")
    }
    var lines: [String] = []
    for author in try context.fetch(FetchRequest<ManagedObject>(entityName: "Author")) {
        lines.append("A \(try author.value(forKey: "name") as? String ?? "nil") \(try author.value(forKey: "born") as? Int64 ?? -1) "
            + "[\(try names(author.value(forKey: "books"), key: "title"))]")
    }
    for book in try context.fetch(FetchRequest<ManagedObject>(entityName: "Book")) {
        let author = try (book.value(forKey: "author") as? ManagedObject)?.value(forKey: "name") as? String ?? "nil"
        lines.append("B \(try book.value(forKey: "title") as? String ?? "nil") \(try book.value(forKey: "pages") as? Int64 ?? -1) "
            + "\(try book.value(forKey: "price") as? Double ?? -1) \(author) [\(try names(book.value(forKey: "tags"), key: "label"))]")
    }
    for tag in try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag")) {
        lines.append("T \(try tag.value(forKey: "label") as? String ?? "nil") [\(try names(tag.value(forKey: "books"), key: "title"))]")
    }
    return lines.sorted()
}

/// Batch update, delete and insert give the same stored graph on an SQLite file and on a PostgreSQL server,
/// and the same graph as the naive way (fetch, edit, save in a context) on a store of the same kind.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct StoreAgnosticBatchTests {
    /// Seeds two stores of `kind`, runs `batch` on one and `reference` on the other, and returns both
    /// snapshots (read through fresh contexts) with what `batch` returned.
    func compare<Outcome>(_ kind: StoreKind, model: ManagedObjectModel,
                          batch: (ManagedObjectContext) throws -> Outcome,
                          reference: (ManagedObjectContext) throws -> Void) throws -> (batched: [String], reference: [String], outcome: Outcome) {
        let batched = try SharedStoreLocation(kind, model: model), naive = try SharedStoreLocation(kind, model: model)
        try ShelfModel.seed(batched.context())
        try ShelfModel.seed(naive.context())
        let outcome = try batch(batched.context())
        let context = try naive.context()
        try reference(context)
        try context.save()
        return (try shelfSnapshot(batched.context()), try shelfSnapshot(naive.context()), outcome)
    }

    // MARK: Batch update

    @Test(arguments: agnosticKinds)
    func batchUpdateMatchesFetchEditSave(kind: StoreKind) throws {
        let cases: [(format: String?, updates: [String: Any], edit: (ManagedObject) throws -> Void)] = [
            ("pages > 150", ["pages": try QueryExpression(format: "pages + 1"), "price": 0.25], { book in
                try book.setValue((book.value(forKey: "pages") as! Int64) + 1, forKey: "pages")
                try book.setValue(0.25, forKey: "price")
            }),
            ("author.name == 'Author 1'", ["title": "renamed"], { try $0.setValue("renamed", forKey: "title") }),
            ("ANY tags.label == 'red' AND pages < 200", ["pages": Int64(7), "price": NSNull()], { book in
                try book.setValue(Int64(7), forKey: "pages")
                try book.setValue(nil, forKey: "price")
            }),
            (nil, ["price": try QueryExpression(format: "price * 2")], { book in
                try book.setValue((book.value(forKey: "price") as! Double) * 2, forKey: "price")
            }),
        ]
        for (format, updates, edit) in cases {
            let result = try compare(kind, model: ShelfModel.make(), batch: { context in
                let before = try Set(context.fetch(bookRequest(format)).map(\.objectID))
                let request = BatchUpdateRequest(entityName: "Book")
                request.predicate = try format.map { try QueryPredicate(format: $0) }
                request.propertiesToUpdate = updates
                request.resultType = .objectIDs
                let outcome = try #require(try context.execute(request) as? BatchResult)
                return (before, Set(outcome.objectIDs), outcome.count)
            }, reference: { context in
                for book in try context.fetch(bookRequest(format)) { try edit(book) }
            })
            #expect(result.batched == result.reference, "\(format ?? "all")")
            #expect(result.outcome.0 == result.outcome.1 && result.outcome.2 == result.outcome.0.count, "\(format ?? "all")")
        }
    }

    /// A batch update moves each row's version on: a context that read a book before it meets a conflict
    /// when it saves; once the IDs are merged, it sees the new values and saves without one.
    @Test(arguments: agnosticKinds)
    func batchUpdateIsSeenByOptimisticLockingAndMerges(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        try ShelfModel.seed(location.context())
        // The merge finds objects by ID, which name their coordinator's store: the batch runs on the live one's.
        let coordinator = try location.coordinator()
        let live = ManagedObjectContext(concurrencyType: .confinement), worker = ManagedObjectContext(concurrencyType: .confinement)
        live.persistentStoreCoordinator = coordinator
        worker.persistentStoreCoordinator = coordinator
        let stale = try location.context()
        let staleBook = try #require(stale.fetch(bookRequest("title == 'Book 03'")).first)
        let liveBook = try #require(live.fetch(bookRequest("title == 'Book 03'")).first)
        let request = BatchUpdateRequest(entityName: "Book")
        request.propertiesToUpdate = ["pages": try QueryExpression(format: "pages * 10")]
        request.resultType = .objectIDs
        let result = try #require(try worker.execute(request) as? BatchResult)
        #expect(result.count == 12)
        try staleBook.setValue("stale edit", forKey: "title")
        #expect(throws: ObjectGraphError.self) { try stale.save() }
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: ContextDidSave(updated: Set(result.objectIDs)), into: [live])
        #expect(try liveBook.value(forKey: "pages") as? Int64 == 1300)
        try liveBook.setValue("live edit", forKey: "title")
        try live.save()
        #expect(try location.context().count(for: bookRequest("title == 'live edit' AND pages == 1300")) == 1)
    }

    /// New values that meet a uniqueness constraint refuse the whole update; nothing changes. The refusal names
    /// the entity and the constraint's keys on both stores.
    @Test(arguments: agnosticKinds)
    func batchUpdateMeetingAUniquenessConstraintChangesNothing(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: UniqueTagModel.make())
        let context = try location.context()
        for (label, weight) in [("red", 1), ("blue", 2)] as [(String, Int64)] {
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue(label, forKey: "label")
            try tag.setValue(weight, forKey: "weight")
        }
        try context.save()
        let request = BatchUpdateRequest(entityName: "Tag")
        request.propertiesToUpdate = ["label": "same", "weight": Int64(9)]
        do {
            _ = try location.context().execute(request)
            Issue.record("a batch update stored two tags with one label")
        } catch let ObjectGraphError.validationFailed(failures) {
            #expect(failures.map(\.entity) == ["Tag"] && failures.map(\.key) == ["label"])
            #expect(failures.map(\.rule) == [.uniquenessViolation])
        }
        #expect(try UniqueTagModel.snapshot(location.context()) == ["blue nil 2", "red nil 1"])
    }

    /// Derived attributes kept right by batch requests as by saves: an author's book count and page total
    /// (follow-up statements on related rows), a book's doubled pages (its own row).
    @Test(arguments: agnosticKinds)
    func batchRequestsKeepDerivedAttributesAsSavesDo(kind: StoreKind) throws {
        func model() throws -> ManagedObjectModel {
            let bookCount = AttributeDescription(name: "bookCount", type: .integer64)
            bookCount.derivationExpression = try QueryExpression(format: "books.@count")
            let totalPages = AttributeDescription(name: "totalPages", type: .integer64)
            totalPages.derivationExpression = try QueryExpression(format: "books.@sum.pages")
            let doublePages = AttributeDescription(name: "doublePages", type: .integer64)
            doublePages.derivationExpression = try QueryExpression(format: "pages * 2")
            return try ManagedObjectModel(entities: [
                EntityDescription(name: "Author", properties: [
                    AttributeDescription(name: "name", type: .string), AttributeDescription(name: "born", type: .integer64),
                    bookCount, totalPages,
                    RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "author", deleteRule: .cascade),
                ]),
                EntityDescription(name: "Book", properties: [
                    AttributeDescription(name: "title", type: .string), AttributeDescription(name: "pages", type: .integer64),
                    AttributeDescription(name: "price", type: .double), doublePages,
                    RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                    RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "books"),
                ]),
                EntityDescription(name: "Tag", properties: [
                    AttributeDescription(name: "label", type: .string),
                    RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "tags"),
                ]),
            ])
        }
        func derived(_ context: ManagedObjectContext) throws -> [String] {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Author")).map { author in
                "\(try author.value(forKey: "name") as? String ?? "") \(try author.value(forKey: "bookCount") as? Int64 ?? -1) "
                    + "\(try author.value(forKey: "totalPages") as? Int64 ?? -1)"
            }.sorted() + context.fetch(bookRequest()).map { book in
                "\(try book.value(forKey: "title") as? String ?? "") \(try book.value(forKey: "doublePages") as? Int64 ?? -1)"
            }
        }
        let batched = try SharedStoreLocation(kind, model: model()), naive = try SharedStoreLocation(kind, model: model())
        try ShelfModel.seed(batched.context())
        try ShelfModel.seed(naive.context())
        let update = BatchUpdateRequest(entityName: "Book")
        update.predicate = try QueryPredicate(format: "pages > 150")
        update.propertiesToUpdate = ["pages": try QueryExpression(format: "pages + 5")]
        _ = try batched.context().execute(update)
        _ = try batched.context().execute(BatchDeleteRequest(fetchRequest: try bookRequest("title == 'Book 04'")))
        let context = try naive.context()
        for book in try context.fetch(bookRequest("pages > 150")) {
            try book.setValue((book.value(forKey: "pages") as! Int64) + 5, forKey: "pages")
        }
        for book in try context.fetch(bookRequest("title == 'Book 04'")) { context.delete(book) }
        try context.save()
        let expected = try derived(naive.context())
        // Author 0: books 0, 3, 6, 9 with 100, 130, 165, 195 pages.
        #expect(expected.first == "Author 0 4 590")
        #expect(try derived(batched.context()) == expected)
    }

    // MARK: Batch delete

    @Test(arguments: agnosticKinds)
    func batchDeleteMatchesFetchDeleteSave(kind: StoreKind) throws {
        let cases: [(entity: String, format: String?, rule: DeleteRule)] = [
            ("Book", "pages > 150", .cascade),              // the tags' join rows go
            ("Author", "name == 'Author 2'", .cascade),     // the author's books go, and their join rows
            ("Tag", "label == 'red'", .cascade),            // the books stay, without the tag
            ("Book", "ANY tags.label == 'blue'", .cascade), // a predicate through a join table
            ("Author", "born < 1902", .nullify),            // the books stay, without an author
            ("Author", nil, .nullify),
        ]
        for (entityName, format, rule) in cases {
            let request = FetchRequest<ManagedObject>(entityName: entityName)
            request.predicate = try format.map { try QueryPredicate(format: $0) }
            let result = try compare(kind, model: RuledShelfModel.make(authorBooks: rule), batch: { context in
                let before = try Set(context.fetch(request).map(\.objectID))
                let delete = BatchDeleteRequest(fetchRequest: request)
                delete.resultType = .objectIDs
                let outcome = try #require(try context.execute(delete) as? BatchResult)
                return (before, outcome, delete.lastNullifiedObjectIDs)
            }, reference: { context in
                for object in try context.fetch(request) { context.delete(object) }
            })
            let label = "\(entityName) \(format ?? "all") \(rule)"
            #expect(result.batched == result.reference, "\(label)")
            let (before, outcome, nullified) = result.outcome
            #expect(Set(outcome.objectIDs).isSuperset(of: before) && outcome.count == outcome.objectIDs.count, "\(label)")
            if rule == .nullify {
                // Author i has books i, i + 3, i + 6, i + 9.
                #expect(nullified.count == 4 * before.count && nullified.allSatisfy { $0.entity.name == "Book" }, "\(label)")
            }
        }
    }

    /// A delete of an entity no relationship touches is one statement on either store: the same rows go as by
    /// fetch, delete and save, the IDs come back when asked for, and the history lists every deleted row.
    @Test(arguments: agnosticKinds)
    func batchDeleteOfAnUnrelatedEntityMatchesDeleteSaveAndReachesTheHistory(kind: StoreKind) throws {
        for resultType in [BatchResultType.count, .objectIDs] {
            let model = try UniqueTagModel.make(constraints: [])
            let options = StoreOptions(persistentHistoryTracking: true)
            let batched = try SharedStoreLocation(kind, model: model, options: options)
            let naive = try SharedStoreLocation(kind, model: model, options: options)
            for location in [batched, naive] {
                let context = try location.context()
                for index in 0..<20 {
                    let tag = try context.insertNewObject(forEntityName: "Tag")
                    try tag.setValue("t\(index)", forKey: "label")
                    try tag.setValue(Int64(index), forKey: "code")
                    try tag.setValue(Int64(index % 5), forKey: "weight")
                }
                try context.save()
            }
            let request = FetchRequest<ManagedObject>(entityName: "Tag")
            request.predicate = try QueryPredicate(format: "weight >= 3")
            let context = try batched.context()
            let before = try Set(context.fetch(request).map(\.objectID))
            let delete = BatchDeleteRequest(fetchRequest: request)
            delete.resultType = resultType
            let outcome = try #require(try context.execute(delete) as? BatchResult)
            let reference = try naive.context()
            for object in try reference.fetch(request) { reference.delete(object) }
            try reference.save()
            #expect(try UniqueTagModel.snapshot(batched.context()) == UniqueTagModel.snapshot(naive.context()), "\(resultType)")
            #expect(outcome.count == 8 && before.count == 8, "\(resultType)")
            #expect(resultType == .count ? outcome.objectIDs.isEmpty : Set(outcome.objectIDs) == before, "\(resultType)")
            let last = try #require(StoreAgnosticHistoryTests.everything(batched.context()).last?.changes)
            #expect(last.allSatisfy { $0.changeType == .delete }
                && Set(last.map(\.changedObjectID.primaryKey)) == Set(before.map(\.primaryKey)), "\(resultType)")
        }
    }

    /// Deleting by object IDs, cascading: the same as deleting the objects in a context.
    @Test(arguments: agnosticKinds)
    func batchDeleteOfObjectIDsMatchesDeleteSave(kind: StoreKind) throws {
        let authors = FetchRequest<ManagedObject>(entityName: "Author")
        authors.predicate = try QueryPredicate(format: "name != 'Author 1'")
        let result = try compare(kind, model: ShelfModel.make(), batch: { context in
            let ids = try context.fetch(authors).map(\.objectID) + context.fetch(bookRequest("title == 'Book 01'")).map(\.objectID)
            return try #require(try context.execute(BatchDeleteRequest(objectIDs: ids)) as? BatchResult).count
        }, reference: { context in
            let named: [ManagedObject] = try context.fetch(authors)
            let book: [ManagedObject] = try context.fetch(bookRequest("title == 'Book 01'"))
            for object in named + book { context.delete(object) }
        })
        #expect(result.batched == result.reference)
        #expect(result.outcome == 2 + 8 + 1)
    }

    /// A deny rule with related objects left refuses the whole delete; nothing goes.
    @Test(arguments: agnosticKinds)
    func batchDeleteRefusedByADenyRuleDeletesNothing(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: RuledShelfModel.make(authorBooks: .deny))
        try ShelfModel.seed(location.context())
        let before = try shelfSnapshot(location.context())
        let request = FetchRequest<ManagedObject>(entityName: "Author")
        request.predicate = try QueryPredicate(format: "name == 'Author 0'")
        do {
            _ = try location.context().execute(BatchDeleteRequest(fetchRequest: request))
            Issue.record("a deny rule let a batch delete through")
        } catch let ObjectGraphError.validationFailed(failures) {
            #expect(failures.map(\.rule) == [.deleteDenied] && failures.map(\.key) == ["books"])
        }
        #expect(try shelfSnapshot(location.context()) == before)
    }

    // MARK: Batch insert

    @Test(arguments: agnosticKinds)
    func batchInsertMatchesInsertAndSave(kind: StoreKind) throws {
        let rows: [[String: Any]] = (0..<250).map { ["title": "New \($0)", "pages": Int64($0), "price": Double($0) / 4] }
            + [["title": "No price", "pages": Int64(1)]]
        let forms: [(String, () -> BatchInsertRequest)] = [
            ("objects", { BatchInsertRequest(entityName: "Book", objects: rows) }),
            ("dictionary handler", {
                var index = 0
                return BatchInsertRequest(entityName: "Book", dictionaryHandler: { dictionary in
                    guard index < rows.count else { return true }
                    dictionary = rows[index]
                    index += 1
                    return false
                })
            }),
            ("object handler", {
                var index = 0
                return BatchInsertRequest(entityName: "Book", managedObjectHandler: { object in
                    guard index < rows.count else { return true }
                    for (key, value) in rows[index] { try? object.setValue(value, forKey: key) }
                    index += 1
                    return false
                })
            }),
        ]
        for (name, make) in forms {
            let result = try compare(kind, model: ShelfModel.make(), batch: { context in
                let request = make()
                request.resultType = .objectIDs
                return try #require(try context.execute(request) as? BatchResult)
            }, reference: { context in
                for row in rows {
                    let book = try context.insertNewObject(forEntityName: "Book")
                    for (key, value) in row { try book.setValue(value, forKey: key) }
                }
            })
            #expect(result.batched == result.reference, "\(name)")
            #expect(result.outcome.count == rows.count && Set(result.outcome.objectIDs).count == rows.count, "\(name)")
        }
    }

    /// Under a uniqueness constraint a batch insert is an upsert: a row meeting a stored row (or an earlier
    /// row of the batch) updates it and keeps its key, with one constraint and with two.
    @Test(arguments: agnosticKinds)
    func batchInsertUpsertsByUniquenessConstraints(kind: StoreKind) throws {
        for constraints in [[["label"]], [["label"], ["code"]]] {
            let location = try SharedStoreLocation(kind, model: UniqueTagModel.make(constraints: constraints))
            let context = try location.context()
            let stored = try context.insertNewObject(forEntityName: "Tag")
            try stored.setValue("red", forKey: "label")
            try stored.setValue(Int64(1), forKey: "code")
            try stored.setValue(Int64(1), forKey: "weight")
            try context.save()
            let request = BatchInsertRequest(entityName: "Tag", objects: [
                ["label": "red", "code": Int64(10), "weight": Int64(2)],
                ["label": "blue", "code": Int64(20), "weight": Int64(3)],
                ["label": "blue", "code": Int64(21), "weight": Int64(4)],
                ["label": "green", "code": Int64(10), "weight": Int64(5)],
            ])
            request.resultType = .objectIDs
            let result = try #require(try location.context().execute(request) as? BatchResult)
            // Keys: IDs read through another coordinator name its store.
            let keys = result.objectIDs.map(\.primaryKey)
            #expect(keys.first == stored.objectID.primaryKey, "\(constraints)")
            #expect(keys[1] == keys[2] && keys[1] != keys[0], "\(constraints)")
            if constraints.count == 1 {
                #expect(try UniqueTagModel.snapshot(location.context()) == ["blue 21 4", "green 10 5", "red 10 2"])
            } else {
                // The fourth row meets the first tag by its code, and takes its label.
                #expect(try UniqueTagModel.snapshot(location.context()) == ["blue 21 4", "green 10 5"], "\(constraints)")
                #expect(keys[3] == stored.objectID.primaryKey)
            }
        }
    }

    /// Two writers upserting the same rows at once under two constraints (where PostgreSQL has no single
    /// `ON CONFLICT` target): each row meets the other writer's row and updates it, never a violation.
    @Test(arguments: agnosticKinds)
    func concurrentUpsertsUnderTwoConstraintsMeetEachOther(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: UniqueTagModel.make(constraints: [["label"], ["code"]]))
        for round in 0..<3 {
            let contexts = try (0..<2).map { _ in try location.context(.privateQueue) }
            let outcomes = Mutex<[Result<Int, any Error>]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { writer in
                let request = BatchInsertRequest(entityName: "Tag", objects: (0..<150).map {
                    ["label": "t\($0)", "code": Int64($0), "weight": Int64(round * 10 + writer)]
                })
                request.resultType = .count
                let context = contexts[writer]
                let outcome = Result { try context.performAndWait { (try context.execute(request) as? BatchResult)?.count ?? -1 } }
                outcomes.withLock { $0.append(outcome) }
            }
            for outcome in outcomes.withLock({ $0 }) {
                #expect(throws: Never.self, "round \(round)") { try outcome.get() }
            }
            let tags = try UniqueTagModel.snapshot(location.context())
            #expect(tags.count == 150, "round \(round)")
            // Each row holds one writer's weight of this round, whichever wrote last.
            #expect(tags.allSatisfy { $0.hasSuffix(" \(round * 10)") || $0.hasSuffix(" \(round * 10 + 1)") }, "round \(round)")
        }
    }

    /// Keys come from the store's key blocks: two coordinators inserting at once and a context saving after
    /// them never reuse a key.
    @Test(arguments: agnosticKinds)
    func concurrentBatchInsertsNeverShareAKey(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        let contexts = try (0..<2).map { _ in try location.context(.privateQueue) }
        let outcomes = Mutex<[Result<[ManagedObjectID], any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { writer in
            let request = BatchInsertRequest(entityName: "Book", objects: (0..<300).map { ["title": "w\(writer) \($0)"] })
            request.resultType = .objectIDs
            let context = contexts[writer]
            let outcome = Result { try context.performAndWait { (try context.execute(request) as? BatchResult)?.objectIDs ?? [] } }
            outcomes.withLock { $0.append(outcome) }
        }
        let ids = try outcomes.withLock { try $0.flatMap { try $0.get() } }
        let context = try location.context()
        let book = try context.insertNewObject(forEntityName: "Book")
        try book.setValue("saved", forKey: "title")
        try context.save()
        let keys = ids.map(\.primaryKey) + [book.objectID.primaryKey]
        #expect(Set(keys).count == 601)
        #expect(try location.context().count(for: bookRequest()) == 601)
    }

    // MARK: Heard by other coordinators

    /// Each batch request is one transaction in the history, announced like a save: a coordinator watching
    /// the store gets the remote-change notification and merges it into a results controller.
    @Test func anotherCoordinatorHearsBatchRequests() throws {
        let location = try SharedStoreLocation(.postgreSQL, model: ShelfModel.make(),
                                               options: StoreOptions(persistentHistoryTracking: true, remoteChangeNotifications: true))
        try ShelfModel.seed(location.context())
        let watching = try location.coordinator()
        let notifications = Mutex<[Int64]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: PersistentStoreCoordinator.remoteChangeNotification, object: watching, queue: nil) { note in
            let token = note.userInfo?[PersistentStoreCoordinator.historyTokenKey] as? PersistentHistoryToken
            notifications.withLock { $0.append(token?.transactionNumber ?? 0) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue)
        reader.persistentStoreCoordinator = watching
        reader.automaticallyMergesChangesFromParent = true
        let controller = try reader.performAndWait {
            let controller = try FetchedResultsController(fetchRequest: try bookRequest("pages < 130"), managedObjectContext: reader,
                                                          sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            return controller
        }
        func shown() throws -> [String] {
            try reader.performAndWait { try titles(Array(controller.fetchedObjects.map(Array.init) ?? [])) }
        }
        #expect(try shown() == ["Book 00", "Book 01", "Book 02"])
        let writer = try location.context()
        let insert = BatchInsertRequest(entityName: "Book", objects: [["title": "Book 00b", "pages": Int64(1)]])
        _ = try writer.execute(insert)
        let delete = BatchDeleteRequest(fetchRequest: try bookRequest("title == 'Book 01'"))
        _ = try writer.execute(delete)
        let update = BatchUpdateRequest(entityName: "Book")
        update.predicate = try QueryPredicate(format: "title == 'Book 02'")
        update.propertiesToUpdate = ["pages": Int64(500)]
        _ = try writer.execute(update)
        #expect(try PostgreSQLRemoteChangeTests.eventually { try shown() == ["Book 00", "Book 00b"] })
        // Seeding was transaction 1; the three batches are 2, 3 and 4.
        #expect(PostgreSQLRemoteChangeTests.eventually { notifications.withLock { $0.contains(4) } })
        let after: PersistentHistoryToken? = nil
        let history = try #require(try writer.execute(PersistentHistoryChangeRequest.fetchHistory(after: after)) as? PersistentHistoryResult)
        let kinds: [[PersistentHistoryChangeType]] = history.transactions.dropFirst().map { transaction in
            (transaction.changes ?? []).map { (change: PersistentHistoryChange) in change.changeType }
        }
        #expect(kinds == [[.insert], [.delete], [.update]])
    }
}
