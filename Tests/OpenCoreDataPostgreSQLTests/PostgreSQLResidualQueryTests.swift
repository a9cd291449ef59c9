import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Fetches whose predicate or sort PostgreSQL cannot compile alike (`[cd]`, `canonical:`, `MATCHES` with `\d`,
/// localized sorts, relationship paths under them) are answered through a context on PostgreSQL exactly as on a
/// SQLite store holding the same objects (the naive reference): objects, IDs, counts, limits and offsets, batch
/// sizes, and a results controller's sections. Before the residual path these requests were refused with a
/// `QueryDialectRefusal`.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLResidualQueryTests {
    static let names = ["Émile", "émile", "Emile", "EMILE", "Zoë", "zoe", "Ångström", "angstrom", "straße", "STRASSE",
                        "file2", "file10", "File1", "résumé", "resume", "Resume", "cote", "côte", "coté", "côté", "e\u{301}mile", ""]
    static let cities = ["Zürich", "zurich", "Paris", "Évry", "evry"]
    static let titles = ["Été", "ete", "Nana", "Thérèse", "therese 2", "L'Assommoir"]

    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Person") {
                Attribute("code", .integer64)
                Attribute("name", .string)
                Attribute("tag", .string)
                Attribute("group", .string)
                Attribute("age", .integer32)
                Attribute("born", .date)
                ToOne("address", "Address", inverse: "residents")
                ToMany("books", "Book", inverse: "author")
            }
            EntityDescription("Address") {
                Attribute("city", .string)
                ToMany("residents", "Person", inverse: "address")
            }
            EntityDescription("Book") {
                Attribute("title", .string)
                ToOne("author", "Person", inverse: "books")
            }
        }
    }

    /// The same objects in either store.
    static func seed(_ context: ManagedObjectContext) throws {
        let addresses = try cities.map { city in
            let address = try context.insertNewObject(forEntityName: "Address")
            try address.setValue(city, forKey: "city")
            return address
        }
        for (index, name) in names.enumerated() {
            let person = try context.insertNewObject(forEntityName: "Person")
            try person.setValue(Int64(index), forKey: "code")
            try person.setValue(name, forKey: "name")
            try person.setValue(index % 3 == 0 ? "x\(index)" : "tag-\(["a", "b", "c"][index % 3])", forKey: "tag")
            try person.setValue(["Élan", "elan", "Ögon"][index % 3], forKey: "group")
            try person.setValue(Int32(10 + index * 3 % 40), forKey: "age")
            try person.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 86_400), forKey: "born")
            if index % 4 != 3 { try person.setValue(addresses[index % addresses.count], forKey: "address") }
            for offset in 0..<(index % 3) {
                let book = try context.insertNewObject(forEntityName: "Book")
                try book.setValue(titles[(index + offset) % titles.count], forKey: "title")
                try book.setValue(person, forKey: "author")
            }
        }
        try context.save()
    }

    static let predicates: [(String, [String])] = [
        ("name ==[cd] 'emile'", []),
        ("name BEGINSWITH[cd] 'e' AND age >= 20", []),
        ("canonical:(name) == canonical:('Emile')", []),
        ("tag MATCHES %@", ["x\\d+"]),
        ("name CONTAINS[d] 'e' OR tag MATCHES %@", ["tag-\\w"]),
        ("address.city ==[cd] 'zurich' OR age < 15", []),
        ("ANY books.title CONTAINS[cd] 'ete'", []),
        ("books.@count > 0 AND name LIKE[cd] '*e*'", []),
        ("SUBQUERY(books, $b, $b.title BEGINSWITH[d] 'e').@count > 0", []),
        ("age > 12", []),
    ]
    static let sorts: [[QuerySortDescriptor]] = [
        [QuerySortDescriptor(key: "name", comparator: .localizedStandardCompare), QuerySortDescriptor(key: "code")],
        [QuerySortDescriptor(key: "name", ascending: false, comparator: .localizedCaseInsensitiveCompare), QuerySortDescriptor(key: "code")],
        [QuerySortDescriptor(key: "address.city", comparator: .localizedCompare), QuerySortDescriptor(key: "code", ascending: false)],
        [QuerySortDescriptor(key: "age"), QuerySortDescriptor(key: "code")],
    ]

    func codes(_ objects: [ManagedObject]) throws -> [Int64] {
        try objects.map { try #require($0.value(forKey: "code") as? Int64) }
    }

    @Test func fetchesAgreeWithSQLite() throws {
        let model = try Self.makeModel()
        let sqlite = try SharedStoreLocation(.sqlite, model: model)
        let postgreSQL = try SharedStoreLocation(.postgreSQL, model: model)
        try Self.seed(sqlite.context())
        try Self.seed(postgreSQL.context())
        let reference = try sqlite.context()
        let context = try postgreSQL.context()
        for (format, arguments) in Self.predicates {
            for sort in Self.sorts {
                for (limit, offset, batch) in [(0, 0, 0), (3, 2, 0), (0, 4, 2), (5, 0, 3)] {
                    func request() throws -> FetchRequest<ManagedObject> {
                        let request = FetchRequest<ManagedObject>(entityName: "Person")
                        request.predicate = try QueryPredicate(format: format, argumentArray: arguments)
                        request.sortDescriptors = sort
                        request.fetchLimit = limit
                        request.fetchOffset = offset
                        request.fetchBatchSize = batch
                        return request
                    }
                    let label = "\(format) \(sort) limit \(limit) offset \(offset) batch \(batch)"
                    let expected = try codes(reference.fetch(request()))
                    #expect(try codes(context.fetch(request())) == expected, "\(label)")
                    #expect(try context.count(for: request()) == expected.count, "\(label)")
                    let ids = FetchRequest<ManagedObjectID>(objectIDsOf: "Person")
                    ids.predicate = try request().predicate
                    ids.sortDescriptors = sort
                    ids.fetchLimit = limit
                    ids.fetchOffset = offset
                    let fetchedIDs: [ManagedObjectID] = try context.fetch(ids)
                    #expect(try codes(fetchedIDs.map { try context.object(with: $0) }) == expected, "IDs: \(label)")
                }
            }
        }
    }

    @Test func resultsControllerSectionsAgreeWithSQLite() throws {
        let model = try Self.makeModel()
        let sqlite = try SharedStoreLocation(.sqlite, model: model)
        let postgreSQL = try SharedStoreLocation(.postgreSQL, model: model)
        try Self.seed(sqlite.context())
        try Self.seed(postgreSQL.context())
        func sections(_ context: ManagedObjectContext, _ format: String, _ arguments: [String]) throws -> [[String]] {
            let request = FetchRequest<ManagedObject>(entityName: "Person")
            request.predicate = try QueryPredicate(format: format, argumentArray: arguments)
            request.sortDescriptors = [QuerySortDescriptor(key: "group", comparator: .localizedCaseInsensitiveCompare),
                                       QuerySortDescriptor(key: "name", comparator: .localizedStandardCompare),
                                       QuerySortDescriptor(key: "code")]
            request.fetchBatchSize = 4
            let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                          sectionNameKeyPath: "group", cacheName: nil)
            try controller.performFetch()
            var result: [[String]] = []
            for section in controller.sections ?? [] {
                var names = [section.name]
                for object in try section.objects() {
                    let code = try object.value(forKey: "code") as? Int64
                    names.append(code.map(String.init) ?? "nil")
                }
                result.append(names)
            }
            return result
        }
        for (format, arguments) in Self.predicates {
            let expected = try sections(sqlite.context(), format, arguments)
            #expect(try sections(postgreSQL.context(), format, arguments) == expected, "\(format)")
        }
    }

    /// A batch delete whose predicate the server cannot say deletes what the same request deletes on SQLite
    /// (cascades and nullified inverses included), and reports the same objects.
    @Test func batchDeletesAgreeWithSQLite() throws {
        let model = try Self.makeModel()
        for (format, arguments) in Self.predicates {
            func remaining(_ kind: StoreKind) throws -> (deleted: Int, people: [Int64], books: Int) {
                let location = try SharedStoreLocation(kind, model: model)
                try Self.seed(location.context())
                let context = try location.context()
                let selection = FetchRequest<ManagedObject>(entityName: "Person")
                selection.predicate = try QueryPredicate(format: format, argumentArray: arguments)
                let request = BatchDeleteRequest(fetchRequest: selection)
                request.resultType = .objectIDs
                let result = try #require(try context.execute(request) as? BatchResult)
                let fresh = try location.context()
                let people = FetchRequest<ManagedObject>(entityName: "Person")
                people.sortDescriptors = [QuerySortDescriptor(key: "code")]
                return (result.count, try codes(fresh.fetch(people)),
                        try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Book")))
            }
            let expected = try remaining(.sqlite)
            let answered = try remaining(.postgreSQL)
            #expect(answered.deleted == expected.deleted && answered.people == expected.people && answered.books == expected.books,
                    "\(format): PostgreSQL \(answered), SQLite \(expected)")
        }
    }

    /// An asynchronous fetch (its rows read on a background reader, streamed with a cancel flag) goes through the
    /// same residual path, with limit and offset after the in-memory sort.
    @Test func asynchronousFetchAgreesWithSQLite() throws {
        let model = try Self.makeModel()
        func fetched(_ kind: StoreKind) throws -> [Int64] {
            let location = try SharedStoreLocation(kind, model: model)
            try Self.seed(location.context())
            let context = try location.context(.privateQueue)
            let request = FetchRequest<ManagedObject>(entityName: "Person")
            request.predicate = try QueryPredicate(format: "name BEGINSWITH[cd] 'e' OR address.city ==[cd] 'zurich'")
            request.sortDescriptors = [QuerySortDescriptor(key: "name", comparator: .localizedStandardCompare),
                                       QuerySortDescriptor(key: "code")]
            request.fetchLimit = 5
            request.fetchOffset = 1
            let completion = PostgreSQLAsynchronousFetchTests.Completion()
            let asynchronous = AsynchronousFetchRequest(fetchRequest: request) { [completion] result in completion.finish(result) }
            try context.performAndWait { _ = try context.execute(asynchronous) }
            try #require(completion.done.wait(timeout: .now() + 120) == .success, "the asynchronous fetch never completed")
            let result = try #require(completion.result)
            #expect(result.operationError == nil, "\(kind): \(String(describing: result.operationError))")
            return try context.performAndWait { try codes(Array(result.finalResult ?? [])) }
        }
        let expected = try fetched(.sqlite)
        #expect(expected.count == 5)
        #expect(try fetched(.postgreSQL) == expected)
    }
}
