import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A dictionary-backed object with reference semantics, so the in-memory copy of the data can hold
/// inverse relationships (`books.author`, `clubs.members`) as the store does.
final class GraphObject: KeyValueCoding, CustomStringConvertible {
    var values: [String: Any]
    init(_ values: [String: Any]) { self.values = values }
    func value(forKey key: String) throws -> Any? { try values.value(forKey: key) }
    subscript(key: String) -> Any? { values[key] }
    var description: String {
        values.filter { !($0.value is GraphObject) && !($0.value is [GraphObject]) }.description
    }
}

/// The same generated data twice: as rows in an in-memory SQLite store in Core Data's layout, and as
/// dictionary-backed objects (to-one as an object, to-many as an array of objects, inverses included).
struct AgreementFixture {
    let model: ManagedObjectModel
    let database: DatabaseQueue
    /// People by Z_PK.
    var people: [Int64: GraphObject] = [:]
    /// The Z_PKs of people inserted as the sub-entity Employee.
    var employees: Set<Int64> = []

    static let names: [String?] = ["Émile", "émile", "Emile", "EMILE", "", "Zoë", "zoe", "Anne-Marie", "file2", "file10",
                                   "O'Brien", "straße", "STRASSE", nil, "a%b_c", "x*y?", "Ångström", "nana", "Nana", "--;",
                                   // Strings that spell numbers, for comparisons with numbers.
                                   "42", " 17 ", "1e2", "-1.25"]
    static let cities: [String?] = ["Paris", "paris", "Zürich", "zurich", nil, "", "Lyon"]
    static let titles: [String?] = ["Nana", "Germinal", "germinal", "L'Assommoir", nil, "", "Thérèse Raquin", "nana 2"]
    static let dates: [Date] = [-1_000_000, 0, 1, 86_400.5, 700_000_000].map { Date(timeIntervalSinceReferenceDate: $0) }
    static let noteTexts: [String?] = ["todo", "Todo", "TODO", "été", "ete", nil, "", "draft 2", "draft 10", "3", "0.5"]
    static let ids: [UUID] = (0..<3).map { UUID(uuidString: "00000000-0000-0000-0000-00000000000\($0)") ?? UUID() }

    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Person") {
                Attribute("name", .string)
                Attribute("nickname", .string)
                Attribute("age", .integer32)
                Attribute("score", .integer16)
                Attribute("height", .double)
                Attribute("balance", .decimal)
                Attribute("flag", .boolean)
                Attribute("born", .date)
                Attribute("id", .uuid)
                ToOne("address", "Address", inverse: "residents")
                ToMany("books", "Book", inverse: "author")
                ToMany("clubs", "Club", inverse: "members")
                ToMany("favorites", "Book")
                ToMany("notes", "Note", inverse: "owner", ordered: true)
            }
            EntityDescription("Employee", parent: "Person") {
                Attribute("salary", .double)
            }
            EntityDescription("Address") {
                Attribute("city", .string)
                Attribute("zip", .integer64)
                ToMany("residents", "Person", inverse: "address")
            }
            EntityDescription("Book") {
                Attribute("title", .string)
                Attribute("pages", .integer64)
                Attribute("price", .double)
                ToOne("author", "Person", inverse: "books")
            }
            EntityDescription("Note") {
                Attribute("text", .string)
                Attribute("rank", .integer64)
                ToOne("owner", "Person", inverse: "notes")
            }
            EntityDescription("Club") {
                Attribute("name", .string)
                ToMany("members", "Person", inverse: "clubs")
            }
        }
    }

    init(seed: UInt64, people count: Int = 40) throws {
        model = try AgreementFixture.makeModel()
        database = try DatabaseQueue()
        var random = SeededGenerator(seed: seed)
        let model = self.model
        try database.write { db in
            QuerySQLFunctions.register(in: db)
            for statement in model.schema.creationSQL { try db.execute(sql: statement) }
        }
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

        var addresses: [(pk: Int64, values: GraphObject)] = []
        for pk in Int64(1)...6 {
            var values: [String: Any] = [:]
            if let city = pick(AgreementFixture.cities) { values["city"] = city }
            if chance(80) { values["zip"] = Int64(pick([75001, 8000, 69000, 0])) }
            try insert("Address", pk: pk, values: values)
            addresses.append((pk, GraphObject(values.merging(["residents": [GraphObject]()]) { a, _ in a })))
        }
        var clubs: [(pk: Int64, values: GraphObject)] = []
        for pk in Int64(1)...4 {
            var values: [String: Any] = [:]
            if let name = pick(AgreementFixture.names) { values["name"] = name }
            try insert("Club", pk: pk, values: values)
            values["members"] = [GraphObject]()
            clubs.append((pk, GraphObject(values)))
        }
        var bookKey: Int64 = 0
        for pk in Int64(1)...Int64(count) {
            var values: [String: Any] = [:]
            if let name = pick(AgreementFixture.names) { values["name"] = name }
            if chance(30), let nickname = pick(AgreementFixture.names) { values["nickname"] = nickname }
            if chance(85) { values["age"] = Int32(pick([-5, 0, 1, 17, 18, 42, 62, 99])) }
            if chance(80) { values["score"] = Int16(pick([0, 3, 7, 10])) }
            if chance(80) { values["height"] = pick([1.5, 1.78, 2.0, 0.0, -1.25]) }
            if chance(70) { values["balance"] = pick([Decimal(0), Decimal(12.5), Decimal(-3), Decimal(100)]) }
            if chance(85) { values["flag"] = chance(50) }
            if chance(80) { values["born"] = pick(AgreementFixture.dates) }
            if chance(70) { values["id"] = pick(AgreementFixture.ids) }
            let isEmployee = chance(25)
            if isEmployee, chance(80) { values["salary"] = pick([1000.0, 2500.5, 0]) }
            var rowValues = values
            let object = GraphObject(values)
            if chance(75) {
                let address = pick(addresses)
                object.values["address"] = address.values
                address.values.values["residents"] = ((address.values["residents"] as? [GraphObject]) ?? []) + [object]
                rowValues["address"] = address.pk
            }
            try insert(isEmployee ? "Employee" : "Person", pk: pk, values: rowValues)
            if isEmployee { employees.insert(pk) }
            var books: [GraphObject] = []
            var favorites: [GraphObject] = []
            for _ in 0..<Int(random.next() % 4) {
                bookKey += 1
                var book: [String: Any] = [:]
                if let title = pick(AgreementFixture.titles) { book["title"] = title }
                if chance(85) { book["pages"] = Int64(pick([0, 120, 400, 512, 592])) }
                if chance(70) { book["price"] = pick([9.99, 12.5, 15.0, 0.5]) }
                var bookRow = book
                bookRow["author"] = pk
                try insert("Book", pk: bookKey, values: bookRow)
                book["author"] = object
                let bookObject = GraphObject(book)
                books.append(bookObject)
                // A to-many without an inverse: the hidden foreign key on the book's row.
                if chance(40) {
                    try setFavorite(book: bookKey, person: pk)
                    favorites.append(bookObject)
                }
            }
            object.values["books"] = books
            object.values["favorites"] = favorites
            var memberOf: [GraphObject] = []
            for club in clubs where chance(30) {
                try joinClub(person: pk, club: club.pk)
                memberOf.append(club.values)
                club.values.values["members"] = ((club.values["members"] as? [GraphObject]) ?? []) + [object]
            }
            object.values["clubs"] = memberOf
            people[pk] = object
        }
        // Notes: an ordered to-many, drawn from a generator of their own so the rest of the data stays as it
        // was. Rows are inserted in a shuffled order, so the order column, not Z_PK, gives the positions.
        var noteRandom = SeededGenerator(seed: seed &+ 0x5EED)
        var noteRows: [(owner: Int64, position: Int, values: [String: Any])] = []
        for pk in Int64(1)...Int64(count) {
            var notes: [GraphObject] = []
            for position in 0..<Int(noteRandom.next() % 5) {
                var note: [String: Any] = [:]
                let text = AgreementFixture.noteTexts[Int(noteRandom.next() % UInt64(AgreementFixture.noteTexts.count))]
                if let text { note["text"] = text }
                if noteRandom.next() % 100 < 85 { note["rank"] = Int64([0, 1, 2, 3, 5, 8][Int(noteRandom.next() % 6)]) }
                noteRows.append((pk, position, note))
                let noteObject = GraphObject(note)
                noteObject.values["owner"] = people[pk]
                notes.append(noteObject)
            }
            people[pk]?.values["notes"] = notes
        }
        noteRows.shuffle(using: &noteRandom)
        for (index, row) in noteRows.enumerated() {
            // Primary keys follow the shuffled order, so they disagree with the positions.
            try insert("Note", pk: Int64(index + 1), values: row.values.merging(["owner": row.owner]) { a, _ in a })
            try setPosition(note: Int64(index + 1), position: row.position)
        }
    }

    private func setPosition(note: Int64, position: Int) throws {
        guard let entity = model.entitiesByName["Person"], let slot = entity.slotByName["notes"],
              case .toManyByForeignKey(let table, _, let orderColumn?) = model.schema.mapping(for: entity).storage[slot] else {
            throw QueryLanguageError.semantic("notes has no order column")
        }
        try database.write { db in
            try db.execute(sql: "UPDATE \(table) SET \(orderColumn) = ? WHERE Z_PK = ?", arguments: [(position + 1) * 1024, note])
        }
    }

    /// Inserts a row with raw SQL, converting values as the store does.
    private func insert(_ entityName: String, pk: Int64, values: [String: Any]) throws {
        guard let entity = model.entitiesByName[entityName] else { throw QueryLanguageError.semantic("no entity \(entityName)") }
        let mapping = model.schema.mapping(for: entity)
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var arguments: [StoreValue] = [pk.storeValue, entity.entityNumber.storeValue, 1.storeValue]
        for (key, value) in values {
            guard let slot = entity.slotByName[key] else { throw QueryLanguageError.semantic("no key \(key)") }
            switch mapping.storage[slot] {
            case .attribute(let column, _):
                guard let attribute = entity.attributesByName[key] else { continue }
                columns.append(column)
                arguments.append(try ValueConversion.storeValue(value, for: attribute))
            case .toOne(let column, _, _, _):
                columns.append(column)
                arguments.append((value as? Int64)?.storeValue ?? .null)
            default:
                continue
            }
        }
        let sql = "INSERT INTO \(mapping.tableName) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        try database.write { db in try db.execute(sql: sql, arguments: StatementArguments(arguments)) }
    }

    private func setFavorite(book: Int64, person: Int64) throws {
        guard let entity = model.entitiesByName["Person"], let slot = entity.slotByName["favorites"],
              case .toManyByForeignKey(let table, let column, _) = model.schema.mapping(for: entity).storage[slot] else {
            throw QueryLanguageError.semantic("favorites is not a foreign-key relationship")
        }
        try database.write { db in
            try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE Z_PK = ?", arguments: [person, book])
        }
    }

    private func joinClub(person: Int64, club: Int64) throws {
        guard let entity = model.entitiesByName["Person"], let slot = entity.slotByName["clubs"],
              case .toManyByJoinTable(let join) = model.schema.mapping(for: entity).storage[slot] else {
            throw QueryLanguageError.semantic("clubs is not a join-table relationship")
        }
        try database.write { db in
            try db.execute(sql: "INSERT INTO \(join.name) (\(join.sourceColumn), \(join.destinationColumn)) VALUES (?, ?)",
                           arguments: [person, club])
        }
    }

    /// The primary keys SQL returns for the predicate, in order.
    func sqlKeys(_ predicate: QueryPredicate, entity entityName: String = "Person",
                 sort: [QuerySortDescriptor] = []) throws -> [Int64] {
        guard let entity = model.entitiesByName[entityName] else { return [] }
        let compiled = try PredicateSQLCompiler(model: model, entity: entity).compile(predicate: predicate, sortDescriptors: sort)
        let sql = compiled.selectStatement(columns: "t0.Z_PK")
        // Through the store's own stepping, which binds strings whole (GRDB's arguments stop at a NUL).
        return try database.read { db in
            var keys: [Int64] = []
            try db.fetchRowValues(sql: sql, arguments: compiled.arguments, columnCount: 1) { row in
                keys.append(row.primaryKey)
            }
            return keys
        }
    }

    /// The primary keys in-memory evaluation accepts.
    func memoryKeys(_ predicate: QueryPredicate) throws -> Set<Int64> {
        Set(try people.filter { try predicate.evaluate(with: $0.value) }.keys)
    }
}
