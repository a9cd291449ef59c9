import Foundation
import Testing
@testable import OpenCoreData

/// Uniqueness-constraint conflicts at save, settled by each merge policy as Core Data settles them; what
/// was saved is read back by a fresh context from the SQLite file.
@Suite struct ConstraintMergeTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Account", uniquenessConstraints: [["email"]]) {
                Attribute("email", .string)
                Attribute("name", .string)
                Attribute("score", .integer64)
                ToMany("posts", "Post", inverse: "account", deleteRule: .cascade)
            }
            EntityDescription("Post") {
                Attribute("title", .string)
                ToOne("account", "Account", inverse: "posts")
            }
            EntityDescription("Person", uniquenessConstraints: [["first", "last"]]) {
                Attribute("first", .string)
                Attribute("last", .string)
                Attribute("age", .integer64)
            }
            EntityDescription("Vehicle") {
                Attribute("plate", .string)
                Attribute("color", .string)
            }
            EntityDescription("Car", parent: "Vehicle", uniquenessConstraints: [["plate"]]) {
                Attribute("doors", .integer64)
            }
        }
    }

    struct Saved: Equatable {
        var id: ManagedObjectID
        var values: [String: String]
    }

    /// Every row of an entity (without sub-entities), read by a context that never saw the changes.
    func stored(_ stack: TestStack, _ entity: String, keys: [String]) throws -> [Saved] {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.includesSubentities = false
        return try stack.context().fetch(request).map { object in
            var values: [String: String] = [:]
            for key in keys { values[key] = try object.value(forKey: key).map { "\($0)" } }
            return Saved(id: object.objectID, values: values)
        }.sorted { $0.id.primaryKey < $1.id.primaryKey }
    }

    /// `K` and the Kelvin sign are one value to Swift's `String ==` and two to the store's unique index: both
    /// saves keep both objects, whether the two meet in one save or one is already stored.
    @Test func canonicallyEquivalentTextIsNoConflict() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        try insert(context, "Account", ["email": "K", "name": "latin"])
        try insert(context, "Account", ["email": "\u{212A}", "name": "kelvin"])
        try context.save()
        try insert(context, "Account", ["email": "e\u{301}", "name": "decomposed"])
        try context.save()
        try insert(context, "Account", ["email": "\u{E9}", "name": "precomposed"])
        try context.save()
        let emails = try stored(stack, "Account", keys: ["email"]).map { $0.values["email"]?.unicodeScalars.map(\.value) }
        #expect(emails == [[0x4B], [0x212A], [0x65, 0x301], [0xE9]])
    }

    @discardableResult
    func insert(_ context: ManagedObjectContext, _ entity: String, _ values: [String: Any]) throws -> ManagedObject {
        let object = try context.insertNewObject(forEntityName: entity)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// A store holding one account (a@x, "old", 1); a new context under `policy` inserts (a@x, "new").
    func insertAgainstStoredRow(_ policy: MergePolicy) throws
        -> (stack: TestStack, storedID: ManagedObjectID, inserted: ManagedObject, error: Error?) {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        let original = try insert(setup, "Account", ["email": "a@x", "name": "old", "score": 1])
        try setup.save()
        let context = stack.context()
        context.mergePolicy = policy
        let inserted = try insert(context, "Account", ["email": "a@x", "name": "new"])
        do { try context.save() } catch { return (stack, original.objectID, inserted, error) }
        return (stack, original.objectID, inserted, nil)
    }

    /// The conflicts a save threw, recording an issue when it threw something else or nothing.
    static func constraintConflicts(in error: Error?, sourceLocation: SourceLocation = #_sourceLocation) -> [ConstraintConflict]? {
        guard case ObjectGraphError.constraintConflict(let conflicts)? = error as? ObjectGraphError else {
            Issue.record("expected a constraint conflict, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return conflicts
    }

    // MARK: A new object against a stored row

    @Test func errorPolicyNamesTheConstraintTheObjectsAndTheStoredRow() throws {
        let result = try insertAgainstStoredRow(.error)
        guard let conflicts = Self.constraintConflicts(in: result.error) else { return }
        #expect(conflicts.count == 1)
        #expect(conflicts[0].entity == "Account")
        #expect(conflicts[0].constraint == ["email"])
        #expect(conflicts[0].constraintValues["email"]?.contains("a@x") == true)
        #expect(conflicts[0].conflictingObjects.count == 1 && conflicts[0].conflictingObjects[0] === result.inserted)
        #expect(conflicts[0].databaseObject?.objectID == result.storedID)
        #expect(conflicts[0].databaseSnapshot?["name"]?.contains("old") == true)
        #expect(conflicts[0].conflictingSnapshots == [[:]])
        #expect((result.error as? ObjectGraphError)?.description.contains("email") == true)
        #expect(result.inserted.isInserted)
        #expect(try stored(result.stack, "Account", keys: ["name"]) == [Saved(id: result.storedID, values: ["name": "old"])])
    }

    @Test func objectTrumpMergesTheNewObjectIntoTheStoredRow() throws {
        let result = try insertAgainstStoredRow(.mergeByPropertyObjectTrump)
        #expect(result.error == nil)
        #expect(try stored(result.stack, "Account", keys: ["email", "name", "score"])
                == [Saved(id: result.storedID, values: ["email": "a@x", "name": "new", "score": "1"])])
        // The losing object is deleted, and reads what was saved.
        #expect(result.inserted.isDeleted)
        #expect(try result.inserted.value(forKey: "name") as? String == "new")
        #expect(try result.inserted.value(forKey: "score") as? Int64 == 1)
    }

    @Test func storeTrumpKeepsTheStoredValues() throws {
        let result = try insertAgainstStoredRow(.mergeByPropertyStoreTrump)
        #expect(result.error == nil)
        #expect(try stored(result.stack, "Account", keys: ["name", "score"])
                == [Saved(id: result.storedID, values: ["name": "old", "score": "1"])])
        #expect(try result.inserted.value(forKey: "name") as? String == "old")
    }

    @Test func overwriteWritesTheWholeNewObjectOverTheStoredRow() throws {
        let result = try insertAgainstStoredRow(.overwrite)
        #expect(result.error == nil)
        #expect(try stored(result.stack, "Account", keys: ["name", "score"])
                == [Saved(id: result.storedID, values: ["name": "new"])])
    }

    @Test func rollbackDiscardsTheNewObject() throws {
        let result = try insertAgainstStoredRow(.rollback)
        #expect(result.error == nil)
        #expect(try stored(result.stack, "Account", keys: ["name", "score"])
                == [Saved(id: result.storedID, values: ["name": "old", "score": "1"])])
        #expect(result.inserted.isDeleted)
        #expect(try result.inserted.value(forKey: "name") as? String == "old")
    }

    @Test(arguments: [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite])
    func aLosersRelatedObjectsMoveToTheSurvivor(policy: MergePolicy) throws {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        let original = try insert(setup, "Account", ["email": "a@x"])
        try insert(setup, "Post", ["title": "kept", "account": original])
        try setup.save()
        let context = stack.context()
        context.mergePolicy = policy
        let duplicate = try insert(context, "Account", ["email": "a@x"])
        try insert(context, "Post", ["title": "moved", "account": duplicate])
        try context.save()
        let reader = stack.context()
        let posts = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Post"))
        #expect(posts.count == 2)
        for post in posts {
            #expect((try post.value(forKey: "account") as? ManagedObject)?.objectID == original.objectID)
        }
        #expect(try stored(stack, "Account", keys: []).count == 1)
    }

    // MARK: Two new objects in one save

    func twoInserts(_ policy: MergePolicy) throws -> (stack: TestStack, error: Error?) {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        context.mergePolicy = policy
        try insert(context, "Account", ["email": "a@x", "name": "first", "score": 7])
        try insert(context, "Account", ["email": "a@x", "name": "second"])
        try insert(context, "Account", ["email": "b@x", "name": "other"])
        do { try context.save() } catch { return (stack, error) }
        return (stack, nil)
    }

    @Test(arguments: [
        (MergePolicy.mergeByPropertyObjectTrump, "second", "7"),
        (MergePolicy.mergeByPropertyStoreTrump, "first", "7"),
        (MergePolicy.overwrite, "second", nil),
        (MergePolicy.rollback, "first", "7"),
    ])
    func twoNewObjectsWithOneValueBecomeOneRow(policy: MergePolicy, name: String, score: String?) throws {
        let result = try twoInserts(policy)
        #expect(result.error == nil)
        let rows = try stored(result.stack, "Account", keys: ["email", "name", "score"])
        #expect(rows.count == 2)
        var expected: [String: String] = ["email": "a@x", "name": name]
        expected["score"] = score
        #expect(rows.first { $0.values["email"] == "a@x" }?.values == expected)
    }

    @Test func errorPolicyRefusesTwoNewObjectsWithOneValue() throws {
        let result = try twoInserts(.error)
        guard let conflicts = Self.constraintConflicts(in: result.error) else { return }
        #expect(conflicts.count == 1)
        #expect(conflicts[0].conflictingObjects.count == 2)
        #expect(conflicts[0].databaseObject == nil)
        #expect(try stored(result.stack, "Account", keys: []).isEmpty)
    }

    // MARK: A change that makes a duplicate

    func updateIntoDuplicate(_ policy: MergePolicy) throws
        -> (stack: TestStack, a: ManagedObjectID, b: ManagedObjectID, error: Error?) {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        let a = try insert(setup, "Account", ["email": "a@x", "name": "A", "score": 1])
        let b = try insert(setup, "Account", ["email": "b@x", "name": "B", "score": 2])
        try setup.save()
        let context = stack.context()
        context.mergePolicy = policy
        try context.object(with: b.objectID).setValue("a@x", forKey: "email")
        do { try context.save() } catch { return (stack, a.objectID, b.objectID, error) }
        return (stack, a.objectID, b.objectID, nil)
    }

    @Test func errorPolicyRefusesAChangeThatMakesADuplicate() throws {
        let result = try updateIntoDuplicate(.error)
        guard let conflicts = Self.constraintConflicts(in: result.error) else { return }
        #expect(conflicts[0].databaseObject?.objectID == result.a)
        #expect(conflicts[0].conflictingObjects.map(\.objectID) == [result.b])
        #expect(conflicts[0].conflictingSnapshots.first?["email"]?.contains("b@x") == true)
        #expect(try stored(result.stack, "Account", keys: []).count == 2)
    }

    @Test func objectTrumpFoldsTheChangedObjectIntoTheStoredOne() throws {
        let result = try updateIntoDuplicate(.mergeByPropertyObjectTrump)
        #expect(result.error == nil)
        #expect(try stored(result.stack, "Account", keys: ["email", "name"])
                == [Saved(id: result.a, values: ["email": "a@x", "name": "A"])])
    }

    @Test func rollbackDiscardsTheChangeThatMadeADuplicate() throws {
        let result = try updateIntoDuplicate(.rollback)
        #expect(result.error == nil)
        #expect(try stored(result.stack, "Account", keys: ["email"])
                == [Saved(id: result.a, values: ["email": "a@x"]), Saved(id: result.b, values: ["email": "b@x"])])
    }

    @Test func aChangeAwayFromAValueFreesItForANewObject() throws {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        let a = try insert(setup, "Account", ["email": "a@x", "name": "A"])
        try setup.save()
        let context = stack.context()
        try context.object(with: a.objectID).setValue("moved@x", forKey: "email")
        try insert(context, "Account", ["email": "a@x", "name": "new"])
        try context.save()
        #expect(try stored(stack, "Account", keys: ["email"]).map { $0.values["email"] } == ["moved@x", "a@x"])
    }

    // MARK: Compound constraints and shared tables

    @Test func aCompoundConstraintConflictsOnlyWhenEveryKeyMatches() throws {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        let ada = try insert(setup, "Person", ["first": "Ada", "last": "Lovelace"])
        try setup.save()
        let context = stack.context()
        context.mergePolicy = .mergeByPropertyObjectTrump
        try insert(context, "Person", ["first": "Ada", "last": "Byron"])
        try insert(context, "Person", ["first": "Ada", "last": "Lovelace", "age": 36])
        try context.save()
        let rows = try stored(stack, "Person", keys: ["last", "age"])
        #expect(rows.count == 2)
        #expect(rows.first { $0.id == ada.objectID }?.values == ["last": "Lovelace", "age": "36"])
    }

    @Test(arguments: [MergePolicy.error, .mergeByPropertyObjectTrump])
    func aSubEntityConstraintInASharedTableCoversOnlyThatEntity(policy: MergePolicy) throws {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        try insert(setup, "Vehicle", ["plate": "X"])
        let car = try insert(setup, "Car", ["plate": "Y", "doors": 3])
        try setup.save()
        let context = stack.context()
        context.mergePolicy = policy
        // A vehicle's plate is no car's: no conflict.
        try insert(context, "Car", ["plate": "X", "doors": 5])
        try context.save()
        try insert(context, "Car", ["plate": "Y", "color": "red"])
        if policy == .error {
            #expect(throws: ObjectGraphError.self) { try context.save() }
            #expect(try stored(stack, "Car", keys: []).count == 2)
            return
        }
        try context.save()
        let cars = try stored(stack, "Car", keys: ["plate", "color", "doors"])
        #expect(cars.count == 2)
        #expect(cars.first { $0.id == car.objectID }?.values == ["plate": "Y", "color": "red", "doors": "3"])
        #expect(try stored(stack, "Vehicle", keys: []).count == 1)
    }

    // MARK: Batch insert

    @Test func batchInsertUpdatesRowsWithEqualConstraintValues() throws {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        let stored = try insert(setup, "Account", ["email": "a@x", "name": "old", "score": 1])
        try setup.save()
        let request = BatchInsertRequest(entityName: "Account", objects: [
            ["email": "a@x", "name": "upserted", "score": 2],
            ["email": "b@x", "name": "new", "score": 3],
            ["email": "b@x", "name": "newer", "score": 4],
        ])
        request.resultType = .objectIDs
        let result = try stack.context().execute(request) as! BatchResult
        let rows = try self.stored(stack, "Account", keys: ["email", "name", "score"])
        #expect(rows.count == 2)
        #expect(rows.first { $0.id == stored.objectID }?.values == ["email": "a@x", "name": "upserted", "score": "2"])
        #expect(rows.first { $0.values["email"] == "b@x" }?.values["name"] == "newer")
        // The IDs name the rows written: the stored one's, and one new row's twice.
        #expect(result.objectIDs.first == stored.objectID)
        #expect(Set(result.objectIDs).count == 2)
        #expect(Set(result.objectIDs) == Set(rows.map(\.id)))
    }

    @Test func batchInsertUpsertsWithACompoundConstraint() throws {
        let stack = try TestStack(model: Self.model())
        _ = try stack.context().execute(BatchInsertRequest(entityName: "Person", objects: [
            ["first": "Ada", "last": "Lovelace", "age": 1],
            ["first": "Ada", "last": "Byron", "age": 2],
            ["first": "Ada", "last": "Lovelace", "age": 36],
        ]))
        let rows = try stored(stack, "Person", keys: ["last", "age"])
        #expect(rows.map(\.values) == [["last": "Lovelace", "age": "36"], ["last": "Byron", "age": "2"]])
    }

    @Test func batchInsertHistoryNamesTheRowsWritten() throws {
        let directory = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(type: .sqlite, at: directory.file("History.sqlite"),
                                           options: StoreOptions(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let stored = try insert(context, "Account", ["email": "a@x", "name": "old"])
        try context.save()
        let token = try PersistentHistoryTests.history(context).transactions.last?.token
        _ = try context.execute(BatchInsertRequest(entityName: "Account", objects: [
            ["email": "a@x", "name": "upserted"], ["email": "b@x", "name": "new"],
        ]))
        let changes = try #require(try PersistentHistoryTests.history(context, after: token).transactions.last?.changes)
        #expect(changes.count == 2)
        #expect(changes.first { $0.changeType == .update }?.changedObjectID == stored.objectID)
        #expect(changes.filter { $0.changeType == .insert }.count == 1)
        #expect(!changes.contains { $0.changedObjectID.primaryKey == stored.objectID.primaryKey + 1 })
    }

    // MARK: Against a naive reference

    /// Random inserts with random keys, saved at random points under object trump, end as a dictionary
    /// keyed by the constraint value where the last write wins.
    @Test(arguments: 1...6)
    func randomInsertsMatchADictionary(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let stack = try TestStack(model: Self.model())
        var reference: [String: (name: String, score: Int64)] = [:]
        var context = stack.context()
        context.mergePolicy = .mergeByPropertyObjectTrump
        for step in 0..<120 {
            let email = "user\(random.next() % 15)@x"
            let name = "n\(step)", score = Int64(random.next() % 1000)
            try insert(context, "Account", ["email": email, "name": name, "score": score])
            reference[email] = (name, score)
            switch random.next() % 10 {
            case 0: try context.save(); context = stack.context(); context.mergePolicy = .mergeByPropertyObjectTrump
            case 1, 2: try context.save()
            default: break
            }
        }
        try context.save()
        let rows = try stored(stack, "Account", keys: ["email", "name", "score"])
        #expect(rows.count == reference.count)
        for row in rows {
            let expected = reference[row.values["email"] ?? ""]
            #expect(row.values["name"] == expected?.name && row.values["score"] == expected.map { "\($0.score)" },
                    "seed \(seed): \(row.values)")
        }
    }
}
