import Foundation
import GRDB
import Testing
@testable import OpenCoreData

@Suite struct ConflictTests {
    /// Two contexts read the same item; the first saves a change; the second then saves its own.
    func conflict(policy: MergePolicy, secondChanges: (ManagedObject) throws -> Void)
        throws -> (stack: TestStack, error: Error?, second: ManagedObjectContext) {
        let stack = try TestStack(model: TestModels.todo())
        let setup = stack.context()
        let item = try setup.insertNewObject(forEntityName: "Item")
        try item.setValue("original", forKey: "name")
        try item.setValue(1, forKey: "priority")
        try setup.save()

        let first = stack.context(), second = stack.context()
        second.mergePolicy = policy
        let a = try first.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0]
        let b = try second.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0]
        _ = try b.value(forKey: "name")
        try a.setValue("first", forKey: "name")
        try a.setValue(5, forKey: "priority")
        try first.save()
        try secondChanges(b)
        do {
            try second.save()
            return (stack, nil, second)
        } catch {
            return (stack, error, second)
        }
    }

    func stored(_ stack: TestStack) throws -> (name: String, priority: Int, version: Int) {
        let queue = try DatabaseQueue(path: stack.url.path)
        return try queue.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT ZNAME, ZPRIORITY, Z_OPT FROM ZITEM")!
            return (row[0], row[1], row[2])
        }
    }

    @Test func errorPolicyReportsBothVersions() throws {
        let result = try conflict(policy: .error) { try $0.setValue("second", forKey: "name") }
        guard case ObjectGraphError.mergeConflict(let conflicts)? = result.error as? ObjectGraphError else {
            Issue.record("expected a merge conflict, got \(String(describing: result.error))")
            return
        }
        #expect(conflicts.count == 1)
        #expect(conflicts[0].expectedVersion == 1)
        #expect(conflicts[0].storeVersion == 2)
        #expect(conflicts[0].storeValues["name"]?.contains("first") == true)
        #expect(conflicts[0].objectValues["name"]?.contains("second") == true)
        #expect(try stored(result.stack).name == "first")
        #expect(result.second.hasChanges)
    }

    @Test func objectTrumpKeepsOurChangedPropertiesAndTheirOthers() throws {
        let result = try conflict(policy: .mergeByPropertyObjectTrump) { try $0.setValue("second", forKey: "name") }
        #expect(result.error == nil)
        let row = try stored(result.stack)
        #expect(row.name == "second")
        #expect(row.priority == 5)
        #expect(row.version == 3)
    }

    @Test func storeTrumpKeepsTheirValueWhereBothChanged() throws {
        let result = try conflict(policy: .mergeByPropertyStoreTrump) { object in
            try object.setValue("second", forKey: "name")
            try object.setValue(Date(timeIntervalSinceReferenceDate: 5), forKey: "createdAt")
        }
        #expect(result.error == nil)
        let row = try stored(result.stack)
        #expect(row.name == "first")
        #expect(row.priority == 5)
    }

    @Test func overwriteWritesOurWholeObject() throws {
        let result = try conflict(policy: .overwrite) { try $0.setValue("second", forKey: "name") }
        #expect(result.error == nil)
        let row = try stored(result.stack)
        #expect(row.name == "second")
        #expect(row.priority == 1)
    }

    @Test func rollbackDropsOurChanges() throws {
        let result = try conflict(policy: .rollback) { try $0.setValue("second", forKey: "name") }
        #expect(result.error == nil)
        #expect(try stored(result.stack).name == "first")
        #expect(!result.second.hasChanges)
    }

    @Test func deletingARowChangedElsewhereConflicts() throws {
        let result = try conflict(policy: .error) { $0.managedObjectContext?.delete($0) }
        #expect(result.error is ObjectGraphError)
        #expect(try stored(result.stack).name == "first")
    }
}
