import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Persistent history on a real store file: every commit (saves, batch requests) records one transaction
/// with its changes in Core Data's tables, in the same SQLite transaction as the data; requests read it back
/// after a token or date, filter it, and prune it; tokens survive a reopen.
@Suite struct PersistentHistoryTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Folder") {
                Attribute("name", .string)
                ToMany("notes", "Note", inverse: "folder", deleteRule: .cascade)
            }
            EntityDescription("Note") {
                Attribute("title", .string) { $0.preservesValueInHistoryOnDeletion = true }
                Attribute("body", .string)
                Attribute("stars", .integer64, default: Int64(0)) { $0.preservesValueInHistoryOnDeletion = true }
                ToOne("folder", "Folder", inverse: "notes")
            }
        }
    }

    struct Stack {
        let directory = TemporaryDirectory()
        let model: ManagedObjectModel
        var url: URL { directory.file("Notes.sqlite") }

        init() throws { model = try PersistentHistoryTests.model() }

        func coordinator(tracking: Bool = true) throws -> PersistentStoreCoordinator {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .sqlite, at: url,
                                               options: StoreOptions(persistentHistoryTracking: tracking))
            return coordinator
        }

        func context(_ coordinator: PersistentStoreCoordinator, author: String? = nil) -> ManagedObjectContext {
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            context.transactionAuthor = author
            context.name = author.map { "\($0)-context" }
            return context
        }
    }

    static func history(_ context: ManagedObjectContext, after token: PersistentHistoryToken? = nil,
                        configure: (PersistentHistoryChangeRequest) -> Void = { _ in }) throws -> PersistentHistoryResult {
        let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        configure(request)
        return try #require(try context.execute(request) as? PersistentHistoryResult)
    }

    @Test func savesRecordInsertsUpdatesAndDeletesWithTheirAuthorAndTombstones() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        let writer = stack.context(coordinator, author: "importer")
        let folder = try writer.insertNewObject(forEntityName: "Folder")
        try folder.setValue("Inbox", forKey: "name")
        var notes: [ManagedObject] = []
        for index in 1...3 {
            let note = try writer.insertNewObject(forEntityName: "Note")
            try note.setValue("Note \(index)", forKey: "title")
            try note.setValue(Int64(index), forKey: "stars")
            try note.setValue(folder, forKey: "folder")
            notes.append(note)
        }
        try writer.save()
        try notes[0].setValue("Renamed", forKey: "title")
        try notes[0].setValue("text", forKey: "body")
        try writer.save()
        writer.delete(notes[2])
        try writer.save()

        let result = try Self.history(writer)
        let transactions = result.transactions
        #expect(transactions.map { $0.changes?.count } == [4, 1, 2])
        #expect(transactions.allSatisfy { $0.author == "importer" && $0.contextName == "importer-context" })
        #expect(transactions.map(\.transactionNumber) == transactions.map(\.transactionNumber).sorted())
        #expect(Set(transactions[0].changes!.map(\.changeType)) == [.insert])
        let update = try #require(transactions[1].changes?.first)
        #expect(update.changeType == .update)
        #expect(update.changedObjectID == notes[0].objectID)
        #expect(update.updatedProperties == ["title", "body"])
        let deletes = transactions[2].changes!.filter { $0.changeType == .delete }
        #expect(deletes.map(\.changedObjectID) == [notes[2].objectID])
        #expect(deletes.first?.tombstone == ["title": .text("Note 3"), "stars": .integer(3)])
        // The folder lost a note: an update of its to-many.
        let folderUpdate = transactions[2].changes!.first { $0.changeType == .update }
        #expect(folderUpdate?.changedObjectID == folder.objectID)
        #expect(folderUpdate?.updatedProperties == ["notes"])

        // After a token: only what came later; tokens compare and survive encoding.
        let later = try Self.history(writer, after: transactions[0].token)
        #expect(later.transactions.map(\.transactionNumber) == [transactions[1].transactionNumber, transactions[2].transactionNumber])
        let decoded = try JSONDecoder().decode(PersistentHistoryToken.self, from: JSONEncoder().encode(transactions[1].token))
        #expect(decoded == transactions[1].token && decoded < transactions[2].token)
        #expect(try coordinator.currentPersistentHistoryToken() == transactions[2].token)
    }

    @Test func resultTypesAndPredicatesSelectWhatWasAskedFor() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        for author in ["app", "sync", "app"] {
            let context = stack.context(coordinator, author: author)
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue(author, forKey: "title")
            try context.save()
        }
        let reader = stack.context(coordinator)
        let notApp = try Self.history(reader) { $0.predicate = try? QueryPredicate(format: "author != %@", "app") }
        #expect(notApp.transactions.map(\.author) == ["sync"])
        #expect(try Self.history(reader) { $0.resultType = .count }.count == 3)
        let numbers = try Self.history(reader) { $0.resultType = .transactionIDs }.transactionNumbers
        #expect(numbers.count == 3)
        let changes = try Self.history(reader) { $0.resultType = .changesOnly }.changes
        #expect(changes.count == 3 && changes.allSatisfy { $0.changeType == .insert })
        let onlyTransactions = try Self.history(reader) { $0.resultType = .transactionsOnly }.transactions
        #expect(onlyTransactions.allSatisfy { $0.changes == nil })
        let some = try #require(try reader.execute(PersistentHistoryChangeRequest.fetchHistory(
            withTransactionNumbers: [numbers[1]])) as? PersistentHistoryResult)
        #expect(some.transactions.map(\.author) == ["sync"])
    }

    @Test func batchRequestsAreRecordedToo() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        let context = stack.context(coordinator, author: "batch")
        let insert = BatchInsertRequest(entityName: "Note", objects: (1...4).map { ["title": "N\($0)", "stars": Int64($0)] })
        _ = try context.execute(insert)
        let update = BatchUpdateRequest(entityName: "Note")
        update.predicate = try QueryPredicate(format: "stars > 2")
        update.propertiesToUpdate = ["body": "hot"]
        _ = try context.execute(update)
        let fetch = FetchRequest<ManagedObject>(entityName: "Note")
        fetch.predicate = try QueryPredicate(format: "stars == 1")
        _ = try context.execute(BatchDeleteRequest(fetchRequest: fetch))

        let transactions = try Self.history(context).transactions
        #expect(transactions.count == 3)
        #expect(transactions[0].changes?.map(\.changeType) == Array(repeating: .insert, count: 4))
        #expect(transactions[1].changes?.map(\.changeType) == [.update, .update])
        #expect(transactions[1].changes?.allSatisfy { $0.updatedProperties == ["body"] } == true)
        let deleted = try #require(transactions[2].changes?.first)
        #expect(deleted.changeType == .delete && deleted.tombstone == ["title": .text("N1"), "stars": .integer(1)])
        #expect(transactions.allSatisfy { $0.author == "batch" })
    }

    @Test func aFailedSaveLeavesNoHistory() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        let first = stack.context(coordinator)
        let note = try first.insertNewObject(forEntityName: "Note")
        try note.setValue("v1", forKey: "title")
        try first.save()
        let second = stack.context(coordinator)
        let other = try second.existingObject(with: note.objectID)
        try other.setValue("v2", forKey: "title")
        try note.setValue("conflicting", forKey: "title")
        try second.save()
        #expect(throws: (any Error).self) { try first.save() }   // optimistic-locking conflict
        let transactions = try Self.history(first).transactions
        #expect(transactions.count == 2)
        #expect(transactions.last?.changes?.first?.updatedProperties == ["title"])
    }

    @Test func pruningDeletesOldTransactionsAndNumbersKeepCountingUp() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        let context = stack.context(coordinator)
        for index in 1...3 {
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue("N\(index)", forKey: "title")
            try context.save()
        }
        let all = try Self.history(context).transactions
        let pruned = try #require(try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: all[1].token))
                                  as? PersistentHistoryResult)
        #expect(pruned.count == 2)
        #expect(try Self.history(context).transactions.map(\.transactionNumber) == [all[2].transactionNumber])
        _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: nil as PersistentHistoryToken?))
        #expect(try Self.history(context).transactions.isEmpty)
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue("after", forKey: "title")
        try context.save()
        let next = try Self.history(context).transactions
        #expect(next.count == 1 && next[0].transactionNumber > all[2].transactionNumber)
        let changeCount = try DatabaseQueue(path: stack.url.path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM ACHANGE") }
        #expect(changeCount == 1)
    }

    @Test func historySurvivesReopeningAndAStoreWithHistoryOpensWithoutTracking() throws {
        let stack = try Stack()
        var token: PersistentHistoryToken?
        do {
            let coordinator = try stack.coordinator()
            let context = stack.context(coordinator, author: "first run")
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue("kept", forKey: "title")
            try context.save()
            token = try coordinator.currentPersistentHistoryToken()
        }
        let reopened = try stack.coordinator(tracking: false)
        let context = stack.context(reopened)
        let transactions = try Self.history(context).transactions
        #expect(transactions.map(\.token) == [token])
        #expect(transactions.first?.author == "first run")
        // Without tracking, saves add nothing.
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue("untracked", forKey: "title")
        try context.save()
        #expect(try Self.history(context).transactions.count == 1)
    }

    @Test func withoutTrackingNoHistoryTablesAreMade() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator(tracking: false)
        let context = stack.context(coordinator)
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue("plain", forKey: "title")
        try context.save()
        let tables = try DatabaseQueue(path: stack.url.path).read {
            try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'A%'")
        }
        #expect(tables.isEmpty)
        #expect(try Self.history(context).transactions.isEmpty)
    }

    @Test func mergingHistoryBringsAnotherContextUpToDate() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        let writer = stack.context(coordinator, author: "writer")
        let note = try writer.insertNewObject(forEntityName: "Note")
        try note.setValue("before", forKey: "title")
        try writer.save()
        let start = try coordinator.currentPersistentHistoryToken()

        // A reader on its own coordinator (as another process would be) holds the note.
        let otherCoordinator = try stack.coordinator()
        let reader = stack.context(otherCoordinator)
        // IDs belong to a coordinator: the reader's is found by the note's URI.
        let id = try #require(otherCoordinator.managedObjectID(forURIRepresentation: note.objectID.uriRepresentation()))
        let held = try reader.existingObject(with: id)
        #expect(try held.value(forKey: "title") as? String == "before")

        try note.setValue("after", forKey: "title")
        let added = try writer.insertNewObject(forEntityName: "Note")
        try added.setValue("new", forKey: "title")
        try writer.save()

        let transactions = try Self.history(reader, after: start).transactions
        reader.mergeChanges(fromHistory: transactions)
        #expect(try held.value(forKey: "title") as? String == "after")
        #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 2)
    }
}
