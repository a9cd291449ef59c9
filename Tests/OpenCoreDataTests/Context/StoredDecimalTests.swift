import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A Decimal attribute reads to the exact value its row holds, whatever storage class SQLite gave the
/// value: INTEGER exactly, REAL as its shortest round-trip text spells it, TEXT with every digit; anything
/// no Decimal holds reads as NaN, never as a nearby number. Checked on hand-written rows of a real store,
/// through object fetches, dictionary fetches and `ocd fetch --json`.
@Suite struct StoredDecimalTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Item") {
                Attribute("label", .string)
                Attribute("amount", .decimal)
            }
        }
    }

    /// A store with one item per label, whose amounts are then written by hand (`values`, in label order).
    /// With `untyped`, the amount column is first declared again without a type, so text is kept as text.
    private func store(_ values: [StoreValue], untyped: Bool, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Decimals.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
            try coordinator.addPersistentStore(type: .sqlite, at: url)
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            for index in values.indices {
                try context.insertNewObject(forEntityName: "Item").setValue(String(format: "%03d", index), forKey: "label")
            }
            try context.save()
            coordinator.remove(coordinator.persistentStores[0])
        }
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            if untyped {
                try db.execute(sql: "ALTER TABLE ZITEM DROP COLUMN ZAMOUNT")
                try db.execute(sql: "ALTER TABLE ZITEM ADD COLUMN ZAMOUNT")
            }
            for (index, value) in values.enumerated() {
                try db.execute(sql: "UPDATE ZITEM SET ZAMOUNT = ? WHERE ZLABEL = ?", arguments: [value, String(format: "%03d", index)])
            }
        }
        try queue.close()
        return url
    }

    /// Each row's storage class, to check the rows really are what the test means.
    private func storageClasses(_ url: URL) throws -> [String] {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { try String.fetchAll($0, sql: "SELECT typeof(ZAMOUNT) FROM ZITEM ORDER BY ZLABEL") }
    }

    /// The amounts as an object fetch, a dictionary fetch and `ocd fetch --json` read them, in label order
    /// (the text of each Decimal, "NaN" for NaN, "nil" for none).
    private func readings(_ url: URL, directory: TemporaryDirectory) throws -> (objects: [String], dictionaries: [String], json: [String]?) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        func text(_ value: Any?) -> String {
            guard let value else { return "nil" }
            guard let decimal = value as? Decimal else { return "not a Decimal: \(value)" }
            return decimal.isNaN ? "NaN" : "\(decimal)"
        }
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "label")]
        let objects = try context.fetch(request).map { text(try $0.value(forKey: "amount")) }
        let dictionaryRequest = OpenCoreData.FetchRequest<[String: Any]>(entityName: "Item")
        dictionaryRequest.resultType = .dictionary
        dictionaryRequest.propertiesToFetch = ["label", "amount"]
        dictionaryRequest.sortDescriptors = [QuerySortDescriptor(key: "label")]
        let dictionaries = try context.fetch(dictionaryRequest).map { text($0["amount"]) }
        coordinator.remove(coordinator.persistentStores[0])
        guard let binary = OcdBinary.url else { return (objects, dictionaries, nil) }
        let mom = directory.file("Decimals.mom")
        try CompiledModelFixture.momData(try Self.model()).write(to: mom)
        let output = try OcdBinary.run(["fetch", url.path, "--model", mom.path, "--entity", "Item",
                                        "--sort", "label", "--keys", "amount", "--json"], binary: binary)
        #expect(output.status == 0, "\(output.stderr)")
        let json = output.stdout.split(separator: "\n").map { line in
            String(line.dropFirst(#"{"amount":"#.count).dropLast())
        }
        return (objects, dictionaries, json)
    }

    @Test func eachStorageClassReadsToItsExactDecimal() throws {
        let directory = TemporaryDirectory()
        let rows: [(StoreValue, String, String)] = [
            (Int64.max.storeValue, "integer", "9223372036854775807"),
            ((-42 as Int64).storeValue, "integer", "-42"),
            (0.1.storeValue, "real", "0.1"),
            (1e20.storeValue, "real", "100000000000000000000"),
            (1.5e-7.storeValue, "real", "0.00000015"),
            (123456.789.storeValue, "real", "123456.789"),
            ((0.1 + 0.2).storeValue, "real", "0.30000000000000004"),
            // Beyond Decimal's range, and infinite: no Decimal holds them, so NaN (not 0, not a trap).
            (1e200.storeValue, "real", "NaN"),
            (Double.infinity.storeValue, "real", "NaN"),
            // Text that is no number stays text in a DECIMAL column; it is not the 12 its prefix spells.
            ("12abc".storeValue, "text", "NaN"),
            (StoreValue.null, "null", "nil"),
        ]
        let url = try store(rows.map(\.0), untyped: false, in: directory)
        #expect(try storageClasses(url) == rows.map(\.1))
        let read = try readings(url, directory: directory)
        #expect(read.objects == rows.map(\.2))
        #expect(read.dictionaries == rows.map(\.2))
        if let json = read.json {
            #expect(json == rows.map { $0.2 == "NaN" || $0.2 == "nil" ? "null" : $0.2 })
        }
    }

    /// Text keeps every digit SQLite's REAL would lose, up to Decimal's 38; more digits than that, or text
    /// that is no number, read as NaN rather than as a rounded or partial number.
    @Test func textKeepsEveryDigit() throws {
        let directory = TemporaryDirectory()
        let rows: [(String, String)] = [
            ("0.1000000000000000055511151231257827", "0.1000000000000000055511151231257827"),
            ("12345678901234567890.123456789012345678", "12345678901234567890.123456789012345678"),
            ("-99999999999999999999999999999999999999", "-99999999999999999999999999999999999999"),
            (" 1.50 ", "1.5"),
            ("+7e3", "7000"),
            ("1E-5", "0.00001"),
            ("000.000", "0"),
            ("123456789012345678901234567890123456789012", "NaN"),
            ("1.2.3", "NaN"),
            ("", "NaN"),
            ("1e", "NaN"),
            ("0x10", "NaN"),
        ]
        let url = try store(rows.map { $0.0.storeValue }, untyped: true, in: directory)
        #expect(try storageClasses(url) == Array(repeating: "text", count: rows.count))
        let read = try readings(url, directory: directory)
        #expect(read.objects == rows.map(\.1))
        #expect(read.dictionaries == rows.map(\.1))
        if let json = read.json {
            #expect(json == rows.map { $0.1 == "NaN" ? "null" : $0.1 })
        }
    }

    /// Property: any finite double in Decimal's range reads as the decimal its shortest text spells, and any
    /// decimal literal of at most 38 digits reads as exactly that number. The reference shifts the point of
    /// the literal by its exponent by hand.
    @Test func realsAndTextsMatchANaiveReference() {
        var generator = SeededGenerator(seed: 24)
        for _ in 0..<3_000 {
            let magnitude = Double.random(in: -60...60, using: &generator)
            let real = (Bool.random(using: &generator) ? -1 : 1) * Double.random(in: 1..<10, using: &generator) * pow(10, magnitude.rounded())
            #expect("\(StoredDecimal.fromReal(real))" == Self.plainText(of: String(real)), "\(real)")
            let digits = (0..<Int.random(in: 1...38, using: &generator)).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
            let point = Int.random(in: 0...digits.count, using: &generator)
            let exponent = Int.random(in: -40...40, using: &generator)
            let literal = (Bool.random(using: &generator) ? "-" : "") + digits.prefix(point) + "." + digits.dropFirst(point) + "e\(exponent)"
            #expect("\(StoredDecimal.fromText(literal))" == Self.plainText(of: literal), "\(literal)")
        }
    }

    /// The literal written out without an exponent, leading and trailing zeros dropped: how `Decimal`
    /// describes itself.
    static func plainText(of literal: String) -> String {
        var text = Substring(literal)
        let negative = text.hasPrefix("-")
        if negative { text = text.dropFirst() }
        var exponent = 0
        if let marker = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: marker)...].replacingOccurrences(of: "+", with: ""))!
            text = text[..<marker]
        }
        let point = text.firstIndex(of: ".").map { text.distance(from: text.startIndex, to: $0) } ?? text.count
        var digits = Array(text.replacingOccurrences(of: ".", with: ""))
        var integerCount = point + exponent
        while integerCount > digits.count { digits.append("0") }
        while integerCount < 0 { digits.insert("0", at: 0); integerCount += 1 }
        var whole = String(digits[..<integerCount]).drop { $0 == "0" }
        var fraction = String(digits[integerCount...])
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if whole.isEmpty { whole = "0" }
        let body = fraction.isEmpty ? String(whole) : whole + "." + fraction
        return body == "0" ? "0" : (negative ? "-" : "") + body
    }

    /// A decimal saved through a context reads back as itself and is found by a predicate comparing with the
    /// same decimal (`==`, and `<=`/`>=` around it), for random decimals of up to 15 significant digits and
    /// whole ones across Int64's range. Before decimals were bound as the store keeps them, most were missed.
    @Test func savedDecimalsReadBackAndMeetTheirOwnConstant() throws {
        let directory = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(type: .sqlite, at: directory.file("Saved.sqlite"))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        var generator = SeededGenerator(seed: 0xDEC1)
        var amounts: [Decimal] = []
        for index in 0..<200 {
            let digits = Int64.random(in: -999_999_999_999_999...999_999_999_999_999, using: &generator)
            let amount = index % 4 == 0 ? Decimal(Int64.random(in: .min ... .max, using: &generator))
                : Decimal(sign: digits < 0 ? .minus : .plus, exponent: -Int.random(in: 0...20, using: &generator),
                          significand: Decimal(digits.magnitude))
            amounts.append(amount)
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue(String(format: "%03d", index), forKey: "label")
            try item.setValue(amount, forKey: "amount")
        }
        try context.save()
        let reader = ManagedObjectContext(concurrencyType: .confinement)
        reader.persistentStoreCoordinator = coordinator
        for (index, amount) in amounts.enumerated() {
            let label = String(format: "%03d", index)
            for format in ["amount == %@", "amount <= %@ AND amount >= %@"] {
                let request = FetchRequest<ManagedObject>(entityName: "Item")
                request.predicate = try QueryPredicate(format: "label == %@ AND " + format, argumentArray: [label, amount, amount])
                let found = try reader.fetch(request)
                #expect(found.count == 1, "\(amount) by \(format)")
                #expect(try found.first?.value(forKey: "amount") as? Decimal == amount, "\(amount) read back")
            }
        }
    }
}
