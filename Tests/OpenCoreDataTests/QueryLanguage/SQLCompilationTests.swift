import Foundation
import GRDB
import Testing
@testable import OpenCoreData

@Suite struct SQLCompilationTests {
    static func bankModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("FailedBankInfo") {
                Attribute("name", .string)
                Attribute("city", .string)
                ToOne("details", "FailedBankDetails", inverse: "info")
            }
            EntityDescription("FailedBankDetails") {
                Attribute("closeDate", .date)
                Attribute("zip", .integer32)
                ToOne("info", "FailedBankInfo", inverse: "details")
            }
        }
    }

    func compile(_ format: String, _ arguments: Any..., entity: String = "FailedBankInfo",
                 sort: [QuerySortDescriptor] = [], model: ManagedObjectModel? = nil) throws -> PredicateSQLCompiler.CompiledQuery {
        let model = try model ?? SQLCompilationTests.bankModel()
        guard let entity = model.entitiesByName[entity] else { throw QueryLanguageError.semantic("no entity") }
        return try PredicateSQLCompiler(model: model, entity: entity)
            .compile(predicate: QueryPredicate(format: format, argumentArray: arguments), sortDescriptors: sort)
    }

    @Test func toOneStepsJoinOnceAndSortThroughTheJoin() throws {
        let date = Date(timeIntervalSinceReferenceDate: 100)
        let compiled = try compile("details.closeDate > %@ AND details.zip == 5 AND name == 'x'", date,
                                   sort: [QuerySortDescriptor(key: "details.closeDate", ascending: false)])
        #expect(compiled.fromClause == "ZFAILEDBANKINFO t0 LEFT OUTER JOIN ZFAILEDBANKDETAILS t1 ON t0.ZDETAILS = t1.Z_PK")
        #expect(compiled.whereClause == "((t1.ZCLOSEDATE > ?) AND (t1.ZZIP IS ?) AND (t0.ZNAME IS ?))")
        #expect(compiled.orderByClause == "t1.ZCLOSEDATE DESC")
        #expect(compiled.arguments == [(100.0).storeValue, (5).storeValue, "x".storeValue])
    }

    @Test func nilComparisonsAndModifiers() throws {
        #expect(try compile("name == nil").whereClause == "t0.ZNAME IS NULL")
        #expect(try compile("name != nil").whereClause == "t0.ZNAME IS NOT NULL")
        #expect(try compile("NOT name < 'b'").whereClause == "NOT COALESCE((t0.ZNAME < ?), 0)")
        #expect(try compile("name BEGINSWITH[cd] 'e'").whereClause == "ocd_compare('BEGINSWITH', 3, t0.ZNAME, ?)")
        #expect(try compile("name IN {'a', nil}").whereClause == "(t0.ZNAME IN (?) OR t0.ZNAME IS NULL)")
        #expect(try compile("name ==[c] 'a'", sort: [QuerySortDescriptor(key: "name", comparator: .localizedStandardCompare)])
            .orderByClause == "t0.ZNAME COLLATE OCD_LOCALIZED_STANDARD")
    }

    @Test func valuesOnlyReachSQLAsParameters() throws {
        let hostile = "'); DROP TABLE ZFAILEDBANKINFO; --"
        let compiled = try compile("name == %@ OR city CONTAINS %@", hostile, "\u{0}")
        #expect(compiled.whereClause?.contains("DROP") == false)
        #expect(compiled.arguments == [hostile.storeValue, "\u{0}".storeValue])
    }

    @Test func unknownKeysNameTheEntityAndKey() throws {
        do {
            _ = try compile("details.nope == 1")
            Issue.record("expected an error")
        } catch let error as QueryLanguageError {
            #expect(error.message.contains("FailedBankDetails"))
            #expect(error.message.contains("nope"))
        }
        #expect(throws: QueryLanguageError.self) { try compile("name.length == 1") }
        #expect(throws: QueryLanguageError.self) {
            _ = try compile("TRUEPREDICATE", sort: [QuerySortDescriptor(key: "bogus")])
        }
    }

    @Test func subEntitiesFilterOnEntityNumber() throws {
        let model = try AgreementFixture.makeModel()
        let employee = try compile("salary > 10", entity: "Employee", model: model)
        guard let number = model.entitiesByName["Employee"]?.entityNumber else { Issue.record("no Employee"); return }
        #expect(employee.whereClause == "t0.Z_ENT IN (\(number)) AND (t0.ZSALARY > ?)")
        let person = try compile("TRUEPREDICATE", entity: "Person", model: model)
        #expect(person.whereClause?.hasPrefix("t0.Z_ENT IN (") == true)
        #expect(try compile("TRUEPREDICATE", entity: "Book", model: model).whereClause == nil)
    }

    @Test func subEntityFetchesAgreeWithMemory() throws {
        let fixture = try AgreementFixture(seed: 11)
        for format in ["salary > 100 OR salary == nil", "TRUEPREDICATE", "salary == 0 AND ANY books.pages > 100", "name BEGINSWITH[cd] 'e'"] {
            let predicate = try QueryPredicate(format: format)
            let sql = Set(try fixture.sqlKeys(predicate, entity: "Employee"))
            let memory = try fixture.memoryKeys(predicate).intersection(fixture.employees)
            #expect(sql == memory, "\(format)")
        }
        #expect(!fixture.employees.isEmpty)
        #expect(Set(try fixture.sqlKeys(.truePredicate, entity: "Person")).count == fixture.people.count)
    }

    @Test func toManyCompilesToCorrelatedSubqueries() throws {
        let model = try AgreementFixture.makeModel()
        let any = try compile("ANY books.title == 'x'", entity: "Person", model: model)
        #expect(any.whereClause?.contains("EXISTS (SELECT 1 FROM ZBOOK t1 WHERE t1.ZAUTHOR = t0.Z_PK AND (t1.ZTITLE IS ?))") == true)
        let count = try compile("clubs.@count > 1", entity: "Person", model: model)
        #expect(count.whereClause?.contains("(SELECT COUNT(*) FROM Z_") == true)
        #expect(throws: QueryLanguageError.self) { _ = try compile("books.title", entity: "Person", model: model) }
        #expect(throws: QueryLanguageError.self) { _ = try compile("books.@sum.title.x > 1", entity: "Person", model: model) }
    }

    @Test func expressionsCompileForBatchUpdates() throws {
        let model = try SQLCompilationTests.bankModel()
        guard let entity = model.entitiesByName["FailedBankDetails"] else { Issue.record("no entity"); return }
        let compiled = try PredicateSQLCompiler(model: model, entity: entity)
            .compile(expression: QueryExpression(format: "zip + 1"))
        #expect(compiled.sql == "(t0.ZZIP + ?)")
        #expect(compiled.arguments == [(1).storeValue])
        #expect(compiled.fromClause == "ZFAILEDBANKDETAILS t0")
        let total = try PredicateSQLCompiler(model: model, entity: entity)
            .compile(fetchedValue: QueryExpression(format: "sum:(zip)"))
        #expect(total.sql == "TOTAL(t0.ZZIP)")
        guard let info = model.entitiesByName["FailedBankInfo"] else { return }
        let latest = try PredicateSQLCompiler(model: model, entity: info)
            .compile(fetchedValue: QueryExpression(format: "max:(details.closeDate)"))
        #expect(latest.sql == "MAX(t1.ZCLOSEDATE)")
        #expect(latest.fromClause == "ZFAILEDBANKINFO t0 LEFT OUTER JOIN ZFAILEDBANKDETAILS t1 ON t0.ZDETAILS = t1.Z_PK")
    }

    @Test func objectsAndIDsBindTheirPrimaryKeys() throws {
        let model = try SQLCompilationTests.bankModel()
        guard let details = model.entitiesByName["FailedBankDetails"] else { Issue.record("no entity"); return }
        let a = ManagedObjectID(entity: details, primaryKey: 3, store: nil)
        let b = ManagedObject(entity: details, id: ManagedObjectID(entity: details, primaryKey: 4, store: nil))
        let compiled = try compile("details == %@ OR details IN %@ OR SELF IN %@", a, [a, b], [b], model: model)
        #expect(compiled.whereClause == "((t0.ZDETAILS IS ?) OR (t0.ZDETAILS IN (?, ?)) OR (t0.Z_PK IN (?)))")
        #expect(compiled.arguments == [3, 3, 4, 4].map { Int64($0).storeValue })
        #expect(throws: QueryLanguageError.self) {
            _ = try compile("details == %@", ManagedObjectID(temporaryFor: details), model: model)
        }
    }

    func error(_ format: String, _ arguments: Any..., entity: String = "Person") -> String {
        do {
            let model = try AgreementFixture.makeModel()
            guard let entity = model.entitiesByName[entity] else { return "no entity" }
            _ = try PredicateSQLCompiler(model: model, entity: entity)
                .compile(predicate: QueryPredicate(format: format, argumentArray: arguments))
            return ""
        } catch let error as QueryLanguageError {
            return error.message
        } catch {
            return "untyped: \(error)"
        }
    }

    @Test func indexesCompileToCountsAndOrderedSubqueries() throws {
        let model = try AgreementFixture.makeModel()
        let size = try compile("books[SIZE] > 1", entity: "Person", model: model).whereClause
        #expect(size == (try compile("books.@count > 1", entity: "Person", model: model).whereClause))
        #expect(size?.contains("(SELECT COUNT(*) FROM ZBOOK t1 WHERE t1.ZAUTHOR = t0.Z_PK)") == true)
        let first = try compile("notes[FIRST].text == 'x'", entity: "Person", model: model).whereClause ?? ""
        #expect(first.contains("(SELECT t1.ZTEXT FROM ZNOTE t1 WHERE t1.ZOWNER = t0.Z_PK ORDER BY t1.Z_FOK_OWNER, t1.Z_PK LIMIT 1 OFFSET 0)"))
        let last = try compile("notes.rank[LAST] > 1", entity: "Person", model: model).whereClause ?? ""
        #expect(last.contains("ORDER BY t1.Z_FOK_OWNER DESC, t1.Z_PK DESC LIMIT 1 OFFSET 0"))
        #expect(try compile("notes[%d] == nil", 2, entity: "Person", model: model).whereClause?.contains("LIMIT 1 OFFSET 2") == true)
        #expect(try compile("notes[-1] == nil", entity: "Person", model: model).whereClause?.hasSuffix("AND NULL IS NULL") == true)
        // Literal collections fold to a constant.
        let literal = try compile("{1, 2, 3}[1] == age", entity: "Person", model: model)
        #expect(literal.whereClause?.contains("(? IS t0.ZAGE)") == true)
        #expect(literal.arguments.last == (2).storeValue)
    }

    @Test func indexesSQLCannotAnswerThrowNamingThePathAndPosition() {
        let unordered = error("books[FIRST].title == 'x'")
        #expect(unordered.contains("books[FIRST].title"))
        #expect(unordered.contains("'Person.books' is not an ordered relationship"))
        #expect(error("books.title[2] == 'x'").contains("books.title[2]"))
        let computed = error("notes[score].text == 'x'")
        #expect(computed.contains("notes[score]") && computed.contains("constant"))
        #expect(error("name[SIZE] == 1").contains("not a to-many relationship"))
        #expect(error("SUBQUERY(books, $b, $b.pages > 1)[FIRST] == nil").contains("only [SIZE]"))
        #expect(error("books.@distinctUnionOfObjects.title[LAST] == 'x'").contains("no order"))
        #expect(error("books.@count[SIZE] == 1").contains("gives a number"))
    }

    @Test func ternariesAndFunctionsCompile() throws {
        let model = try AgreementFixture.makeModel()
        let ternary = try compile("TERNARY(age > 18, score, 0) == 1", entity: "Person", model: model).whereClause ?? ""
        #expect(ternary.contains("CASE WHEN (t0.ZAGE > ?) THEN t0.ZSCORE ELSE ? END"))
        let sqrt = try compile("sqrt:(age) > 2 AND uppercase:(name) == 'X'", entity: "Person", model: model).whereClause ?? ""
        #expect(sqrt.contains("ocd_function('sqrt:', t0.ZAGE)") && sqrt.contains("ocd_function('uppercase:', t0.ZNAME)"))
        let arithmetic = try compile("add:to:(age, 1) == 2", entity: "Person", model: model).whereClause
        #expect(arithmetic == (try compile("age + 1 == 2", entity: "Person", model: model).whereClause))
        let median = try compile("median:(books.pages) > 1", entity: "Person", model: model).whereClause ?? ""
        #expect(median.contains("(SELECT ocd_median(t1.ZPAGES) FROM ZBOOK t1 WHERE t1.ZAUTHOR = t0.Z_PK)"))
        #expect(try compile("random() < 1", entity: "Person", model: model).whereClause?.contains("ocd_random()") == true)
        guard let person = model.entitiesByName["Person"] else { return }
        let fetched = try PredicateSQLCompiler(model: model, entity: person).compile(fetchedValue: QueryExpression(format: "median:(age)"))
        #expect(fetched.sql == "ocd_median(t0.ZAGE)")
    }

    @Test func unionsCompileWhereTheyAreMembersOrCounts() throws {
        let model = try AgreementFixture.makeModel()
        let count = try compile("books.@distinctUnionOfObjects.title.@count > 1", entity: "Person", model: model).whereClause ?? ""
        #expect(count.contains("(SELECT COUNT(DISTINCT t1.ZTITLE) FROM ZBOOK t1 WHERE t1.ZAUTHOR = t0.Z_PK)"))
        let plain = try compile("count:(books.@unionOfObjects.title) > 1", entity: "Person", model: model).whereClause ?? ""
        #expect(plain.contains("COUNT(t1.ZTITLE)"))
        let member = try compile("'x' IN books.@distinctUnionOfObjects.title", entity: "Person", model: model).whereClause ?? ""
        #expect(member.contains("t1.ZTITLE IS NOT NULL AND"))
        let scalar = error("uppercase:(books.@unionOfObjects.title) == 'X'")
        #expect(scalar.contains("@unionOfObjects") && scalar.contains("IN, CONTAINS"))
        #expect(error("books.@unionOfObjects == nil").contains("needs a key after it"))
    }
}
