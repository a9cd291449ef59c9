import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A model loaded from an Xcode `.xcdatamodeld` drives a real store: every attribute type, relationships of
/// every kind, and inheritance round-trip through a file.
@Suite struct XcodeModelRoundTripTests {
    static func model() throws -> ManagedObjectModel {
        let url = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
            .appendingPathComponent("Library.xcdatamodeld")
        return try ManagedObjectModel(contentsOf: url)
    }

    @Test func objectsOfEveryTypeRoundTrip() throws {
        let model = try Self.model()
        let stack = try TestStack(model: model)
        let context = stack.context()
        let author = try context.insertNewObject(forEntityName: "Author")
        try author.setValue("Ursula", forKey: "name")
        try author.setValue(Date(timeIntervalSinceReferenceDate: -1_000_000_000), forKey: "born")
        let book = try context.insertNewObject(forEntityName: "Book")
        // Defaults from the model file.
        #expect(try book.value(forKey: "chapterCount") as? Int32 == 12)
        #expect(try book.value(forKey: "inPrint") as? Bool == true)
        #expect(try book.value(forKey: "price") as? Decimal == Decimal(string: "9.99"))
        #expect(try book.value(forKey: "website") as? URL == URL(string: "https://example.org/books"))
        try book.setValue("Earthsea", forKey: "title")
        try book.setValue("0123456789", forKey: "isbn")
        try book.setValue(Int16(250), forKey: "pageCount")
        try book.setValue(Int64(1_000_000_000_000), forKey: "copiesSold")
        try book.setValue(Float(4.5), forKey: "rating")
        try book.setValue(0.7, forKey: "weight")
        try book.setValue(Data([1, 2, 3]), forKey: "scan")
        try book.setValue(["front", "back"], forKey: "cover")   // Transformable, an NSArray
        try book.setValue(author, forKey: "author")
        let chapters = try (1...3).map { index -> ManagedObject in
            let chapter = try context.insertNewObject(forEntityName: "Chapter")
            try chapter.setValue("Chapter \(index)", forKey: "title")
            return chapter
        }
        try book.setValue(chapters.reversed(), forKey: "chapters")
        let shelf = try context.insertNewObject(forEntityName: "Shelf")
        try shelf.setValue("A1", forKey: "label")
        try shelf.add(book, toKey: "books")
        let magazine = try context.insertNewObject(forEntityName: "Magazine")
        try magazine.setValue("Monthly", forKey: "title")
        try context.save()

        let reader = stack.context()
        let items = FetchRequest<ManagedObject>(entityName: "Item")   // abstract parent: both sub-entities
        items.sortDescriptors = [QuerySortDescriptor(key: "title")]
        let fetched = try reader.fetch(items)
        #expect(fetched.map(\.entity.name) == ["Book", "Magazine"])
        let readBook = fetched[0]
        #expect(try readBook.value(forKey: "isbn") as? String == "0123456789")
        #expect(try readBook.value(forKey: "pageCount") as? Int16 == 250)
        #expect(try readBook.value(forKey: "copiesSold") as? Int64 == 1_000_000_000_000)
        #expect(try readBook.value(forKey: "rating") as? Float == 4.5)
        #expect(try readBook.value(forKey: "weight") as? Double == 0.7)
        #expect(try readBook.value(forKey: "scan") as? Data == Data([1, 2, 3]))
        #expect(try readBook.value(forKey: "cover") as? [String] == ["front", "back"])
        #expect(try readBook.value(forKey: "bookID") as? UUID == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(try readBook.value(forKeyPath: "author.name") as? String == "Ursula")
        let orderedTitles = try (readBook.value(forKey: "chapters") as? [ManagedObject])?.map { try $0.value(forKey: "title") as? String }
        #expect(orderedTitles == ["Chapter 3", "Chapter 2", "Chapter 1"])
        #expect((try readBook.value(forKey: "shelves") as? Set<ManagedObject>)?.count == 1)
        #expect(try fetched[1].value(forKey: "issue") as? Int32 == 1)

        // Rules from the model file hold at save: the regular expression on Author.name, the ISBN length.
        let bad = try reader.insertNewObject(forEntityName: "Author")
        try bad.setValue("lowercase", forKey: "name")
        try readBook.setValue("123", forKey: "isbn")
        do {
            try reader.save()
            Issue.record("the model's rules must refuse this save")
        } catch ObjectGraphError.validationFailed(let failures) {
            #expect(Set(failures.map(\.key)) == ["name", "isbn"])
        }
    }
}
