import Foundation
import Testing
@testable import OpenCoreData

/// Fetch request templates stored on the model: read from Xcode's XML and from compiled models alike, written
/// back, filled in with substitution variables, and run against real SQLite stores.
@Suite struct FetchRequestTemplateTests {
    static let xml = InteropFixtures.modelXML("""
    <entity name="Author">
        <attribute name="name" optional="YES" attributeType="String"/>
        <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
    </entity>
    <entity name="Book">
        <attribute name="title" optional="YES" attributeType="String"/>
        <attribute name="pages" optional="YES" attributeType="Integer 64" defaultValueString="0"/>
        <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
    </entity>
    <entity name="Ebook" parentEntity="Book">
        <attribute name="format" optional="YES" attributeType="String"/>
    </entity>
    <fetchRequest name="byAuthor" entity="Book" predicateString="author.name == $NAME AND pages &gt;= $MIN"/>
    <fetchRequest name="longIDs" entity="Book" predicateString="pages &gt; 300" fetchLimit="5" fetchBatchSize="10" resultType="1" includeSubentities="NO" includePendingChanges="NO" returnObjectsAsFaults="NO" returnDistinctResults="YES"/>
    <fetchRequest name="allAuthors" entity="Author"/>
    <fetchRequest name="withProlificAuthor" entity="Book" predicateString="SUBQUERY(author.books, $b, $b.pages &gt; $PAGES).@count &gt; 0"/>
    """)

    static func model() throws -> ManagedObjectModel { try ManagedObjectModel(xmlData: xml, source: "templates") }

    /// The model without the SUBQUERY template, which the compiled-model fixture has no archived form for.
    static func compilableModel() throws -> ManagedObjectModel {
        let model = try model()
        try model.setFetchRequestTemplate(nil, forName: "withProlificAuthor")
        return model
    }

    /// Every setting a template carries, so two models' templates can be compared; `faults` leaves out
    /// `returnsObjectsAsFaults`, which a compiled model's flags hold in a bit no public source confirms (not read).
    static func canonical(_ model: ManagedObjectModel, faults: Bool = true) -> [String] {
        model.fetchRequestTemplatesByName.sorted { $0.key < $1.key }.map { name, request in
            "\(name) \(request.entityName) \(request.predicate?.predicateFormat ?? "-") "
                + "sort=\(request.sortDescriptors.map { "\($0.key) \($0.ascending)" }) limit=\(request.fetchLimit) "
                + "offset=\(request.fetchOffset) batch=\(request.fetchBatchSize) type=\(request.resultType) "
                + "sub=\(request.includesSubentities) pending=\(request.includesPendingChanges) "
                + (faults ? "faults=\(request.returnsObjectsAsFaults) " : "") + "distinct=\(request.returnsDistinctResults)"
        }
    }

    @Test func xmlTemplatesLoadWithTheirSettings() throws {
        let model = try Self.model()
        #expect(model.fetchRequestTemplatesByName.keys.sorted() == ["allAuthors", "byAuthor", "longIDs", "withProlificAuthor"])
        let byAuthor = try #require(model.fetchRequestTemplate(forName: "byAuthor"))
        #expect(byAuthor.entityName == "Book")
        #expect(byAuthor.predicate == (try QueryPredicate(format: "author.name == $NAME AND pages >= $MIN")))
        // Absent settings keep Core Data's defaults.
        #expect(byAuthor.includesSubentities && byAuthor.includesPendingChanges && !byAuthor.returnsDistinctResults)
        #expect(byAuthor.fetchLimit == 0 && byAuthor.resultType == .managedObject)
        let longIDs = try #require(model.fetchRequestTemplate(forName: "longIDs"))
        #expect(longIDs.fetchLimit == 5 && longIDs.fetchBatchSize == 10 && longIDs.resultType == .managedObjectID)
        #expect(!longIDs.includesSubentities && !longIDs.includesPendingChanges && !longIDs.returnsObjectsAsFaults)
        #expect(longIDs.returnsDistinctResults)
        #expect(model.fetchRequestTemplate(forName: "allAuthors")?.predicate == nil)
        #expect(model.fetchRequestTemplate(forName: "missing") == nil)

        // The other spelling of the flags reads alike.
        let other = try ManagedObjectModel(xmlData: InteropFixtures.modelXML("""
        <entity name="Item"><attribute name="name" optional="YES" attributeType="String"/></entity>
        <fetchRequest name="plain" entity="Item" includesSubentities="NO" returnsDistinctResults="YES"/>
        """), source: "spelling")
        let plain = try #require(other.fetchRequestTemplate(forName: "plain"))
        #expect(!plain.includesSubentities && plain.returnsDistinctResults)
    }

    @Test func xmlRoundTripKeepsTemplates() throws {
        let model = try Self.model()
        let written = try ManagedObjectModel(xmlData: model.xcodeModelXML(), source: "written")
        #expect(Self.canonical(written) == Self.canonical(model))
        #expect(Self.canonical(written).count == 4)
        // Through a bundle on disk too, as `ocd model convert` writes it.
        let directory = TemporaryDirectory()
        let bundle = directory.file("Books.xcdatamodeld")
        try model.writeModelBundle(to: bundle, versionName: "Books")
        #expect(Self.canonical(try ManagedObjectModel(contentsOf: bundle)) == Self.canonical(model))
    }

    @Test func compiledFormGivesTheSameTemplates() throws {
        let model = try Self.compilableModel()
        let compiled = try ManagedObjectModel(compiledModelData: CompiledModelFixture.momData(model), source: "templates.mom")
        #expect(Self.canonical(compiled, faults: false) == Self.canonical(model, faults: false))
        #expect(Self.canonical(compiled).count == 3)
        #expect(compiled.unreadCompiledModelKeys == [])

        // Sort descriptors, offsets and the other flags in the archive are read; keys with no counterpart are listed.
        let data = CompiledModelFixture.momData(model) { archived in
            archived.fetchRequestTemplates["sorted"] = ArchivedObjectFixture.fetchRequest(
                entity: archived.entities["Author"]!, predicate: nil, sort: [QuerySortDescriptor(key: "name", ascending: false)],
                integers: ["NSFetchOffset": 2, "NSFetchRequestFlags": 0x1])
            let grouped = ArchivedObjectFixture.fetchRequest(entity: archived.entities["Book"]!, predicate: nil)
            grouped.objects["NSValuesToGroupBy"] = NSArray(array: [NSString(string: "pages")])
            archived.fetchRequestTemplates["grouped"] = grouped
        }
        let read = try ManagedObjectModel(compiledModelData: data, source: "more.mom")
        let sorted = try #require(read.fetchRequestTemplate(forName: "sorted"))
        #expect(sorted.sortDescriptors.map(\.key) == ["name"] && sorted.sortDescriptors.first?.ascending == false)
        #expect(sorted.fetchOffset == 2 && sorted.returnsDistinctResults && !sorted.includesSubentities && !sorted.includesPendingChanges)
        #expect(read.unreadCompiledModelKeys == ["model: fetch request template 'grouped': NSValuesToGroupBy"])
    }

    @Test func substitutionFillsTheVariables() throws {
        let model = try Self.model()
        let request = try #require(try model.fetchRequestFromTemplate(
            withName: "byAuthor", substitutionVariables: ["NAME": "Le Guin", "MIN": 100, "UNUSED": "ignored"]))
        #expect(request.predicate == (try QueryPredicate(format: "author.name == %@ AND pages >= %@", "Le Guin", 100)))
        // The template itself keeps its variables.
        #expect(model.fetchRequestTemplate(forName: "byAuthor")?.predicate
                == (try QueryPredicate(format: "author.name == $NAME AND pages >= $MIN")))
        // A variable a SUBQUERY binds is no substitution variable.
        let prolific = try #require(try model.fetchRequestFromTemplate(withName: "withProlificAuthor",
                                                                      substitutionVariables: ["PAGES": 500]))
        #expect(prolific.predicate == (try QueryPredicate(format: "SUBQUERY(author.books, $b, $b.pages > 500).@count > 0")))
        #expect(try model.fetchRequestFromTemplate(withName: "nothing", substitutionVariables: [:]) == nil)
        #expect(try model.fetchRequestFromTemplate(withName: "allAuthors", substitutionVariables: [:])?.entityName == "Author")
    }

    @Test func aMissingVariableIsNamed() throws {
        let model = try Self.model()
        #expect(throws: ModelError.missingTemplateVariable(template: "byAuthor", variable: "MIN")) {
            try model.fetchRequestFromTemplate(withName: "byAuthor", substitutionVariables: ["NAME": "x"])
        }
        #expect(throws: ModelError.missingTemplateVariable(template: "withProlificAuthor", variable: "PAGES")) {
            try model.fetchRequestFromTemplate(withName: "withProlificAuthor", substitutionVariables: ["b": 1])
        }
        #expect(throws: QueryLanguageError.self) {
            try model.fetchRequestFromTemplate(withName: "byAuthor", substitutionVariables: ["NAME": NSObject(), "MIN": 1])
        }
    }

    /// A fetch through a template returns what filtering the inserted books by hand gives, for several values.
    @Test func aFetchThroughATemplateReturnsTheRightObjects() throws {
        let stack = try TestStack(model: try Self.model())
        let writer = stack.context()
        var books: [(title: String, author: String, pages: Int64)] = []
        var authors: [String: ManagedObject] = [:]
        for name in ["Le Guin", "Banks", "Jemisin"] {
            let author = try writer.insertNewObject(forEntityName: "Author")
            try author.setValue(name, forKey: "name")
            authors[name] = author
        }
        var generator = InteropFixtures.SeededGenerator(seed: 24)
        for index in 0..<40 {
            let author = ["Le Guin", "Banks", "Jemisin"].randomElement(using: &generator)!
            let pages = Int64.random(in: 50...600, using: &generator)
            let book = try writer.insertNewObject(forEntityName: index % 4 == 0 ? "Ebook" : "Book")
            try book.setValue("t\(index)", forKey: "title")
            try book.setValue(pages, forKey: "pages")
            try book.setValue(authors[author], forKey: "author")
            books.append(("t\(index)", author, pages))
        }
        try writer.save()

        let context = stack.context()
        for (name, minimum) in [("Le Guin", Int64(0)), ("Banks", 300), ("Jemisin", 550), ("Nobody", 0)] {
            let request = try #require(try stack.model.fetchRequestFromTemplate(
                withName: "byAuthor", substitutionVariables: ["NAME": name, "MIN": minimum]))
            let titles = Set(try context.fetch(request).map { try #require(try $0.value(forKey: "title") as? String) })
            #expect(titles == Set(books.filter { $0.author == name && $0.pages >= minimum }.map(\.title)), "\(name) \(minimum)")
        }
        // A template's settings apply: sub-entities left out, IDs, at most five.
        let longIDs = try #require(try stack.model.fetchRequestFromTemplate(withName: "longIDs", substitutionVariables: [:],
                                                                            as: ManagedObjectID.self))
        let ids: [ManagedObjectID] = try context.fetch(longIDs)
        #expect(ids.count == min(5, books.enumerated().filter { $0.offset % 4 != 0 && $0.element.pages > 300 }.count))
    }

    @Test func badTemplatesAreTypedErrorsNamingThem() throws {
        func load(_ template: String) throws {
            _ = try ManagedObjectModel(xmlData: InteropFixtures.modelXML("""
            <entity name="Item"><attribute name="name" optional="YES" attributeType="String"/></entity>
            \(template)
            """), source: "bad")
        }
        #expect(throws: ModelError.invalidFetchRequestTemplate(
            name: "ghost", reason: "it fetches entity 'Ghost', which the model does not have")) {
            try load(#"<fetchRequest name="ghost" entity="Ghost"/>"#)
        }
        do {
            try load(#"<fetchRequest name="broken" entity="Item" predicateString="name =="/>"#)
            Issue.record("a predicate that does not parse was accepted")
        } catch ModelError.invalidFetchRequestTemplate(let name, _) {
            #expect(name == "broken")
        }
        #expect(throws: ModelError.invalidFetchRequestTemplate(name: "huge", reason: "fetchLimit '-1' is not a count")) {
            try load(#"<fetchRequest name="huge" entity="Item" fetchLimit="-1"/>"#)
        }
        #expect(throws: ModelError.invalidFetchRequestTemplate(name: "odd", reason: "resultType '3' is not 0, 1, 2 or 4")) {
            try load(#"<fetchRequest name="odd" entity="Item" resultType="3"/>"#)
        }
        #expect(throws: ModelError.self) { try load(#"<fetchRequest entity="Item"/>"#) }

        // A compiled model's template on an entity the model lacks, or with a result type not read.
        let model = try Self.compilableModel()
        #expect(throws: ModelError.invalidFetchRequestTemplate(
            name: "ghost", reason: "it fetches entity 'Ghost', which the model does not have")) {
            try ManagedObjectModel(compiledModelData: CompiledModelFixture.momData(model) { archived in
                archived.fetchRequestTemplates["ghost"] = ArchivedObjectFixture.fetchRequest(entity: NSString(string: "Ghost"), predicate: nil)
            }, source: "ghost.mom")
        }
        // One that is not read (a result type not known) is left out and listed; the model still loads.
        let loaded = try ManagedObjectModel(compiledModelData: CompiledModelFixture.momData(model) { archived in
            archived.fetchRequestTemplates["odd"] = ArchivedObjectFixture.fetchRequest(
                entity: archived.entities["Book"]!, predicate: nil, integers: ["NSResultType": 3])
        }, source: "odd.mom")
        #expect(loaded.fetchRequestTemplate(forName: "odd") == nil)
        #expect(loaded.unreadCompiledModelKeys.contains { $0.contains("fetch request template 'odd' left out") })
    }

    @Test func settingTemplatesInCode() throws {
        let model = try Self.model()
        let request = FetchRequest<ManagedObject>(entityName: "Author")
        request.predicate = try QueryPredicate(format: "name BEGINSWITH $PREFIX")
        try model.setFetchRequestTemplate(request, forName: "byPrefix")
        // The model keeps a copy: later edits to the request, or to a template handed out, change nothing.
        request.entityName = "Book"
        model.fetchRequestTemplate(forName: "byPrefix")?.fetchLimit = 3
        let stored = try #require(model.fetchRequestTemplate(forName: "byPrefix"))
        #expect(stored.entityName == "Author" && stored.fetchLimit == 0)

        #expect(throws: ModelError.invalidFetchRequestTemplate(
            name: "ghost", reason: "it fetches entity 'Ghost', which the model does not have")) {
            try model.setFetchRequestTemplate(FetchRequest<ManagedObject>(entityName: "Ghost"), forName: "ghost")
        }
        #expect(throws: ModelError.self) { try model.setFetchRequestTemplate(request, forName: "") }
        #expect(model.fetchRequestTemplate(forName: "ghost") == nil)

        try model.setFetchRequestTemplate(nil, forName: "allAuthors")
        #expect(model.fetchRequestTemplate(forName: "allAuthors") == nil)

        // A coordinator puts the model to use: from then on templates are fixed (changing one stops the program).
        #expect(!model.fetchRequestTemplateStore.isInUse)
        _ = PersistentStoreCoordinator(managedObjectModel: model)
        #expect(model.fetchRequestTemplateStore.isInUse)
    }
}
