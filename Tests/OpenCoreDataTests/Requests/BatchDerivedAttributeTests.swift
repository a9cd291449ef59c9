import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Batch updates and inserts write rows without the save that computes derived attributes; they recompute
/// the derived attributes that read what they change, on their own rows and on related ones, or refuse
/// before writing anything. Checked against a naive recomputation from a fresh context on the store file.
@Suite struct BatchDerivedAttributeTests {
    /// Authors and books (``DerivedAttributeTests``'s model) saved to a store file.
    static func stack() throws -> TestStack {
        let stack = try TestStack(model: DerivedAttributeTests.model())
        let context = stack.context()
        for (name, prices) in [("Ann", [2.0, 5.0]), ("Émile", [1.5]), ("Zoë", [] as [Double])] {
            let author = try context.insertNewObject(forEntityName: "Author")
            try author.setValue(name, forKey: "name")
            for price in prices {
                let book = try context.insertNewObject(forEntityName: "Book")
                try book.setValue(price, forKey: "price")
                try book.setValue(author, forKey: "author")
            }
        }
        let loose = try context.insertNewObject(forEntityName: "Book")
        try loose.setValue(7.0, forKey: "price")
        try context.save()
        return stack
    }

    func savedAt(_ stack: TestStack) throws -> [String: Date] {
        var result: [String: Date] = [:]
        for author in try stack.context().fetch(FetchRequest<ManagedObject>(entityName: "Author")) {
            result[try author.value(forKey: "name") as! String] = try author.value(forKey: "savedAt") as? Date
        }
        return result
    }

    @Test func batchUpdateOfAnAttributeRecomputesItsRowsAndTheRowsReadingIt() throws {
        let stack = try Self.stack()
        let before = try savedAt(stack)
        let request = BatchUpdateRequest(entityName: "Author")
        request.predicate = try QueryPredicate(format: "name == 'Ann'")
        request.propertiesToUpdate = ["name": "Ève Ann"]
        let start = Date()
        try stack.context().execute(request)

        let reader = stack.context()
        // searchName on the author's row, authorName on its books' rows.
        try DerivedAttributeTests.checkAgainstRecomputation(reader)
        let author = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author"))
            .first { try $0.value(forKey: "name") as? String == "Ève Ann" })
        #expect(try author.value(forKey: "searchName") as? String == "eve ann")
        // now() is recomputed on the updated row only.
        let after = try savedAt(stack)
        #expect(try #require(after["Ève Ann"]) >= start.addingTimeInterval(-1))
        #expect(after["Émile"] == before["Émile"] && after["Zoë"] == before["Zoë"])
    }

    @Test func batchUpdateWithAnExpressionRecomputesOwnAndRelatedAggregates() throws {
        let stack = try Self.stack()
        let request = BatchUpdateRequest(entityName: "Book")
        request.predicate = try QueryPredicate(format: "price < 6")
        request.propertiesToUpdate = ["price": try QueryExpression(format: "price * 3 + 1")]
        request.resultType = .count
        let result = try stack.context().execute(request) as! BatchResult
        #expect(result.count == 3)
        // doublePrice on the books, totalPrice and topPrice on their authors.
        let reader = stack.context()
        try DerivedAttributeTests.checkAgainstRecomputation(reader)
        let prices = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
            .map { try $0.value(forKey: "doublePrice") as! Double }.sorted()
        #expect(prices == [11, 14, 14, 32])
    }

    @Test func batchUpdateOfADerivedAttributeIsRefused() throws {
        let stack = try Self.stack()
        let request = BatchUpdateRequest(entityName: "Author")
        request.propertiesToUpdate = ["bookCount": Int64(9)]
        #expect {
            try stack.context().execute(request)
        } throws: { error in
            guard case ObjectGraphError.derivedAttribute(let entity, let key) = error else { return false }
            return entity == "Author" && key == "bookCount"
        }
    }

    @Test func batchDeleteRecomputesTheDerivationsOfRelatedRows() throws {
        let stack = try Self.stack()
        // Ann's 5.0 book goes: her count, total and top price change.
        let byPredicate = BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Book"))
        byPredicate.fetchRequest?.predicate = try QueryPredicate(format: "price == 5")
        try stack.context().execute(byPredicate)
        try DerivedAttributeTests.checkAgainstRecomputation(stack.context())
        // Émile goes by ID: his book's authorName is nulled with its foreign key.
        let emile = try #require(try stack.context().fetch(FetchRequest<ManagedObject>(entityName: "Author"))
            .first { try $0.value(forKey: "name") as? String == "Émile" })
        try stack.context().execute(BatchDeleteRequest(objectIDs: [emile.objectID]))
        let reader = stack.context()
        try DerivedAttributeTests.checkAgainstRecomputation(reader)
        let ann = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author"))
            .first { try $0.value(forKey: "name") as? String == "Ann" })
        #expect(try ann.value(forKey: "bookCount") as? Int64 == 1)
        #expect(try ann.value(forKey: "topPrice") as? Double == 2)
    }

    /// A derivation that reads an attribute of its row and one of a related row.
    static let mixedXML = InteropFixtures.modelXML("""
    <entity name="Author" representedClassName="Author">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="rate" optional="YES" attributeType="Double" defaultValueString="1"/>
        <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
    </entity>
    <entity name="Book" representedClassName="Book">
        <attribute name="price" optional="YES" attributeType="Double" defaultValueString="0"/>
        <attribute name="weightedPrice" optional="YES" attributeType="Double" derived="YES" derivationExpression="price * author.rate"/>
        <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
    </entity>
    """)

    @Test func aDerivationTheUpdateCannotComputeRefusesTheWholeUpdate() throws {
        let stack = try TestStack(model: ManagedObjectModel(xmlData: Self.mixedXML, source: "mixed"))
        let context = stack.context()
        let author = try context.insertNewObject(forEntityName: "Author")
        try author.setValue(2.0, forKey: "rate")
        let book = try context.insertNewObject(forEntityName: "Book")
        try book.setValue(3.0, forKey: "price")
        try book.setValue(author, forKey: "author")
        try context.save()

        // The book's own price: the derivation would need the author's row inside the UPDATE.
        let update = BatchUpdateRequest(entityName: "Book")
        update.propertiesToUpdate = ["price": 4.0]
        #expect {
            try stack.context().execute(update)
        } throws: { error in
            guard case ObjectGraphError.derivedAttributeNotRecomputable(let entity, let key, _) = error else { return false }
            return entity == "Book" && key == "weightedPrice"
        }
        func read() throws -> (price: Double?, weighted: Double?) {
            let fresh = try #require(try stack.context().fetch(FetchRequest<ManagedObject>(entityName: "Book")).first)
            return (try fresh.value(forKey: "price") as? Double, try fresh.value(forKey: "weightedPrice") as? Double)
        }
        #expect(try read() == (3.0, 6.0))   // nothing written

        // The author's rate: the books reading it are rewritten after the update.
        let rate = BatchUpdateRequest(entityName: "Author")
        rate.propertiesToUpdate = ["rate": 5.0]
        try stack.context().execute(rate)
        #expect(try read() == (3.0, 15.0))
    }

    @Test func anUpsertThatCannotComputeADerivationIsRefused() throws {
        // weightedPrice reads the row's price and its author's rate; an upsert onto a stored book would need
        // the stored book's author.
        let xml = String(decoding: Self.mixedXML, as: UTF8.self).replacingOccurrences(
            of: #"<entity name="Book" representedClassName="Book">"#,
            with: #"<entity name="Book" representedClassName="Book"><uniquenessConstraints><uniquenessConstraint><constraint value="price"/></uniquenessConstraint></uniquenessConstraints>"#)
        let stack = try TestStack(model: ManagedObjectModel(xmlData: Data(xml.utf8), source: "constrained-mixed"))
        #expect {
            try stack.context().execute(BatchInsertRequest(entityName: "Book", objects: [["price": 1.0]]))
        } throws: { error in
            guard case ObjectGraphError.derivedAttributeNotRecomputable(let entity, let key, _) = error else { return false }
            return entity == "Book" && key == "weightedPrice"
        }
        #expect(try stack.context().count(for: FetchRequest<ManagedObject>(entityName: "Book")) == 0)
    }

    @Test func batchInsertComputesDerivedAttributesOfNewRows() throws {
        let stack = try Self.stack()
        let context = stack.context()
        try context.execute(BatchInsertRequest(entityName: "Book", objects: [["price": 4.0], ["price": 0.25, "doublePrice": 99.0], [:]]))
        try context.execute(BatchInsertRequest(entityName: "Author", objects: [["name": "Ōe"]]))
        var handed = 0
        try context.execute(BatchInsertRequest(entityName: "Author", dictionaryHandler: { row in
            handed += 1
            row["name"] = "Handler \(handed)"
            return handed > 2
        }))
        var made = 0
        try context.execute(BatchInsertRequest(entityName: "Book", managedObjectHandler: { book in
            made += 1
            try? book.setValue(Double(made), forKey: "price")
            return made > 2
        }))
        let reader = stack.context()
        try DerivedAttributeTests.checkAgainstRecomputation(reader)
        let searchNames = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author"))
            .compactMap { try $0.value(forKey: "searchName") as? String }
        #expect(searchNames.contains("oe") && searchNames.contains("handler 2"))
        #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Book")) == 9)
    }

    @Test func batchUpsertKeepsTheStoredRowsRelatedDerivations() throws {
        let xml = String(decoding: DerivedAttributeTests.xml, as: UTF8.self).replacingOccurrences(
            of: #"<entity name="Author" representedClassName="Author">"#,
            with: #"<entity name="Author" representedClassName="Author"><uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>"#)
        let stack = try TestStack(model: ManagedObjectModel(xmlData: Data(xml.utf8), source: "constrained"))
        let context = stack.context()
        let author = try context.insertNewObject(forEntityName: "Author")
        try author.setValue("Ann", forKey: "name")
        for price in [1.0, 2.0] {
            let book = try context.insertNewObject(forEntityName: "Book")
            try book.setValue(price, forKey: "price")
            try book.setValue(author, forKey: "author")
        }
        try context.save()
        // "Ann" again updates the stored row: its books, and the counts they give, stay.
        try context.execute(BatchInsertRequest(entityName: "Author", objects: [["name": "Ann"], ["name": "Bea"]]))
        let reader = stack.context()
        #expect(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Author")) == 2)
        try DerivedAttributeTests.checkAgainstRecomputation(reader)
    }
}
