import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Dictionary results (fetched columns, aggregates, grouping, `having`, distinct, localized sorts, offset and
/// limit) and batch updates whose predicate or sort PostgreSQL cannot say alike are answered through a context
/// exactly as on a SQLite store holding the same objects. Before the residual path covered them they were refused
/// with a `QueryDialectRefusal`.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLResidualDictionaryTests {
    typealias Fixture = PostgreSQLResidualQueryTests

    /// Predicates with a part the server cannot say (alone, under OR, ANDed with a part it can).
    static let predicates: [(String, [String])] = [
        ("name ==[cd] 'emile'", []),
        ("name BEGINSWITH[cd] 'e' AND age >= 20", []),
        ("canonical:(name) == canonical:('Emile') OR age > 30", []),
        ("tag MATCHES %@", ["x\\d+"]),
        ("address.city ==[cd] 'zurich' OR age < 15", []),
        ("ANY books.title CONTAINS[cd] 'ete'", []),
        ("books.@count > 0 AND name LIKE[cd] '*e*'", []),
        ("NOT (name CONTAINS[d] 'o') AND code >= 2", []),
    ]

    /// A deterministic generator (SplitMix64), so a failure names a request that can be replayed.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// One random dictionary request: a residual predicate, one of the request shapes, a sort that may be
    /// localized, a page.
    static func randomRequest(_ generator: inout Generator) throws -> (label: String, make: () throws -> FetchRequest<[String: Any]>) {
        let (format, arguments) = predicates.randomElement(using: &generator)!
        let shape = Int.random(in: 0..<6, using: &generator)
        let comparators: [StringComparison] = [.compare, .localizedStandardCompare, .localizedCaseInsensitiveCompare, .localizedCompare]
        let comparator = comparators.randomElement(using: &generator)!
        let ascending = Bool.random(using: &generator)
        let (limit, offset) = [(0, 0), (2, 1), (0, 3), (4, 0), (1, 2)].randomElement(using: &generator)!
        let label = "\(format) shape \(shape) \(comparator) \(ascending ? "asc" : "desc") limit \(limit) offset \(offset)"
        return (label, {
            let request = FetchRequest<[String: Any]>(entityName: "Person")
            request.resultType = .dictionary
            request.predicate = try QueryPredicate(format: format, argumentArray: arguments)
            request.fetchLimit = limit
            request.fetchOffset = offset
            func expression(_ name: String, _ format: String, _ type: AttributeType) throws -> ExpressionDescription {
                ExpressionDescription(name: name, expression: try QueryExpression(format: format), resultType: type)
            }
            switch shape {
            case 0:  // Columns, sorted by a key not fetched, ties broken by code.
                request.propertiesToFetch = ["code", "age", "address.city"]
                request.sortDescriptors = [QuerySortDescriptor(key: "name", ascending: ascending, comparator: comparator),
                                           QuerySortDescriptor(key: "code")]
            case 1:  // Aggregates over every kept row.
                request.propertiesToFetch = [try expression("n", "count:(code)", .integer64), try expression("total", "sum:(age)", .double),
                                             try expression("oldest", "max:(age)", .integer64), try expression("mean", "average:(age)", .double)]
            case 2:  // Grouped, sorted by the group.
                request.propertiesToFetch = ["group", try expression("n", "count:(code)", .integer64), try expression("total", "sum:(age)", .double)]
                request.propertiesToGroupBy = ["group"]
                request.sortDescriptors = [QuerySortDescriptor(key: "group", ascending: ascending, comparator: comparator)]
            case 3:  // Grouped through a to-one, filtered by having.
                request.propertiesToFetch = ["address.city", try expression("n", "count:(code)", .integer64),
                                             try expression("youngest", "min:(age)", .integer64)]
                request.propertiesToGroupBy = ["address.city"]
                request.havingPredicate = try QueryPredicate(format: "n >= 1")
                request.sortDescriptors = [QuerySortDescriptor(key: "address.city", ascending: ascending, comparator: comparator)]
            case 4:  // Distinct values, sorted by them.
                request.propertiesToFetch = ["tag"]
                request.returnsDistinctResults = true
                request.sortDescriptors = [QuerySortDescriptor(key: "tag", ascending: ascending, comparator: comparator)]
            default:  // Columns with a to-one path, sorted by it, then by code.
                request.propertiesToFetch = ["name", "code"]
                request.sortDescriptors = [QuerySortDescriptor(key: "address.city", ascending: ascending, comparator: comparator),
                                           QuerySortDescriptor(key: "code", ascending: !ascending)]
            }
            return request
        })
    }

    /// Rows as comparable text, in order: each dictionary's keys sorted, values described.
    static func described(_ rows: [[String: Any]]) -> [String] {
        rows.map { row in row.keys.sorted().map { "\($0)=\(row[$0]!)" }.joined(separator: ", ") }
    }

    @Test func randomDictionaryRequestsAgreeWithSQLite() throws {
        let model = try Fixture.makeModel()
        let sqlite = try SharedStoreLocation(.sqlite, model: model)
        let postgreSQL = try SharedStoreLocation(.postgreSQL, model: model)
        try Fixture.seed(sqlite.context())
        try Fixture.seed(postgreSQL.context())
        let reference = try sqlite.context()
        let context = try postgreSQL.context()
        var generator = Generator(state: 0x0CD_2026)
        var nonEmpty = 0
        for _ in 0..<80 {
            let (label, make) = try Self.randomRequest(&generator)
            let expected = try Self.described(reference.fetch(make()))
            if !expected.isEmpty { nonEmpty += 1 }
            #expect(try Self.described(context.fetch(make())) == expected, "\(label)")
        }
        // The requests are not all empty answers.
        #expect(nonEmpty > 40)
    }

    /// A grouped or distinct dictionary fetch sorted in the app by a key it does not fetch stays a typed
    /// refusal naming the key (a column added for it would change the groups).
    @Test func groupedFetchSortedLocalizedByAnUnfetchedKeyIsRefusedByName() throws {
        let model = try Fixture.makeModel()
        let postgreSQL = try SharedStoreLocation(.postgreSQL, model: model)
        try Fixture.seed(postgreSQL.context())
        let request = FetchRequest<[String: Any]>(entityName: "Person")
        request.resultType = .dictionary
        request.propertiesToFetch = ["group"]
        request.returnsDistinctResults = true
        request.sortDescriptors = [QuerySortDescriptor(key: "name", comparator: .localizedStandardCompare)]
        do {
            _ = try postgreSQL.context().fetch(request)
            Issue.record("a distinct fetch sorted by an unfetched localized key was answered")
        } catch let refusal as QueryDialectRefusal {
            #expect(refusal.construct == .sortComparator && refusal.expression == "name"
                && refusal.detail?.contains("'Person'") == true, "\(refusal)")
        }
    }

    /// Sorted plainly by a key it neither groups by nor fetches, a grouped or distinct fetch has no defined
    /// order: the server refuses the statement, a typed error rather than some row's order.
    @Test func groupedFetchSortedPlainlyByAnUnfetchedKeyIsRefusedByTheServer() throws {
        let model = try Fixture.makeModel()
        let postgreSQL = try SharedStoreLocation(.postgreSQL, model: model)
        try Fixture.seed(postgreSQL.context())
        for distinct in [false, true] {
            let request = FetchRequest<[String: Any]>(entityName: "Person")
            request.resultType = .dictionary
            request.propertiesToFetch = ["group"]
            if distinct { request.returnsDistinctResults = true } else { request.propertiesToGroupBy = ["group"] }
            request.sortDescriptors = [QuerySortDescriptor(key: "name")]
            #expect(throws: StoreError.self, "distinct \(distinct)") { try postgreSQL.context().fetch(request) }
        }
    }

    /// A batch update whose predicate the server cannot say changes exactly the rows the same request changes on
    /// SQLite, reports them (count, IDs, status), lists them in the history, and a live context that merges the
    /// IDs sees the new values.
    @Test func batchUpdatesAgreeWithSQLite() throws {
        let model = try Fixture.makeModel()
        let options = StoreOptions(persistentHistoryTracking: true)
        struct Outcome: Equatable {
            var reported: Int
            var reportedCodes: [Int64]
            var historyCodes: [Int64]
            var mergedAges: [Int64: Int32]
            var rows: [String]
        }
        for (index, (format, arguments)) in Self.predicates.enumerated() {
            let resultType: BatchResultType = [.objectIDs, .count, .statusOnly][index % 3]
            func outcome(_ kind: StoreKind) throws -> Outcome {
                let location = try SharedStoreLocation(kind, model: model, options: options)
                try Fixture.seed(location.context())
                let coordinator = try location.coordinator()
                let live = ManagedObjectContext(concurrencyType: .confinement)
                live.persistentStoreCoordinator = coordinator
                let everyone = FetchRequest<ManagedObject>(entityName: "Person")
                everyone.sortDescriptors = [QuerySortDescriptor(key: "code")]
                let liveObjects = try live.fetch(everyone)
                let worker = ManagedObjectContext(concurrencyType: .confinement)
                worker.persistentStoreCoordinator = coordinator
                let update = BatchUpdateRequest(entityName: "Person")
                update.predicate = try QueryPredicate(format: format, argumentArray: arguments)
                update.propertiesToUpdate = ["age": try QueryExpression(format: "age + 100"), "tag": "updated"]
                update.resultType = resultType
                let result = try #require(try worker.execute(update) as? BatchResult)
                func code(_ id: ManagedObjectID) throws -> Int64 {
                    struct NoCode: Error {}
                    guard let code = try live.object(with: id).value(forKey: "code") as? Int64 else { throw NoCode() }
                    return code
                }
                let changes = try #require(StoreAgnosticHistoryTests.everything(live).last?.changes)
                #expect(changes.allSatisfy { $0.changeType == .update }, "\(kind) \(format)")
                var merged: [Int64: Int32] = [:]
                if resultType == .objectIDs {
                    ManagedObjectContext.mergeChanges(fromRemoteContextSave: ContextDidSave(updated: Set(result.objectIDs)), into: [live])
                    for object in liveObjects where result.objectIDs.contains(object.objectID) {
                        merged[try #require(try object.value(forKey: "code") as? Int64)] = try object.value(forKey: "age") as? Int32
                    }
                }
                let fresh = try location.context()
                let rows = try fresh.fetch(everyone).map { person -> String in
                    let values = try ["code", "age", "tag"].map { try person.value(forKey: $0).map { "\($0)" } ?? "nil" }
                    return values.joined(separator: " ")
                }
                return Outcome(reported: resultType == .statusOnly ? ((result.result as? Bool) == true ? 1 : 0) : result.count,
                               reportedCodes: try result.objectIDs.map(code).sorted(),
                               historyCodes: try changes.map { try code($0.changedObjectID) }.sorted(),
                               mergedAges: merged, rows: rows)
            }
            let expected = try outcome(.sqlite)
            let answered = try outcome(.postgreSQL)
            #expect(answered == expected, "\(format) \(resultType): PostgreSQL \(answered), SQLite \(expected)")
            #expect(!expected.historyCodes.isEmpty, "\(format) selects rows")
        }
    }
}
