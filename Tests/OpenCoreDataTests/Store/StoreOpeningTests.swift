import Foundation
import GRDB
import Testing
@testable import OpenCoreData

@Suite struct StoreOpeningTests {
    @Test func aStoreWrittenWithAnotherModelIsRefusedAndLeftAlone() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue("keep me", forKey: "name")
        try context.save()
        let before = try Data(contentsOf: stack.url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.banks())
        do {
            try coordinator.addPersistentStore(type: .sqlite, at: stack.url)
            Issue.record("a foreign store should be refused")
        } catch let StoreError.incompatibleModel(_, differences) {
            #expect(differences.contains { $0.contains("FailedBankInfo") })
        }
        #expect(try Data(contentsOf: stack.url) == before)
    }

    @Test func filesThatAreNotStoresAreRefused() throws {
        let directory = TemporaryDirectory()
        let model = try TestModels.todo()
        let text = directory.file("notes.sqlite")
        try Data("hello, this is not SQLite at all, just some text padding it out".utf8).write(to: text)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        #expect(throws: StoreError.self) { try coordinator.addPersistentStore(type: .sqlite, at: text) }
        #expect(try String(contentsOf: text, encoding: .utf8).hasPrefix("hello"))

        let other = directory.file("other.sqlite")
        let queue = try DatabaseQueue(path: other.path)
        try queue.write { try $0.execute(sql: "CREATE TABLE people (name TEXT)") }
        #expect(throws: StoreError.self) { try coordinator.addPersistentStore(type: .sqlite, at: other) }

        let missing = directory.file("missing.sqlite")
        #expect(throws: StoreError.self) {
            try coordinator.addPersistentStore(type: .sqlite, at: missing, options: StoreOptions(readOnly: true))
        }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test func readOnlyStoresRefuseSaves() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        try context.insertNewObject(forEntityName: "TodoList").setValue("x", forKey: "title")
        try context.save()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: stack.model)
        try coordinator.addPersistentStore(type: .sqlite, at: stack.url, options: StoreOptions(readOnly: true))
        let reader = ManagedObjectContext(concurrencyType: .confinement)
        reader.persistentStoreCoordinator = coordinator
        let list = try reader.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))[0]
        try list.setValue("y", forKey: "title")
        #expect(throws: StoreError.self) { try reader.save() }
    }

    @Test func schemaFollowsCoreDataLayout() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Person", abstract: true) {
                Attribute("name", .string)
                ToMany("projects", "Project", inverse: "members")
            }
            EntityDescription("Employee", parent: "Person") {
                Attribute("title", .string)
                ToOne("manager", "Employee", inverse: "reports")
                ToMany("reports", "Employee", inverse: "manager")
            }
            EntityDescription("Customer", parent: "Person") {
                Attribute("title", .string)
            }
            EntityDescription("Project") {
                Attribute("name", .string)
                ToMany("members", "Person", inverse: "projects")
                ToMany("steps", "Step", inverse: "project", ordered: true)
            }
            EntityDescription("Step") {
                ToOne("project", "Project", inverse: "steps")
            }
        }
        // Depth first, siblings in name order.
        #expect(model.entitiesByNumber.map(\.name) == ["Person", "Customer", "Employee", "Project", "Step"])
        let stack = try TestStack(model: model)
        let queue = try DatabaseQueue(path: stack.url.path)
        let (tables, columns, stepColumns) = try queue.read { db in
            (Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")),
             try Row.fetchAll(db, sql: "PRAGMA table_info(ZPERSON)").map { $0["name"] as String },
             try Row.fetchAll(db, sql: "PRAGMA table_info(ZSTEP)").map { $0["name"] as String })
        }
        #expect(tables.isSuperset(of: ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE", "ZPERSON", "ZPROJECT", "ZSTEP"]))
        #expect(!tables.contains("ZEMPLOYEE"))
        #expect(columns.prefix(3) == ["Z_PK", "Z_ENT", "Z_OPT"])
        #expect(columns.contains("ZTITLE") && columns.contains("ZTITLE1"))
        #expect(columns.contains("ZMANAGER"))
        #expect(stepColumns.contains("ZPROJECT") && stepColumns.contains("Z_FOK_PROJECT"))
        #expect(tables.contains("Z_1PROJECTS"))

        // Sub-entities share the root's table and are told apart by Z_ENT; fetching the parent finds both.
        let context = stack.context()
        let boss = try context.insertNewObject(forEntityName: "Employee")
        try boss.setValue("Ada", forKey: "name")
        let worker = try context.insertNewObject(forEntityName: "Employee")
        try worker.setValue("Bob", forKey: "name")
        try worker.setValue(boss, forKey: "manager")
        let customer = try context.insertNewObject(forEntityName: "Customer")
        try customer.setValue("Cy", forKey: "name")
        let project = try context.insertNewObject(forEntityName: "Project")
        try project.setValue([boss, customer], forKey: "members")
        let steps = try (0..<3).map { _ in try context.insertNewObject(forEntityName: "Step") }
        try project.setValue(steps, forKey: "steps")
        expectObjectGraphError(.abstractEntity(name: "Person")) { try context.insertNewObject(forEntityName: "Person") }
        try context.save()

        let reader = stack.context()
        let people = FetchRequest<ManagedObject>(entityName: "Person")
        people.sortDescriptors = [QuerySortDescriptor(key: "name")]
        let fetched = try reader.fetch(people)
        #expect(fetched.map(\.entity.name) == ["Employee", "Employee", "Customer"])
        let employees = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Employee"))
        #expect(employees.count == 2)
        let readProject = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Project"))[0]
        #expect((try readProject.value(forKey: "members") as? Set<ManagedObject>)?.count == 2)
        let orderedSteps = try #require(try readProject.value(forKey: "steps") as? [ManagedObject])
        #expect(orderedSteps.map(\.objectID) == steps.map(\.objectID))
        let readBoss = try #require(fetched.first { (try? $0.value(forKey: "name") as? String) == "Ada" })
        #expect((try readBoss.value(forKey: "reports") as? Set<ManagedObject>)?.count == 1)
    }

    @Test func uniquenessConstraintsRefuseDuplicates() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Account", uniquenessConstraints: [["email"]]) {
                Attribute("email", .string)
            }
        }
        let stack = try TestStack(model: model)
        let context = stack.context()
        try context.insertNewObject(forEntityName: "Account").setValue("a@x", forKey: "email")
        try context.save()
        try context.insertNewObject(forEntityName: "Account").setValue("a@x", forKey: "email")
        do {
            try context.save()
            Issue.record("duplicate should fail")
        } catch ObjectGraphError.constraintConflict(let conflicts) {
            #expect(conflicts.first?.entity == "Account")
            #expect(conflicts.first?.constraint == ["email"])
        }
    }
}
