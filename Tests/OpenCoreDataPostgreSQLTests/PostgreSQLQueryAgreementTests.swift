import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// The query language on PostgreSQL must select exactly what in-memory evaluation selects, on the same
/// generated predicates and data as the SQLite agreement test (SharedWithSQLite/ holds the same files).
/// What PostgreSQL's SQL cannot answer alike (the compiler's ``QueryDialectRefusal``) is answered in the app on
/// the rows the rest narrows (`ResidualQuery`), so every predicate must be answered, and agree.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLQueryAgreementTests {
    @Test(arguments: Array(1...4) as [UInt64])
    func randomPredicatesAgree(seed: UInt64) throws {
        try agree(seed: seed, extendedOnly: false)
    }

    @Test(arguments: Array(5...8) as [UInt64])
    func indexesTernariesFunctionsAndUnionsAgree(seed: UInt64) throws {
        try agree(seed: seed, extendedOnly: true)
    }

    @Test(arguments: Array(9...12) as [UInt64])
    func numbersComparedWithStringsAgree(seed: UInt64) throws {
        try agree(seed: seed, extendedOnly: false, mixedKindsOnly: true)
    }

    func agree(seed: UInt64, extendedOnly: Bool, mixedKindsOnly: Bool = false) throws {
        let fixture = try AgreementFixture(seed: seed)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in
            try agree(fixture, store, seed: seed, extendedOnly: extendedOnly, mixedKindsOnly: mixedKindsOnly)
        }
    }

    func agree(_ fixture: AgreementFixture, _ store: PostgreSQLStore, seed: UInt64, extendedOnly: Bool, mixedKindsOnly: Bool) throws {
        let person = try #require(fixture.model.entitiesByName["Person"])

        var generator = PredicateGenerator(random: SeededGenerator(seed: seed &* 7919))
        var failures = 0, answered = 0, discriminating = 0
        var refusals: [QueryDialectRefusal.Construct: Int] = [:]
        defer {
            let counts = refusals.sorted { $0.value > $1.value }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            print("PostgreSQL agreement, seed \(seed): \(answered) of 400 answered; refused: \(counts)")
        }
        for _ in 0..<400 {
            let (format, arguments) = generator.predicate(extendedOnly: extendedOnly, mixedKindsOnly: mixedKindsOnly)
            let predicate = try QueryPredicate(format: format, argumentArray: arguments)
            let memory = try fixture.memoryKeys(predicate)
            let keys: [Int64]
            do {
                keys = try store.fetchRows(entity: person, predicate: predicate).map(\.primaryKey)
            } catch let refusal as QueryDialectRefusal {
                refusals[refusal.construct, default: 0] += 1
                continue
            } catch {
                Issue.record("PostgreSQL failed for \(format) \(arguments): \(error)")
                failures += 1
                if failures > 10 { return }
                continue
            }
            answered += 1
            #expect(keys.count == Set(keys).count, "duplicate rows for \(format)")
            if !memory.isEmpty && memory.count < fixture.people.count { discriminating += 1 }
            if Set(keys) != memory {
                failures += 1
                Issue.record("""
                    disagreement for \(format) \(arguments)
                    PostgreSQL only: \(Set(keys).subtracting(memory).sorted().prefix(3).map { "\($0): \(fixture.people[$0]?.description ?? "")" })
                    memory only: \(memory.subtracting(keys).sorted().prefix(3).map { "\($0): \(fixture.people[$0]?.description ?? "")" })
                    """)
                if failures > 10 { return }
            }
        }
        // Nothing is refused any more: what the server cannot say is evaluated in the app.
        #expect(answered >= 395, "only \(answered) of 400 predicates were answered on PostgreSQL")
        #expect(discriminating >= 80, "only \(discriminating) predicates selected some but not all rows")
    }

    /// Equality with a constant runs as `=` on PostgreSQL (IS NOT DISTINCT FROM costs more per row and uses
    /// no index). A NULL column then compares as NULL instead of false: negations, quantifiers, TERNARY and
    /// counts must still select what memory selects.
    @Test func equalityWithAConstantAgreesOnNilColumns() throws {
        let fixture = try AgreementFixture(seed: 6)
        let person = try #require(fixture.model.entitiesByName["Person"])
        let compiled = try PredicateSQLCompiler(model: fixture.model, entity: person, dialect: PostgreSQLDialect())
            .compile(predicate: try QueryPredicate(format: "age == 42 AND 'Nana' == name"))
        #expect(compiled.whereClause?.contains("IS NOT DISTINCT FROM") == false, "\(compiled.whereClause ?? "")")
        let formats = [
            "age == 42", "NOT (age == 42)", "NOT (42 == age)", "NOT (name == 'Nana')", "NOT (flag == YES)",
            "NOT (flag == NO) AND NOT (score == 0)", "NOT (age == 42 OR name == 'Zoë')", "NOT (height == 1.5)",
            "NOT (balance == 12.5)", "NONE books.title == 'Nana'",
            "ALL books.title == 'Nana'", "ANY books.title == 'Nana'", "SUBQUERY(books, $b, NOT ($b.title == 'Nana')).@count > 0",
            "TERNARY(age == 42, 1, 0) == 0",
        ]
        // Two columns keep the null-safe form: nil == nil holds in memory. A to-one path selects every row
        // of this fixture when negated, so it is checked without the split.
        let columnFormats = ["name == nickname", "NOT (name == nickname)", "NOT (address.city == 'Paris')"]
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in
            for format in formats + columnFormats {
                let predicate = try QueryPredicate(format: format)
                let keys = try store.fetchRows(entity: person, predicate: predicate).map(\.primaryKey)
                let memory = try fixture.memoryKeys(predicate)
                #expect(Set(keys) == memory, "\(format)")
                #expect(try store.count(entity: person, predicate: predicate) == memory.count, "\(format)")
                if formats.contains(format) {
                    #expect(!memory.isEmpty && memory.count < fixture.people.count, "\(format) does not split the rows")
                }
            }
        }
    }

    @Test(arguments: [4, 5] as [UInt64])
    func sortOrdersAgree(seed: UInt64) throws {
        let fixture = try AgreementFixture(seed: seed)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in try sortOrdersAgree(fixture, store) }
    }

    func sortOrdersAgree(_ fixture: AgreementFixture, _ store: PostgreSQLStore) throws {
        let person = try #require(fixture.model.entitiesByName["Person"])
        let textKeys: Set<String> = ["name", "nickname", "address.city"]
        for key in ["name", "nickname", "age", "height", "born", "address.city", "flag", "balance", "id", "books.@count", "address.zip", "books.@sum.pages"] {
            for comparator in StringComparison.allCases {
                for ascending in [true, false] {
                    let descriptor = QuerySortDescriptor(key: key, ascending: ascending, comparator: comparator)
                    // Text sorted by a localized selector is refused by the compiler and sorted in the app.
                    let refusal = try PostgreSQLAgreementData.refusal(fixture, person, sort: [descriptor])
                    #expect((refusal != nil) == (textKeys.contains(key) && ![.compare, .caseInsensitiveCompare].contains(comparator)),
                            "\(key) \(comparator): \(String(describing: refusal))")
                    let keys = try store.fetchRows(entity: person, predicate: nil, sortDescriptors: [descriptor]).map(\.primaryKey)
                    #expect(keys.count == fixture.people.count)
                    // SQLite's order on the same rows, up to ties (rows the descriptor calls equal).
                    let sqlite = try fixture.sqlKeys(.truePredicate, sort: [descriptor])
                    #expect(sqlite.count == keys.count)
                    for (a, b) in zip(keys, sqlite) {
                        #expect(try descriptor.compare(fixture.people[a], fixture.people[b]) == .orderedSame,
                                "\(key) \(comparator) \(ascending): PostgreSQL \(a), SQLite \(b)")
                    }
                    for (a, b) in zip(keys, keys.dropFirst()) {
                        let order = try descriptor.compare(fixture.people[a], fixture.people[b])
                        #expect(order != .orderedDescending,
                                "\(key) \(comparator) \(ascending): \(String(describing: try? fixture.people[a]?.value(forKeyPath: key))) before \(String(describing: try? fixture.people[b]?.value(forKeyPath: key)))")
                    }
                }
            }
        }
    }

    /// Counting, limits and offsets, and the sub-entity filter, against the SQLite store's own answer.
    @Test func countLimitOffsetAndSubentitiesMatchSQLite() throws {
        let fixture = try AgreementFixture(seed: 3)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in try countLimitOffsetAndSubentities(fixture, store) }
    }

    func countLimitOffsetAndSubentities(_ fixture: AgreementFixture, _ store: PostgreSQLStore) throws {
        let person = try #require(fixture.model.entitiesByName["Person"])
        let employee = try #require(fixture.model.entitiesByName["Employee"])
        let predicate = try QueryPredicate(format: "age >= 18 OR name BEGINSWITH 'E'")
        let byAge = [QuerySortDescriptor(key: "age"), QuerySortDescriptor(key: "name", ascending: false)]

        let all = try store.fetchRows(entity: person, predicate: predicate, sortDescriptors: byAge).map(\.primaryKey)
        #expect(Set(all) == (try fixture.memoryKeys(predicate)))
        #expect(try store.count(entity: person, predicate: predicate) == all.count)
        let page = try store.fetchRows(entity: person, predicate: predicate, sortDescriptors: byAge, limit: 5, offset: 3)
        #expect(page.map(\.primaryKey) == Array(all.dropFirst(3).prefix(5)))
        #expect(try store.fetchRows(entity: person, predicate: predicate, limit: 0, offset: all.count).isEmpty)

        // Rows come back whole, as the SQLite store reads them.
        let sqliteRows = try fixture.database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM \(person.tableName) ORDER BY Z_PK").map { Array($0.databaseValues.map(StoreValue.init)) }
        }
        let rows = try store.fetchRows(entity: person, predicate: nil, sortDescriptors: [QuerySortDescriptor(key: "id")])
            .sorted { $0.primaryKey < $1.primaryKey }
        #expect(rows.map { Array($0) } == sqliteRows)

        #expect(try store.count(entity: employee, predicate: nil) == fixture.employees.count)
        #expect(try store.count(entity: person, predicate: nil, includesSubentities: false)
                == fixture.people.count - fixture.employees.count)
        let refusal = #expect(throws: ObjectGraphError.self) { try store.fetchRows(entity: person, predicate: nil, limit: -1) }
        guard case .negativeFetchBound(let entity, let bound, let value) = refusal else {
            Issue.record("not a negative bound: \(String(describing: refusal))")
            return
        }
        #expect(entity == person.name && bound == "limit" && value == -1)
    }

    /// Each construct the dialect refuses is refused by name by the compiler, and the store then answers it
    /// in the app as memory does.
    @Test func refusalsNameTheConstructAndTheComparison() throws {
        let fixture = try AgreementFixture(seed: 1, people: 3)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in try refusals(fixture, store) }
    }

    func refusals(_ fixture: AgreementFixture, _ store: PostgreSQLStore) throws {
        let person = try #require(fixture.model.entitiesByName["Person"])
        let cases: [(String, [Any], QueryDialectRefusal.Construct)] = [
            ("name ==[cd] 'STRASSE'", [], .foldingOptions),
            ("name BEGINSWITH[d] 'E'", [], .foldingOptions),
            ("name MATCHES %@", ["\\d+"], .regularExpression),
            ("name LIKE nickname", [], .computedLikePattern),
            ("canonical:(name) == 'e'", [], .function),
            ("length:(age) == 4", [], .operandKind),
            ("CAST(name, 'NSNumber') > 1", [], .function),
            ("CAST(height, 'NSString') == '1.5'", [], .function),
            ("modulus:by:(height, 0.5) == 0", [], .function),
            ("median:(books.title) > 4", [], .operandKind),
            ("name == %@", ["nana\u{0}"], .nulCharacter),
            ("canonical:(age) == nickname", [], .function),
            ("{1, 2}[name] == 1", [], .operandKind),
            ("{name, age}[score] == 1", [], .operandKind),
            ("TERNARY(flag == YES, name, age) == 1", [], .operandKind),
            ("id == 'abc'", [], .operandKind),
            ("id < 3", [], .operandKind),
            ("address != 'Paris'", [], .operandKind),
        ]
        for (format, arguments, construct) in cases {
            let predicate = try QueryPredicate(format: format, argumentArray: arguments)
            let error = try PostgreSQLAgreementData.refusal(fixture, person, predicate: predicate)
            #expect(error?.construct == construct, "\(format): \(String(describing: error))")
            #expect(error?.dialect == "PostgreSQL")
            #expect(error?.description.hasPrefix("PostgreSQL cannot compile ") == true)
            switch Result(catching: { try fixture.memoryKeys(predicate) }) {
            case .success(let memory):
                #expect(Set(try store.fetchRows(entity: person, predicate: predicate).map(\.primaryKey)) == memory, "\(format)")
            case .failure:
                #expect(throws: (any Error).self, "\(format)") { try store.fetchRows(entity: person, predicate: predicate) }
            }
        }
    }
}

/// The agreement fixture's rows, copied from its SQLite database into a PostgreSQL store's tables.
enum PostgreSQLAgreementData {
    /// What the PostgreSQL dialect's compiler refuses of a fetch (the store answers it in the app), or nil.
    static func refusal(_ fixture: AgreementFixture, _ entity: EntityDescription, predicate: QueryPredicate? = nil,
                        sort: [QuerySortDescriptor] = []) throws -> QueryDialectRefusal? {
        do {
            _ = try PredicateSQLCompiler.compile(model: fixture.model, entity: entity, predicate: predicate,
                                                 sortDescriptors: sort, dialect: PostgreSQLDialect())
            return nil
        } catch let refusal as QueryDialectRefusal {
            return refusal
        }
    }

    /// Runs `body` on a store in a schema of its own holding the fixture's rows, dropped afterwards.
    static func withCopy(of fixture: AgreementFixture, _ body: (PostgreSQLStore) throws -> Void) throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 1)
        defer { PostgreSQLTestServer.drop(configuration) }
        let store = try PostgreSQLStore(model: fixture.model, configuration: configuration)
        defer { store.close() }
        try copy(fixture, to: store)
        try body(store)
    }

    static func copy(_ fixture: AgreementFixture, to store: PostgreSQLStore) throws {
        let schema = fixture.model.schema
        let tables = schema.tables.filter { !$0.name.hasPrefix("Z_") }.map { ($0.name, $0.columns.map(\.name)) }
            + schema.joinTables.map { ($0.name, $0.columns) }
        for (table, columns) in tables {
            let list = columns.joined(separator: ", ")
            let rows = try fixture.database.read { db in
                try Row.fetchAll(db, sql: "SELECT \(list) FROM \(table)").map { Array($0.databaseValues.map(StoreValue.init)) }
            }
            guard !rows.isEmpty else { continue }
            let placeholders = "(" + columns.map { _ in "?" }.joined(separator: ", ") + ")"
            try store.pool.withSession { session in
                try session.execute("INSERT INTO \(table) (\(list)) VALUES "
                                    + Array(repeating: placeholders, count: rows.count).joined(separator: ", "),
                                    rows.flatMap { $0 })
            }
        }
    }
}

/// `length:` counts UTF-16 code units, as memory (NSString) does, beyond the BMP and across combining marks.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLStringLengthTests {
    @Test func lengthCountsUTF16CodeUnits() throws {
        let texts = ["", "a", "é", "e\u{301}", "😀", "a😀b😀", "𝔘𝔫𝔦", "ß", "\u{10FFFF}", "\u{FFFF}x"]
        let fixture = try AgreementFixture(seed: 2, people: texts.count)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in
            let person = try #require(fixture.model.entitiesByName["Person"])
            for (offset, text) in texts.enumerated() {
                let key = Int64(offset + 1)
                fixture.people[key]?.values["name"] = text
                try store.pool.withSession { try $0.execute("UPDATE \(person.tableName) SET ZNAME = ? WHERE Z_PK = ?",
                                                            [text.storeValue, key.storeValue]) }
            }
            for length in 0...7 {
                let predicate = try QueryPredicate(format: "length:(name) == %d", length)
                let keys = try store.fetchRows(entity: person, predicate: predicate).map(\.primaryKey)
                #expect(Set(keys) == (try fixture.memoryKeys(predicate)), "length \(length)")
            }
        }
    }
}

/// Numbers compared with text read from a row: PostgreSQL reads the text as the number it spells exactly as
/// memory does, on spellings the generated data lacks.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLSpelledNumberTests {
    static let spellings = ["9223372036854775807", "9223372036854775808", "-9223372036854775809", ".5", "5.", "+3",
                            "\t7\n", "١٢", "0x10", "1e2", "1E+2", "2e-1", " ", "-", "1 2", "17abc", "inf", "nan", "00042",
                            "18.0", "-1.25", "1.78"]

    @Test func textSpellingNumbersComparesAsMemoryReadsIt() throws {
        let fixture = try AgreementFixture(seed: 2, people: Self.spellings.count)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in
            let person = try #require(fixture.model.entitiesByName["Person"])
            for (offset, spelling) in Self.spellings.enumerated() {
                let key = Int64(offset + 1)
                fixture.people[key]?.values["name"] = spelling
                try store.pool.withSession { try $0.execute("UPDATE \(person.tableName) SET ZNAME = ? WHERE Z_PK = ?",
                                                            [spelling.storeValue, key.storeValue]) }
            }
            fixture.people[3]?.values["name"] = nil
            try store.pool.withSession { try $0.execute("UPDATE \(person.tableName) SET ZNAME = NULL WHERE Z_PK = 3") }
            for number in ["age", "height", "balance", "flag", "born", "books.@count", "books.@max.pages", "3", "0.5", "1e2", "-5"] {
                for op in ["==", "!=", "<", "<=", ">", ">="] {
                    for format in ["\(number) \(op) name", "name \(op) \(number)"] {
                        let predicate = try QueryPredicate(format: format)
                        let keys = try store.fetchRows(entity: person, predicate: predicate).map(\.primaryKey)
                        #expect(Set(keys) == (try fixture.memoryKeys(predicate)), "\(format)")
                    }
                }
            }
        }
    }
}
