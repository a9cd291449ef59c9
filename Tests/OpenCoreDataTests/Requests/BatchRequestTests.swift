import Foundation
import GRDB
import Testing
@testable import OpenCoreData

@Suite struct BatchRequestTests {
    static func stack(items: Int = 10) throws -> (TestStack, [ManagedObjectID]) {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let list = try context.insertNewObject(forEntityName: "TodoList")
        try list.setValue("L", forKey: "title")
        var objects: [ManagedObject] = []
        for index in 0..<items {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("i\(index)", forKey: "name")
            try item.setValue(Int16(index % 3), forKey: "priority")
            try item.setValue(list, forKey: "list")
            objects.append(item)
        }
        try context.save()
        return (stack, objects.map(\.objectID))
    }

    func rows(_ stack: TestStack, _ sql: String) throws -> [Row] {
        let queue = try DatabaseQueue(path: stack.url.path)
        return try queue.read { try Row.fetchAll($0, sql: sql) }
    }

    @Test func batchUpdateWritesEveryRowAndBumpsVersions() throws {
        let (stack, ids) = try Self.stack()
        let context = stack.context()
        let request = BatchUpdateRequest(entityName: "Item")
        request.propertiesToUpdate = ["done": true, "score": 1.5]
        request.resultType = .objectIDs
        let result = try #require(try context.execute(request) as? BatchUpdateResult)
        #expect(Set(result.objectIDs) == Set(ids))
        let stored = try rows(stack, "SELECT ZDONE, ZSCORE, Z_OPT FROM ZITEM")
        #expect(stored.allSatisfy { ($0[0] as Int) == 1 && ($0[1] as Double) == 1.5 && ($0[2] as Int) == 2 })

        request.resultType = .count
        #expect((try context.execute(request) as? BatchResult)?.count == 10)
        request.resultType = .statusOnly
        #expect((try context.execute(request) as? BatchResult)?.result as? Bool == true)
    }

    @Test func batchUpdateRefusesBadInputBeforeTouchingRows() throws {
        let (stack, _) = try Self.stack()
        let context = stack.context()
        // nil: refused as a value that does not fit, which other tests name.
        let refusals: [([String: Any], ObjectGraphError?)] = [
            (["nope": 1], .unknownKey(entity: "Item", key: "nope")),
            (["list": NSNull()], .notABatchAttribute(entity: "Item", key: "list", row: nil)),
            (["name": 42], nil), (["priority": 100_000], nil), ([:], .emptyBatchUpdate(entity: "Item")),
        ]
        for (properties, expected) in refusals {
            let request = BatchUpdateRequest(entityName: "Item")
            request.propertiesToUpdate = properties.merging(["done": true]) { a, _ in a }
            if properties.isEmpty { request.propertiesToUpdate = [:] }
            expectObjectGraphError(expected, "\(properties)") { try context.execute(request) }
        }
        let missing = BatchUpdateRequest(entityName: "Nope")
        missing.propertiesToUpdate = ["done": true]
        #expect(throws: ObjectGraphError.self) { try context.execute(missing) }
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZITEM WHERE ZDONE = 1")[0][0] as Int == 0)
        #expect(try rows(stack, "SELECT MAX(Z_OPT) FROM ZITEM")[0][0] as Int == 1)
    }

    /// A batch update whose new values meet a uniqueness constraint (here of two keys, the second constraint)
    /// is refused whole as the validation failure a save gives, naming the entity and the constraint's keys,
    /// not as SQLite's constraint code.
    @Test func batchUpdateMeetingAUniquenessConstraintNamesEntityAndKeys() throws {
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "label", type: .string),
            AttributeDescription(name: "code", type: .integer64),
            AttributeDescription(name: "shade", type: .string),
        ])
        tag.uniquenessConstraints = [["label"], ["code", "shade"]]
        let stack = try TestStack(model: try ManagedObjectModel(entities: [tag]))
        let context = stack.context()
        for (label, code) in [("red", 1), ("blue", 2)] as [(String, Int64)] {
            let object = try context.insertNewObject(forEntityName: "Tag")
            try object.setValue(label, forKey: "label")
            try object.setValue(code, forKey: "code")
            try object.setValue("dark", forKey: "shade")
        }
        try context.save()
        let request = BatchUpdateRequest(entityName: "Tag")
        request.propertiesToUpdate = ["code": Int64(7)]
        do {
            _ = try stack.context().execute(request)
            Issue.record("a batch update stored two tags with one code and shade")
        } catch let ObjectGraphError.validationFailed(failures) {
            #expect(failures.map(\.entity) == ["Tag"] && failures.map(\.key) == ["code,shade"])
            #expect(failures.map(\.rule) == [.uniquenessViolation])
        }
        #expect(try rows(stack, "SELECT ZCODE FROM ZTAG ORDER BY ZCODE").map { $0[0] as Int } == [1, 2])
    }

    @Test func mergingBatchResultsRefreshesLiveObjects() throws {
        let (stack, ids) = try Self.stack()
        let live = stack.context(.privateQueue)
        let registered: [ManagedObject] = try live.performAndWait {
            try ids.prefix(3).map { id in
                let object = try live.existingObject(with: id)
                _ = try object.value(forKey: "done")
                return object
            }
        }
        let worker = stack.context()
        let request = BatchUpdateRequest(entityName: "Item")
        request.propertiesToUpdate = ["done": true]
        request.resultType = .objectIDs
        let result = try #require(try worker.execute(request) as? BatchResult)
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: ContextDidSave(updated: Set(result.objectIDs)), into: [live])
        let values: [Bool?] = try live.performAndWait { try registered.map { try $0.value(forKey: "done") as? Bool } }
        #expect(values == [true, true, true])
        // After the merge the objects carry the new version, so saving an edit does not conflict.
        try live.performAndWait {
            try registered[0].setValue("edited", forKey: "name")
            try live.save()
        }
    }

    @Test func batchDeleteCascadesAndNullifiesConsistently() throws {
        let (stack, ids) = try Self.stack()
        let context = stack.context()
        let tag = try context.insertNewObject(forEntityName: "Tag")
        try tag.setValue("t", forKey: "label")
        try context.existingObject(with: ids[0]).add(tag, toKey: "tags")
        try context.save()

        // Deleting the list cascades to its items; the tag's join rows go with them.
        let request = BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "TodoList"))
        request.resultType = .objectIDs
        let result = try #require(try context.execute(request) as? BatchResult)
        #expect(result.count == 11)
        #expect(Set(result.objectIDs).isSuperset(of: Set(ids)))
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZITEM")[0][0] as Int == 0)
        let joinTable = stack.model.schema.joinTables[0].name
        #expect(try rows(stack, "SELECT COUNT(*) FROM \(joinTable)")[0][0] as Int == 0)
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZTAG")[0][0] as Int == 1)
    }

    @Test func batchDeleteRefusesABrokenDenyRuleWhole() throws {
        let (stack, ids) = try Self.stack()
        let context = stack.context()
        let tag = try context.insertNewObject(forEntityName: "Tag")
        try tag.setValue("t", forKey: "label")
        try context.existingObject(with: ids[0]).add(tag, toKey: "tags")
        try context.save()
        let request = BatchDeleteRequest(objectIDs: [tag.objectID])
        #expect(throws: ObjectGraphError.self) { try context.execute(request) }
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZTAG")[0][0] as Int == 1)

        // Deleting items nulls nothing on tags but removes join rows; the list keeps the rest.
        let items = BatchDeleteRequest(objectIDs: Array(ids.prefix(2)))
        items.resultType = .count
        #expect((try context.execute(items) as? BatchResult)?.count == 2)
        #expect(try rows(stack, "SELECT COUNT(*) FROM \(stack.model.schema.joinTables[0].name)")[0][0] as Int == 0)
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZITEM")[0][0] as Int == 8)
    }

    @Test func batchDeleteNullifiesForeignKeysIntoDeletedRows() throws {
        // Deleting an owner whose rule is nullify nulls its pets' foreign keys and reports them as updated.
        let model = try ManagedObjectModel {
            EntityDescription("Owner") { ToMany("pets", "Pet", inverse: "owner", deleteRule: .nullify) }
            EntityDescription("Pet") { Attribute("name", .string); ToOne("owner", "Owner", inverse: "pets") }
        }
        let pets = try TestStack(model: model)
        let petContext = pets.context()
        let owner = try petContext.insertNewObject(forEntityName: "Owner")
        for name in ["a", "b"] {
            let pet = try petContext.insertNewObject(forEntityName: "Pet")
            try pet.setValue(name, forKey: "name")
            try pet.setValue(owner, forKey: "owner")
        }
        try petContext.save()
        let request = BatchDeleteRequest(objectIDs: [owner.objectID])
        _ = try petContext.execute(request)
        #expect(request.lastNullifiedObjectIDs.count == 2)
        #expect(try rows(pets, "SELECT COUNT(*) FROM ZPET WHERE ZOWNER IS NULL")[0][0] as Int == 2)
    }

    @Test func batchInsertChecksEveryRowFirstAndReservesKeys() throws {
        let (stack, _) = try Self.stack()
        let context = stack.context()
        let good: [[String: Any]] = (0..<100).map { ["name": "new \($0)", "createdAt": Date(timeIntervalSinceReferenceDate: Double($0))] }
        let request = BatchInsertRequest(entityName: "Item", objects: good)
        request.resultType = .objectIDs
        let result = try #require(try context.execute(request) as? BatchResult)
        #expect(result.count == 100)
        #expect(result.objectIDs.map(\.primaryKey) == Array(11...110))
        #expect(try rows(stack, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'")[0][0] as Int == 110)
        #expect(try rows(stack, "SELECT ZDONE FROM ZITEM WHERE Z_PK = 11")[0][0] as Int == 0)  // default applied

        // nil: refused as a value that does not fit, or a required value missing, which other tests name.
        let refusals: [([String: Any], ObjectGraphError?)] = [
            (["nope": 1], .unknownKey(entity: "Item", key: "nope")), (["name": 3], nil), (["createdAt": Date()], nil),
            (["list": NSNull()], .notABatchAttribute(entity: "Item", key: "list", row: good.count)),
        ]
        for (bad, expected) in refusals {
            expectObjectGraphError(expected, "\(bad)") {
                try context.execute(BatchInsertRequest(entityName: "Item", objects: good + [bad]))
            }
        }
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZITEM")[0][0] as Int == 110)

        var produced = 0
        let handler = BatchInsertRequest(entityName: "Item") { (row: inout [String: Any]) -> Bool in
            guard produced < 5 else { return true }
            row["name"] = "handled \(produced)"
            produced += 1
            return false
        }
        handler.resultType = .count
        #expect((try context.execute(handler) as? BatchResult)?.count == 5)
        var made = 0
        let objects = BatchInsertRequest(entityName: "Item") { (object: ManagedObject) -> Bool in
            guard made < 3 else { return true }
            try? object.setValue("object \(made)", forKey: "name")
            made += 1
            return false
        }
        objects.resultType = .count
        #expect((try context.execute(objects) as? BatchResult)?.count == 3)
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZITEM")[0][0] as Int == 118)
    }
}

@Suite struct PlainBatchDeleteTests {
    /// An entity no relationship touches is deleted with one statement; counts and IDs still come back.
    @Test func oneStatementDeletesReportCountsAndIDs() throws {
        let model = try ManagedObjectModel { EntityDescription("Log") { Attribute("level", .integer16) } }
        let stack = try TestStack(model: model)
        let context = stack.context()
        for index in 0..<30 { try context.insertNewObject(forEntityName: "Log").setValue(Int16(index % 3), forKey: "level") }
        try context.save()
        let fetch = FetchRequest<ManagedObject>(entityName: "Log")
        fetch.predicate = try QueryPredicate(format: "level == 0")
        let counted = BatchDeleteRequest(fetchRequest: fetch)
        counted.resultType = .count
        #expect((try context.execute(counted) as? BatchResult)?.count == 10)
        fetch.predicate = try QueryPredicate(format: "level == 1")
        let listed = BatchDeleteRequest(fetchRequest: fetch)
        listed.resultType = .objectIDs
        let result = try #require(try context.execute(listed) as? BatchResult)
        #expect(result.count == 10 && result.objectIDs.count == 10)
        #expect(try FetchPlanCount.count(stack, "Log") == 10)
    }
}

/// Batch inserts from an `objects` array bind each dictionary straight to the INSERT (no row in between);
/// the handler forms, and entities with more than 64 attributes, go through a row. Both must store the same.
@Suite struct BatchInsertBindingTests {
    func rows(_ stack: TestStack, _ sql: String) throws -> [Row] {
        let queue = try DatabaseQueue(path: stack.url.path)
        return try queue.read { try Row.fetchAll($0, sql: sql) }
    }

    /// Every attribute type, values of the usual Swift type and of others (Int for Integer 64, NSNumber,
    /// optionals, NSNull), left out (defaults): the direct path stores what the row path stores.
    @Test func directBindingStoresWhatRowsStore() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let id = UUID()
        let dictionaries: [[String: Any]] = [
            ["name": "all", "createdAt": Date(timeIntervalSinceReferenceDate: 12.5), "done": true, "priority": Int16(3),
             "count": Int32(-7), "big": Int64.max, "score": 2.25, "ratio": Float(0.5), "price": Decimal(string: "12.345")!,
             "blob": Data([0, 1, 2]), "uuid": id, "link": URL(string: "https://example.com/a")!],
            ["name": "others", "big": 42, "score": 3, "priority": NSNumber(value: 4), "done": NSNumber(value: true)],
            ["name": "nils", "createdAt": Optional<Date>.none as Any, "big": NSNull(), "score": Optional(1.5) as Any,
             "done": Optional<Bool>.none as Any],
            ["name": ""],
        ]
        let direct = BatchInsertRequest(entityName: "Item", objects: dictionaries)
        direct.resultType = .count
        #expect((try context.execute(direct) as? BatchResult)?.count == dictionaries.count)
        var next = 0
        let handled = BatchInsertRequest(entityName: "Item") { (row: inout [String: Any]) -> Bool in
            guard next < dictionaries.count else { return true }
            row = dictionaries[next]
            next += 1
            return false
        }
        handled.resultType = .count
        #expect((try context.execute(handled) as? BatchResult)?.count == dictionaries.count)

        let columns = "Z_ENT, Z_OPT, ZNAME, ZCREATEDAT, ZDONE, ZPRIORITY, ZCOUNT, ZBIG, ZSCORE, ZRATIO, ZPRICE, ZBLOB, ZUUID, ZLINK, ZLIST"
        let stored = try rows(stack, "SELECT \(columns) FROM ZITEM ORDER BY Z_PK")
        #expect(stored.count == 2 * dictionaries.count)
        let viaBinding = Array(stored.prefix(dictionaries.count)), viaRows = Array(stored.suffix(dictionaries.count))
        #expect(viaBinding == viaRows)
        // And the values are the expected ones, not merely equal on both paths.
        #expect(viaBinding[0]["ZBIG"] as Int64 == .max)
        #expect(viaBinding[0]["ZDONE"] as Int == 1)
        #expect(viaBinding[1]["ZBIG"] as Int == 42)
        #expect(viaBinding[1]["ZSCORE"] as Double == 3)
        #expect(viaBinding[1]["ZPRIORITY"] as Int == 4)
        #expect(viaBinding[2]["ZDONE"] as Int? == nil)           // explicit nil replaces the default
        #expect(viaBinding[2]["ZSCORE"] as Double == 1.5)
        #expect(viaBinding[3]["ZDONE"] as Int == 0)              // default
        #expect(viaBinding[3]["ZNAME"] as String == "")
        #expect(viaBinding.allSatisfy { $0["ZLIST"] as Int? == nil && $0["Z_OPT"] as Int == 1 })
    }

    /// A value the fast conversions do not take still goes through the general one, and a bad one
    /// (wrong type, NUL in a string, out of range) refuses the whole request.
    @Test func badValuesRefuseTheWholeDirectInsert() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let good: [[String: Any]] = (0..<10).map { ["name": "n\($0)"] }
        for bad: [String: Any] in [["name": "a\u{0}b"], ["name": 1], ["big": "x", "name": "b"], ["score": Double.nan, "name": "c"],
                                   ["priority": 70_000, "name": "d"], ["createdAt": Date(timeIntervalSinceReferenceDate: .infinity), "name": "e"],
                                   ["list": NSNull(), "name": "f"], ["nope": 1, "name": "g"]] {
            #expect(throws: (any Error).self) { try context.execute(BatchInsertRequest(entityName: "Item", objects: good + [bad])) }
        }
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZITEM")[0][0] as Int == 0)
    }

    /// Required attributes: left out without a default, or set to nil, refuses the request naming the
    /// attribute; left out with a default takes the default.
    @Test func requiredValuesAreCheckedOnEveryRow() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Task") {
                Attribute("title", .string, optional: false)
                Attribute("level", .integer64, optional: false, default: Int64(3))
                Attribute("note", .string)
            }
        }
        let stack = try TestStack(model: model)
        let context = stack.context()
        let good: [[String: Any]] = [["title": "a"], ["title": "b", "level": Int64(5)]]
        func refusal(_ bad: [String: Any]) -> String? {
            do {
                _ = try context.execute(BatchInsertRequest(entityName: "Task", objects: good + [bad]))
                return nil
            } catch ObjectGraphError.validationFailed(let failures) {
                return failures.first.map { "\($0.key) \($0.rule)" }
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(["note": "no title"]) == "title missingRequiredValue")
        #expect(refusal(["title": NSNull()]) == "title missingRequiredValue")
        #expect(refusal(["title": "x", "level": Optional<Int64>.none as Any]) == "level missingRequiredValue")
        #expect(try rows(stack, "SELECT COUNT(*) FROM ZTASK")[0][0] as Int == 0)
        _ = try context.execute(BatchInsertRequest(entityName: "Task", objects: good))
        #expect(try rows(stack, "SELECT ZTITLE, ZLEVEL, ZNOTE FROM ZTASK ORDER BY Z_PK").map { [$0[0] as String, "\($0[1] as Int)", $0[2] as String? ?? "-"] }
                == [["a", "3", "-"], ["b", "5", "-"]])
    }

    /// A sub-entity in a shared table: its entity number, and the sibling's columns left NULL.
    @Test func subEntityRowsLeaveSiblingColumnsNull() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Animal", abstract: true) { Attribute("name", .string) }
            EntityDescription("Dog", parent: "Animal") { Attribute("barks", .boolean, default: true) }
            EntityDescription("Cat", parent: "Animal") { Attribute("lives", .integer64, default: Int64(9)) }
        }
        let stack = try TestStack(model: model)
        let context = stack.context()
        _ = try context.execute(BatchInsertRequest(entityName: "Dog", objects: [["name": "rex"]]))
        _ = try context.execute(BatchInsertRequest(entityName: "Cat", objects: [["name": "tom", "lives": 7], ["name": "kit"]]))
        let dog = try #require(model.entitiesByName["Dog"]).entityNumber, cat = try #require(model.entitiesByName["Cat"]).entityNumber
        let stored = try rows(stack, "SELECT Z_ENT, ZNAME, ZBARKS, ZLIVES FROM ZANIMAL ORDER BY Z_PK")
        #expect(stored.map { $0[0] as Int } == [dog, cat, cat])
        #expect(stored.map { $0[1] as String } == ["rex", "tom", "kit"])
        #expect(stored.map { $0[2] as Int? } == [1, nil, nil])
        #expect(stored.map { $0[3] as Int? } == [nil, 7, 9])
    }

    /// 64 attributes still bind directly (the last one's bit is the mask's top bit); 65 go through rows.
    /// Both check required values and fill defaults.
    @Test(arguments: [64, 65]) func wideEntities(width: Int) throws {
        let attributes = (0..<width).map { index in
            AttributeDescription(name: "a\(index)", type: .integer64, isOptional: index != width - 1,
                                 defaultValue: index == 0 ? Int64(11) : nil)
        }
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Wide", properties: attributes)])
        let stack = try TestStack(model: model)
        let entity = try #require(model.entitiesByName["Wide"])
        let table = try #require(stack.coordinator.primaryStore().schema.table(named: entity.tableName))
        #expect(BatchRowTemplate(entity: entity, columnCount: table.columns.count).bindsDirectly == (width <= 64))
        let context = stack.context()
        let last = "a\(width - 1)"
        #expect(throws: ObjectGraphError.self) {
            try context.execute(BatchInsertRequest(entityName: "Wide", objects: [[last: 1], ["a1": 2]]))
        }
        let request = BatchInsertRequest(entityName: "Wide", objects: [[last: Int64(1)], [last: 2, "a1": 5, "a0": NSNull()]])
        request.resultType = .count
        #expect((try context.execute(request) as? BatchResult)?.count == 2)
        let stored = try rows(stack, "SELECT ZA0, ZA1, Z\(last.uppercased()) FROM ZWIDE ORDER BY Z_PK")
        #expect(stored.map { [$0[0] as Int?, $0[1] as Int?, $0[2] as Int?] } == [[11, nil, 1], [nil, 5, 2]])
    }
}
