import Foundation
import Testing
@testable import OpenCoreData

/// Derived attributes from an Xcode model, computed at save into real SQLite stores: after every save the
/// stored values equal a naive recomputation from a fresh fetch, whichever side of a relationship changed.
@Suite struct DerivedAttributeTests {
    static let xml = InteropFixtures.modelXML("""
    <entity name="Author" representedClassName="Author">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="searchName" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(name)"/>
        <attribute name="bookCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="books.@count"/>
        <attribute name="totalPrice" optional="YES" attributeType="Double" derived="YES" derivationExpression="books.@sum.price"/>
        <attribute name="topPrice" optional="YES" attributeType="Double" derived="YES" derivationExpression="books.@max.price"/>
        <attribute name="savedAt" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()"/>
        <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
    </entity>
    <entity name="Book" representedClassName="Book">
        <attribute name="title" optional="YES" attributeType="String"/>
        <attribute name="price" optional="YES" attributeType="Double" defaultValueString="0"/>
        <attribute name="authorName" optional="YES" attributeType="String" derived="YES" derivationExpression="author.name"/>
        <attribute name="doublePrice" optional="YES" attributeType="Double" derived="YES" derivationExpression="price * 2"/>
        <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
    </entity>
    """)

    static func model() throws -> ManagedObjectModel { try ManagedObjectModel(xmlData: xml, source: "derived") }

    @Test func modelFileLoadsDerivations() throws {
        let model = try Self.model()
        let author = try #require(model.entitiesByName["Author"])
        #expect(author.attributesByName["bookCount"]?.isDerived == true)
        #expect(author.attributesByName["bookCount"]?.derivationExpression == .key("books.@count"))
        #expect(author.attributesByName["name"]?.isDerived == false)
        #expect(try model.entitiesByName["Book"]?.attributesByName["doublePrice"]?.derivationExpression
                == QueryExpression(format: "price * 2"))
    }

    @Test func valuesAreComputedAtSaveAndReadBack() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        let author = try context.insertNewObject(forEntityName: "Author")
        try author.setValue("Émile Zola", forKey: "name")
        for price in [3.0, 4.5] {
            let book = try context.insertNewObject(forEntityName: "Book")
            try book.setValue(price, forKey: "price")
            try book.setValue(author, forKey: "author")
        }
        #expect(try author.value(forKey: "bookCount") == nil)   // not computed before the save
        let before = Date()
        try context.save()
        // In the saving context...
        #expect(try author.value(forKey: "bookCount") as? Int64 == 2)
        // ...and in the store.
        let reader = stack.context()
        let read = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author")).first)
        #expect(try read.value(forKey: "searchName") as? String == "emile zola")
        #expect(try read.value(forKey: "bookCount") as? Int64 == 2)
        #expect(try read.value(forKey: "totalPrice") as? Double == 7.5)
        #expect(try read.value(forKey: "topPrice") as? Double == 4.5)
        let savedAt = try #require(try read.value(forKey: "savedAt") as? Date)
        #expect(savedAt >= before.addingTimeInterval(-1))
        let books = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
        for book in books {
            #expect(try book.value(forKey: "authorName") as? String == "Émile Zola")
            #expect(try book.value(forKey: "doublePrice") as? Double == (book.value(forKey: "price") as! Double) * 2)
        }
    }

    @Test func saveThatOnlyTouchesTheRelatedSideRecomputes() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        let author = try context.insertNewObject(forEntityName: "Author")
        try author.setValue("Ann", forKey: "name")
        let book = try context.insertNewObject(forEntityName: "Book")
        try book.setValue(2.0, forKey: "price")
        try book.setValue(author, forKey: "author")
        try context.save()

        // A fresh context edits only the book's price: the author's sum changes.
        let editor = stack.context()
        let editedBook = try #require(try editor.fetch(FetchRequest<ManagedObject>(entityName: "Book")).first)
        try editedBook.setValue(10.0, forKey: "price")
        try editor.save()
        // And only the author's name: the book's authorName changes.
        let renamer = stack.context()
        let renamed = try #require(try renamer.fetch(FetchRequest<ManagedObject>(entityName: "Author")).first)
        try renamed.setValue("Bea", forKey: "name")
        try renamer.save()

        let reader = stack.context()
        let readAuthor = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author")).first)
        #expect(try readAuthor.value(forKey: "totalPrice") as? Double == 10)
        let readBook = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Book")).first)
        #expect(try readBook.value(forKey: "authorName") as? String == "Bea")

        // Deleting the only book empties the aggregates.
        let deleter = stack.context()
        try deleter.delete(#require(try deleter.fetch(FetchRequest<ManagedObject>(entityName: "Book")).first))
        try deleter.save()
        let afterDelete = try #require(try stack.context().fetch(FetchRequest<ManagedObject>(entityName: "Author")).first)
        #expect(try afterDelete.value(forKey: "bookCount") as? Int64 == 0)
        #expect(try afterDelete.value(forKey: "totalPrice") as? Double == 0)
        #expect(try afterDelete.value(forKey: "topPrice") == nil)
    }

    @Test func childContextSavesComputeToo() throws {
        let stack = try TestStack(model: Self.model())
        let parent = stack.context()
        let author = try parent.insertNewObject(forEntityName: "Author")
        try author.setValue("Ann", forKey: "name")
        try parent.save()
        let child = ManagedObjectContext(concurrencyType: .confinement)
        child.parent = parent
        let childAuthor = try child.object(with: author.objectID)
        let book = try child.insertNewObject(forEntityName: "Book")
        try book.setValue(5.0, forKey: "price")
        try book.setValue(childAuthor, forKey: "author")
        try child.save()
        #expect(try author.value(forKey: "bookCount") as? Int64 == 1)
        try parent.save()
        Self.expectCounts(in: stack.context(), ["Ann": 1])
    }

    private static func expectCounts(in context: ManagedObjectContext, _ expected: [String: Int64]) {
        let authors = (try? context.fetch(FetchRequest<ManagedObject>(entityName: "Author"))) ?? []
        var counts: [String: Int64] = [:]
        for author in authors {
            if let name = try? author.value(forKey: "name") as? String {
                counts[name] = try? author.value(forKey: "bookCount") as? Int64
            }
        }
        #expect(counts == expected)
    }

    @Test func settingADerivedAttributeIsRefused() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        let author = try context.insertNewObject(forEntityName: "Author")
        do {
            try author.setValue(Int64(5), forKey: "bookCount")
            Issue.record("setting a derived attribute must be refused")
        } catch ObjectGraphError.derivedAttribute(let entity, let key) {
            #expect(entity == "Author" && key == "bookCount")
        }
        #expect(try author.value(forKey: "bookCount") == nil)
    }

    @Test func derivedAttributesFilterAndSortInTheStore() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        for (name, count) in [("Cy", 3), ("Al", 1), ("Bo", 2)] {
            let author = try context.insertNewObject(forEntityName: "Author")
            try author.setValue(name, forKey: "name")
            for _ in 0..<count {
                let book = try context.insertNewObject(forEntityName: "Book")
                try book.setValue(author, forKey: "author")
            }
        }
        try context.save()
        let reader = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "Author")
        request.predicate = try QueryPredicate(format: "bookCount >= 2")
        request.sortDescriptors = [QuerySortDescriptor(key: "bookCount", ascending: false)]
        let names = try reader.fetch(request).map { try $0.value(forKey: "name") as? String }
        #expect(names == ["Cy", "Bo"])
        let byCanonical = FetchRequest<ManagedObject>(entityName: "Author")
        byCanonical.predicate = try QueryPredicate(format: "searchName == %@", "al")
        #expect(try reader.fetch(byCanonical).count == 1)
    }

    /// Random edits on both sides, several per save; after each save a fresh context's stored derived
    /// values equal a recomputation from its own fetch.
    @Test(arguments: [1, 2, 3] as [UInt64]) func randomEditsKeepDerivedValuesRight(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        let names = ["Ann", "Ånn", "bob", "Çem", "dee"]
        for _ in 0..<25 {
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let authors = try context.fetch(FetchRequest<ManagedObject>(entityName: "Author"))
                let books = try context.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
                switch Int.random(in: 0..<7, using: &random) {
                case 0:
                    let author = try context.insertNewObject(forEntityName: "Author")
                    try author.setValue(names.randomElement(using: &random), forKey: "name")
                case 1, 2:
                    let book = try context.insertNewObject(forEntityName: "Book")
                    try book.setValue(Double(Int.random(in: 0...20, using: &random)), forKey: "price")
                    try book.setValue(authors.randomElement(using: &random), forKey: "author")
                case 3:
                    if let book = books.randomElement(using: &random) { context.delete(book) }
                case 4:
                    if let author = authors.randomElement(using: &random) { context.delete(author) }
                case 5:
                    if let author = authors.randomElement(using: &random) {
                        try author.setValue(names.randomElement(using: &random), forKey: "name")
                    }
                default:
                    if let book = books.randomElement(using: &random) {
                        if Bool.random(using: &random) {
                            try book.setValue(Double(Int.random(in: 0...20, using: &random)), forKey: "price")
                        } else {
                            try book.setValue(authors.randomElement(using: &random), forKey: "author")
                        }
                    }
                }
            }
            try context.save()
            try Self.checkAgainstRecomputation(stack.context())
        }
    }

    static func checkAgainstRecomputation(_ reader: ManagedObjectContext) throws {
        let books = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
        var booksByAuthor: [ManagedObjectID: [ManagedObject]] = [:]
        for book in books {
            let author = try book.value(forKey: "author") as? ManagedObject
            #expect(try book.value(forKey: "authorName") as? String == author?.value(forKey: "name") as? String)
            #expect(try book.value(forKey: "doublePrice") as? Double == (book.value(forKey: "price") as! Double) * 2)
            if let author { booksByAuthor[author.objectID, default: []].append(book) }
        }
        for author in try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author")) {
            let own = booksByAuthor[author.objectID] ?? []
            let prices = try own.map { try $0.value(forKey: "price") as! Double }
            let name = try author.value(forKey: "name") as? String
            #expect(try author.value(forKey: "searchName") as? String
                    == name.map { $0.folding(options: .diacriticInsensitive, locale: nil).lowercased() })
            #expect(try author.value(forKey: "bookCount") as? Int64 == Int64(own.count))
            #expect(try author.value(forKey: "totalPrice") as? Double == prices.reduce(0, +))
            #expect(try author.value(forKey: "topPrice") as? Double == prices.max())
        }
    }

    @Test(arguments: [
        ("books.@count.price", "to-many"),
        ("author.name", "not a property"),          // on Author: no 'author'
        ("books.title", "to-many"),
        ("random()", "random()"),
        ("bookCount + 1", "derivations do not chain"),
        ("name ==", "does not parse"),
        ("SUBQUERY(books, $b, $b.price > 1).@count", "not a key path"),
    ])
    func badDerivationsAreRefusedAtLoad(expression: String, reasonPart: String) throws {
        let xml = InteropFixtures.modelXML("""
        <entity name="Author">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="bookCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="books.@count"/>
            <attribute name="bad" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="\(expression)"/>
            <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author"/>
        </entity>
        <entity name="Book">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="price" optional="YES" attributeType="Double"/>
            <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books"/>
        </entity>
        """)
        do {
            _ = try ManagedObjectModel(xmlData: xml, source: "bad")
            Issue.record("'\(expression)' must be refused")
        } catch ModelError.invalidDerivation(let entity, let attribute, let reason) {
            #expect(entity == "Author")
            #expect(attribute == "bad")
            #expect(reason.contains(reasonPart), "\(reason)")
        }
    }

    @Test func aRelationshipWithoutInverseIsRefused() throws {
        let xml = InteropFixtures.modelXML("""
        <entity name="A">
            <attribute name="n" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="bs.@count"/>
            <relationship name="bs" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="B"/>
        </entity>
        <entity name="B"><attribute name="x" optional="YES" attributeType="String"/></entity>
        """)
        #expect(throws: ModelError.self) { try ManagedObjectModel(xmlData: xml, source: "no inverse") }
    }

    @Test func derivationEntersTheAttributeVersionHash() throws {
        let plain = AttributeDescription(name: "n", type: .integer64)
        let derived = AttributeDescription(name: "n", type: .integer64)
        derived.derivationExpression = .key("items.@count")
        let other = AttributeDescription(name: "n", type: .integer64)
        other.derivationExpression = .key("others.@count")
        #expect(plain.versionHash != derived.versionHash)
        #expect(derived.versionHash != other.versionHash)
    }
}
