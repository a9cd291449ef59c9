import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A store whose entity numbers (`Z_PRIMARYKEY`, rows' `Z_ENT`) differ from the ones our model would choose,
/// as a store written by Core Data or over several model versions may: read and written with the store's
/// numbers.
/// A model of Author, Book and its sub-entity Ebook, and a store of it renumbered as another numbering would
/// have written it.
enum RenumberedStoreFixture {
    /// Author, Book and its sub-entity Ebook: ours are Author 1, Book 2, Ebook 3.
    static let xml = InteropFixtures.modelXML("""
        <entity name="Author" representedClassName="Author">
            <attribute name="name" attributeType="String"/>
            <relationship name="books" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author"/>
        </entity>
        <entity name="Book" representedClassName="Book">
            <attribute name="title" attributeType="String"/>
            <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books"/>
        </entity>
        <entity name="Ebook" representedClassName="Ebook" parentEntity="Book">
            <attribute name="format" optional="YES" attributeType="String"/>
        </entity>
        """)
    /// The numbering the store is given: a sub-entity before its parent, roots out of name order.
    static let storeNumbers = ["Ebook": 1, "Author": 2, "Book": 3]

    static func modelFolder(in directory: TemporaryDirectory) throws -> URL {
        let folder = directory.file("Library.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.xml.write(to: folder.appendingPathComponent("contents"))
        return folder
    }

    static func context(_ model: ManagedObjectModel, _ url: URL) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func titles(_ entity: String, in context: ManagedObjectContext) throws -> [String] {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.sortDescriptors = [QuerySortDescriptor(key: "title")]
        return try context.fetch(request).map { try $0.value(forKey: "title") as? String ?? "?" }
    }

    /// Writes a store with our numbering, then renumbers it in SQL the way another numbering would have
    /// written it: Z_PRIMARYKEY's numbers and parents, and every row's Z_ENT.
    static func renumberedStore(model: ManagedObjectModel, at url: URL, numbers: [String: Int] = storeNumbers) throws {
        do {
            let writer = try Self.context(model, url)
            let author = try writer.insertNewObject(forEntityName: "Author")
            try author.setValue("Ann", forKey: "name")
            for (entity, title) in [("Book", "Paper"), ("Ebook", "Bits")] {
                let book = try writer.insertNewObject(forEntityName: entity)
                try book.setValue(title, forKey: "title")
                try book.setValue(author, forKey: "author")
            }
            try writer.save()
        }
        let old = ["Author": 1, "Book": 2, "Ebook": 3]
        #expect(model.entitiesByName.mapValues(\.entityNumber) == old)
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_ENT = Z_ENT + 100 WHERE Z_ENT < 100")
            for (name, number) in numbers {
                try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_ENT = ? WHERE Z_NAME = ?", arguments: [number, name])
            }
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_SUPER = ? WHERE Z_NAME = 'Ebook'", arguments: [numbers["Book"]!])
            for (table, names) in [("ZAUTHOR", ["Author"]), ("ZBOOK", ["Book", "Ebook"])] {
                try db.execute(sql: "UPDATE \(table) SET Z_ENT = Z_ENT + 100")
                for name in names {
                    try db.execute(sql: "UPDATE \(table) SET Z_ENT = ? WHERE Z_ENT = ?",
                                   arguments: [numbers[name]!, old[name]! + 100])
                }
            }
        }
        try queue.close()
    }
}

@Suite struct StoreEntityNumberingTests {
    private static let xml = RenumberedStoreFixture.xml
    private static let storeNumbers = RenumberedStoreFixture.storeNumbers
    private func modelFolder(in directory: TemporaryDirectory) throws -> URL { try RenumberedStoreFixture.modelFolder(in: directory) }
    private func context(_ model: ManagedObjectModel, _ url: URL) throws -> ManagedObjectContext {
        try RenumberedStoreFixture.context(model, url)
    }
    private func titles(_ entity: String, in context: ManagedObjectContext) throws -> [String] {
        try RenumberedStoreFixture.titles(entity, in: context)
    }
    private func renumberedStore(model: ManagedObjectModel, at url: URL) throws {
        try RenumberedStoreFixture.renumberedStore(model: model, at: url)
    }

    @Test func aStoreNumberedDifferentlyOpensReadsAndWrites() throws {
        let directory = TemporaryDirectory()
        let modelURL = try modelFolder(in: directory)
        let storeURL = directory.file("Library.sqlite")
        try renumberedStore(model: ManagedObjectModel(contentsOf: modelURL), at: storeURL)

        // Our numbering does not fit the store: refused, as before.
        #expect(throws: StoreError.self) { try context(ManagedObjectModel(contentsOf: modelURL), storeURL) }
        #expect(try ManagedObjectModel.entityNumbers(ofStoreAt: storeURL) == Self.storeNumbers)

        do {
            let model = try ManagedObjectModel(contentsOf: modelURL, numberedLikeStoreAt: storeURL)
            #expect(model.entitiesByName.mapValues(\.entityNumber) == Self.storeNumbers)
            #expect(model.entitiesByName["Book"]?.entityNumbersIncludingSubentities.sorted() == [1, 3])
            let context = try self.context(model, storeURL)
            #expect(try titles("Book", in: context) == ["Bits", "Paper"])
            #expect(try titles("Ebook", in: context) == ["Bits"])
            let books = try context.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
            #expect(Set(books.map(\.entity.name)) == ["Book", "Ebook"])
            let author = try #require(try books[0].value(forKey: "author") as? ManagedObject)
            #expect(try author.value(forKey: "name") as? String == "Ann")
            #expect((try author.value(forKey: "books") as? Set<ManagedObject>)?.count == 2)

            let ebook = try context.insertNewObject(forEntityName: "Ebook")
            try ebook.setValue("More", forKey: "title")
            try ebook.setValue(author, forKey: "author")
            try context.save()
        }

        let queue = try DatabaseQueue(path: storeURL.path)
        let (newRowEntity, authorEntities, bookMax) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT Z_ENT FROM ZBOOK WHERE ZTITLE = 'More'"),
             try Int.fetchAll(db, sql: "SELECT DISTINCT Z_ENT FROM ZAUTHOR"),
             try Int.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 3"))
        }
        try queue.close()
        #expect(newRowEntity == 1)
        #expect(authorEntities == [2])
        // Primary keys of the Book table are counted on the root entity's row, under the store's number.
        #expect(bookMax == 3)

        let reopened = try context(ManagedObjectModel(contentsOf: modelURL, numberedLikeStoreAt: storeURL), storeURL)
        #expect(try titles("Ebook", in: reopened) == ["Bits", "More"])
        #expect(try titles("Book", in: reopened) == ["Bits", "More", "Paper"])
    }

    /// A store whose numbers have gaps, as one whose model lost entities over versions.
    @Test func aStoreWithGapsInItsNumberingReadsAndWrites() throws {
        let directory = TemporaryDirectory()
        let modelURL = try modelFolder(in: directory)
        let storeURL = directory.file("Library.sqlite")
        let numbers = ["Ebook": 4, "Author": 7, "Book": 2]
        try RenumberedStoreFixture.renumberedStore(model: ManagedObjectModel(contentsOf: modelURL), at: storeURL, numbers: numbers)
        do {
            let model = try ManagedObjectModel(contentsOf: modelURL, numberedLikeStoreAt: storeURL)
            #expect(model.entitiesByName.mapValues(\.entityNumber) == numbers)
            let context = try context(model, storeURL)
            #expect(try titles("Book", in: context) == ["Bits", "Paper"])
            #expect(try titles("Ebook", in: context) == ["Bits"])
            let ebook = try context.insertNewObject(forEntityName: "Ebook")
            try ebook.setValue("More", forKey: "title")
            try context.save()
        }
        let queue = try DatabaseQueue(path: storeURL.path)
        let entity = try queue.read { try Int.fetchOne($0, sql: "SELECT Z_ENT FROM ZBOOK WHERE ZTITLE = 'More'") }
        try queue.close()
        #expect(entity == 4)
        let reopened = try context(ManagedObjectModel(contentsOf: modelURL, numberedLikeStoreAt: storeURL), storeURL)
        #expect(try titles("Ebook", in: reopened) == ["Bits", "More"])
    }

    @Test func numbersThatDoNotFitTheModelAreRefused() throws {
        func model(_ numbers: [String: Int]) throws -> ManagedObjectModel {
            let loaded = try ManagedObjectModel(xmlData: Self.xml, source: "inline")
            // Fresh entities each time: descriptions belong to one model.
            return try ManagedObjectModel(entities: loaded.entities.map { entity in
                EntityDescription(name: entity.name, properties: [], superentityName: entity.superentity?.name)
            }, entityNumbers: numbers)
        }
        #expect(try model(["Author": 3, "Book": 1, "Ebook": 2]).entitiesByName["Ebook"]?.entityNumber == 2)
        // Gaps are allowed (entities removed over model versions).
        let gapped = try model(["Author": 9, "Book": 2, "Ebook": 5])
        #expect(gapped.entity(number: 5)?.name == "Ebook" && gapped.entity(number: 3) == nil)
        #expect(gapped.entity(number: 10) == nil && gapped.entity(number: 0) == nil)
        let cases: [([String: Int], String)] = [
            (["Author": 1, "Book": 2], "'Ebook' has no number"),
            (["Author": 1, "Book": 2, "Ebook": 3, "Shelf": 4], "'Shelf'"),
            (["Author": 1, "Book": 2, "Ebook": 0], "number 0"),
            (["Author": 1, "Book": 2, "Ebook": 16000], "number 16000"),
            (["Author": 1, "Book": 2, "Ebook": 2], "both have number 2"),
        ]
        for (numbers, culprit) in cases {
            let error = try #require(throws: ModelError.self) { try model(numbers) }
            guard case .unusableEntityNumbers(let reason) = error else { Issue.record("\(error)"); continue }
            #expect(reason.contains(culprit), "\(reason)")
        }
    }

    @Test func readingTheNumbersChangesNothing() throws {
        let directory = TemporaryDirectory()
        let storeURL = directory.file("Library.sqlite")
        try renumberedStore(model: ManagedObjectModel(contentsOf: modelFolder(in: directory)), at: storeURL)
        let before = try Data(contentsOf: storeURL)
        _ = try ManagedObjectModel.entityNumbers(ofStoreAt: storeURL)
        #expect(try Data(contentsOf: storeURL) == before)

        let text = directory.file("notes.txt")
        try Data("not a store at all, just enough text to be more than a header".utf8).write(to: text)
        #expect(throws: StoreError.self) { try ManagedObjectModel.entityNumbers(ofStoreAt: text) }
    }
}
