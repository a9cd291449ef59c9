import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// `migratePersistentStore(_:to:options:type: .postgreSQL)`: a store file's objects, with every value, a
/// sub-entity, a to-one with its to-many inverse and a many-to-many, moved into a new PostgreSQL schema in one
/// transaction; a schema that is not new is refused and left as it was.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLStoreCopyTests {
    /// A temporary folder for the store file and a schema of its own on the test server.
    static func place() throws -> (folder: URL, configuration: PostgreSQLStoreConfiguration) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pg-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder, try PostgreSQLTestServer.freshConfiguration())
    }

    static func remove(_ folder: URL, _ configuration: PostgreSQLStoreConfiguration) {
        PostgreSQLTestServer.drop(configuration)
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func aStoreFileMovesOntoTheServer() throws {
        let (folder, configuration) = try Self.place()
        defer { Self.remove(folder, configuration) }
        let model = try LibraryModel.make()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let file = try coordinator.addPersistentStore(type: .sqlite, at: folder.appendingPathComponent("Library.sqlite"))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let born = Date(timeIntervalSinceReferenceDate: 12345.5)
        let ann = try context.insertNewObject(forEntityName: "Author")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue(born, forKey: "born")
        try ann.setValue(Decimal(string: "4.25")!, forKey: "rating")
        try ann.setValue(Data([1, 2, 3]), forKey: "photo")
        try ann.setValue(true, forKey: "active")
        let tags = try ["old", "new"].map { label in
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue(label, forKey: "label")
            return tag
        }
        for (index, entity) in ["Book", "Novel", "Book"].enumerated() {
            let book = try context.insertNewObject(forEntityName: entity)
            try book.setValue("Book \(index)", forKey: "title")
            try book.setValue(Int32(100 + index), forKey: "pages")
            try book.setValue(ann, forKey: "author")
            try book.setValue(Set(index == 0 ? tags : [tags[1]]), forKey: "tags")
            if entity == "Novel" { try book.setValue("mystery", forKey: "genre") }
        }
        try context.save()

        let url = try #require(URL(string: OcdPostgreSQLCommandTests.url(of: configuration)))
        let server = try coordinator.migratePersistentStore(file, to: url, type: .postgreSQL)
        #expect(coordinator.persistentStores.map(ObjectIdentifier.init) == [ObjectIdentifier(server)] && coordinator.postgreSQLStores.count == 1)
        defer { coordinator.remove(server) }

        let reader = ManagedObjectContext(concurrencyType: .confinement)
        reader.persistentStoreCoordinator = coordinator
        let authors = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author"))
        #expect(authors.count == 1)
        let author = try #require(authors.first)
        #expect(try author.value(forKey: "name") as? String == "Ann")
        #expect(try author.value(forKey: "born") as? Date == born)
        #expect(try author.value(forKey: "rating") as? Decimal == Decimal(string: "4.25")!)
        #expect(try author.value(forKey: "photo") as? Data == Data([1, 2, 3]))
        #expect(try author.value(forKey: "active") as? Bool == true)
        #expect((try author.value(forKey: "books") as? Set<ManagedObject>)?.count == 3)
        let request = FetchRequest<ManagedObject>(entityName: "Book")
        request.sortDescriptors = [QuerySortDescriptor(key: "pages", ascending: true)]
        let books = try reader.fetch(request)
        #expect(try books.map { try $0.value(forKey: "title") as? String } == ["Book 0", "Book 1", "Book 2"])
        #expect(books.map(\.entity.name) == ["Book", "Novel", "Book"])
        #expect(try books.map { (try $0.value(forKey: "tags") as? Set<ManagedObject>)?.count } == [2, 1, 1])
        let novels = FetchRequest<ManagedObject>(entityName: "Novel")
        novels.predicate = try QueryPredicate(format: "genre == 'mystery' AND author.name == 'Ann'")
        #expect(try reader.count(for: novels) == 1)
        // New objects take keys past the copied ones.
        try reader.insertNewObject(forEntityName: "Tag").setValue("newer", forKey: "label")
        try reader.save()
        #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Tag")) == 3)

        // A second copy into the same schema is refused, and the schema keeps what it had.
        let again = PersistentStoreCoordinator(managedObjectModel: model)
        let second = try again.addPersistentStore(type: .sqlite, at: folder.appendingPathComponent("Library.sqlite"))
        #expect { try again.migratePersistentStore(second, to: url, type: .postgreSQL) } throws: { error in
            "\(error)".contains("is not a new store")
        }
        #expect(again.persistentStores.first === second && again.postgreSQLStores.isEmpty)
        #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Tag")) == 3)
    }

    /// Every object, value and relationship of a store, described in one sorted list: what two copies of a
    /// store must agree on whatever their backend (keys aside).
    static func contents(of coordinator: PersistentStoreCoordinator) throws -> [String] {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        func describe(_ value: Any?) -> String {
            switch value {
            case let object as ManagedObject: return "\(object.entity.name)#\(object.objectID.primaryKey)"
            case let set as Set<ManagedObject>: return set.map { describe($0) }.sorted().joined(separator: ",")
            case nil: return "nil"
            case let value?: return "\(value)"
            }
        }
        var lines: [String] = []
        for entity in coordinator.managedObjectModel.entities {
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.includesSubentities = false
            for object in try context.fetch(request) {
                let values = try entity.allProperties.map { "\($0.name)=\(describe(try object.value(forKey: $0.name)))" }
                lines.append("\(describe(object)) " + values.sorted().joined(separator: " "))
            }
        }
        return lines.sorted()
    }

    /// Out of the server: a PostgreSQL store copied into an SQLite file, an XML store and memory holds the
    /// same objects, values, keys and relationships as the server's (read before the copy), and each
    /// new store takes new keys past the copied ones; the server's store is left as it was.
    @Test func aServerStoreMovesOutIntoFiles() throws {
        let (folder, configuration) = try Self.place()
        defer { Self.remove(folder, configuration) }
        let model = try LibraryModel.make()
        let url = try #require(URL(string: OcdPostgreSQLCommandTests.url(of: configuration)))
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let server = try coordinator.addPersistentStore(type: .postgreSQL, at: url)
            defer { coordinator.remove(server) }
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            var generator = SeededGenerator(seed: 42)
            let tags = try (0..<4).map { index in
                let tag = try context.insertNewObject(forEntityName: "Tag")
                try tag.setValue("tag \(index)", forKey: "label")
                return tag
            }
            for index in 0..<6 {
                let author = try context.insertNewObject(forEntityName: "Author")
                try author.setValue("Author \(index)", forKey: "name")
                try author.setValue(Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &generator)), forKey: "born")
                try author.setValue(Decimal(Int.random(in: 0...500, using: &generator)) / 100, forKey: "rating")
                try author.setValue(Bool.random(using: &generator), forKey: "active")
                if Bool.random(using: &generator) { try author.setValue(Data((0..<Int.random(in: 0...40, using: &generator)).map { UInt8($0) }), forKey: "photo") }
                for book in 0..<Int.random(in: 0...3, using: &generator) {
                    let object = try context.insertNewObject(forEntityName: Bool.random(using: &generator) ? "Novel" : "Book")
                    try object.setValue("Book \(index).\(book)", forKey: "title")
                    try object.setValue(author, forKey: "author")
                    try object.setValue(Set(tags.filter { _ in Bool.random(using: &generator) }), forKey: "tags")
                }
            }
            try context.save()
        }
        let reading = PersistentStoreCoordinator(managedObjectModel: model)
        let server = try reading.addPersistentStore(type: .postgreSQL, at: url)
        let expected = try Self.contents(of: reading)
        #expect(expected.count > 10)
        reading.remove(server)

        for (name, type) in [("Library.sqlite", StoreType.sqlite), ("Library.xml", .xml), ("memory", .inMemory)] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let source = try coordinator.addPersistentStore(type: .postgreSQL, at: url)
            let copy = try coordinator.migratePersistentStore(source, to: folder.appendingPathComponent(name), type: type)
            #expect(coordinator.persistentStores.count == 1 && coordinator.persistentStores.first === copy)
            #expect(try Self.contents(of: coordinator) == expected, "\(type)")
            if type != .inMemory {
                let reopened = PersistentStoreCoordinator(managedObjectModel: model)
                try reopened.addPersistentStore(type: type, at: folder.appendingPathComponent(name))
                #expect(try Self.contents(of: reopened) == expected, "\(type) reopened")
                let context = ManagedObjectContext(concurrencyType: .confinement)
                context.persistentStoreCoordinator = reopened
                let tag = try context.insertNewObject(forEntityName: "Tag")
                try context.save()
                #expect(tag.objectID.primaryKey > 4, "\(type): a new key past the copied ones")
            }
        }
        let after = PersistentStoreCoordinator(managedObjectModel: model)
        let again = try after.addPersistentStore(type: .postgreSQL, at: url)
        defer { after.remove(again) }
        #expect(try Self.contents(of: after) == expected)
    }

    /// `ocd copy URL FILE`: the server's store out into a new SQLite file, with the model the database
    /// carries, which `ocd fetch` then reads.
    @Test(.enabled(if: TestProgram.ocd != nil, "ocd is not built")) func ocdCopyTakesAStoreOffTheServer() throws {
        let (folder, configuration) = try Self.place()
        defer { Self.remove(folder, configuration) }
        let xml = folder.appendingPathComponent("pets.xml")
        try Data(Self.petsXML.utf8).write(to: xml)
        let url = OcdPostgreSQLCommandTests.url(of: configuration)
        let onto = try TestProgram.run(TestProgram.ocd!, ["copy", xml.path, url])
        #expect(onto.status == 0, "\(onto.stderr)")
        let file = folder.appendingPathComponent("pets.sqlite")
        let off = try TestProgram.run(TestProgram.ocd!, ["copy", url, file.path, "--model", xml.path])
        #expect(off.status == 0, "\(off.stderr)")
        #expect(off.stdout.contains("Copied 3 objects"), "\(off.stdout)")
        let pets = try TestProgram.run(TestProgram.ocd!, ["fetch", file.path, "--model", xml.path, "--entity", "PET",
                                                          "--predicate", "owner.name == 'Ann & Bo'", "--count"])
        #expect(pets.status == 0, "\(pets.stderr)")
        #expect(pets.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(pets.stdout)")
        let again = try TestProgram.run(TestProgram.ocd!, ["copy", url, file.path, "--model", xml.path])
        #expect(again.status != 0 && again.stderr.contains("exists"), "\(again.stderr)")
    }

    static let petsXML = """
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
        <database>
            <databaseInfo><version>134481920</version><UUID>2CB996DF-63DA-4182-BC5B-7CB919C1BB09</UUID><nextObjectID>104</nextObjectID></databaseInfo>
            <object type="PERSON" id="z101">
                <attribute name="name" type="string">Ann &amp; Bo</attribute>
                <relationship name="pets" type="0/0" destination="PET" idrefs="z102 z103"></relationship>
            </object>
            <object type="PET" id="z102"><relationship name="owner" type="1/1" destination="PERSON" idrefs="z101"></relationship></object>
            <object type="PET" id="z103"><relationship name="owner" type="1/1" destination="PERSON" idrefs="z101"></relationship></object>
        </database>
        """

    /// A device's data onto the server in one command: `ocd copy` of a Core Data XML store into a new schema,
    /// which `ocd fetch` then reads; a second copy into it is refused.
    @Test(.enabled(if: TestProgram.ocd != nil, "ocd is not built")) func ocdCopyFillsANewSchema() throws {
        let (folder, configuration) = try Self.place()
        defer { Self.remove(folder, configuration) }
        let xml = folder.appendingPathComponent("pets.xml")
        try Data(Self.petsXML.utf8).write(to: xml)
        let url = OcdPostgreSQLCommandTests.url(of: configuration)
        let copy = try TestProgram.run(TestProgram.ocd!, ["copy", xml.path, url])
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(copy.stdout.contains("Copied 3 objects"), "\(copy.stdout)")
        let pets = try TestProgram.run(TestProgram.ocd!, ["fetch", url, "--model", xml.path, "--entity", "PET",
                                                          "--predicate", "owner.name == 'Ann & Bo'", "--count"])
        #expect(pets.status == 0, "\(pets.stderr)")
        #expect(pets.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(pets.stdout)")
        let again = try TestProgram.run(TestProgram.ocd!, ["copy", xml.path, url])
        #expect(again.status != 0 && again.stderr.contains("not a new store"), "\(again.stderr)")
    }
}
