import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// Values of every kind through the key-value calls, and odd bytes in the store: each value is either
    /// refused with an `ObjectGraphError` or comes back from the store exactly as it was accepted.
    @Suite struct HostileValueTests {
        /// The values thrown at every attribute of `Item`.
        static var values: [(String, Any?)] { [
            ("nil", nil), ("NSNull", NSNull()), ("Int 0", 0), ("Int 1", 1), ("Int -1", -1), ("Int.max", Int.max),
            ("Int.min", Int.min), ("Int16.max", Int16.max), ("Int32.min", Int32.min), ("UInt64.max", UInt64.max),
            ("Double 1.5", 1.5), ("Double.nan", Double.nan), ("Double.infinity", Double.infinity),
            ("-0.0", -0.0), ("Float.nan", Float.nan), ("Float 1e30", Float(1e30)), ("Decimal 1.1", Decimal(string: "1.1")!),
            ("Decimal.nan", Decimal.nan), ("Bool", true), ("NSNumber 2^53+1", NSNumber(value: Int64(9_007_199_254_740_993))),
            ("NSNumber true", NSNumber(value: true)), ("String", "text"), ("empty String", ""), ("NUL String", "a\u{0}b\u{0}"),
            ("emoji", "👩‍👩‍👧 ǅ"), ("Data", Data([0, 1, 0, 255])), ("empty Data", Data()), ("Date", Date(timeIntervalSinceReferenceDate: 1.25)),
            ("Date.distantPast", Date.distantPast), ("Date nan", Date(timeIntervalSinceReferenceDate: .nan)),
            ("UUID", UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), ("URL", URL(string: "https://example.com/a?b")!),
            ("array", [1, 2]), ("dictionary", ["a": 1]), ("bytes", [UInt8](repeating: 7, count: 3)), ("Substring", "abc".dropFirst()),
        ] }

        /// A description safe for every value (Foundation's `Date.description` traps on a NaN interval).
        static func describe(_ value: Any?) -> String {
            switch value {
            case let date as Date: return "Date(\(date.timeIntervalSinceReferenceDate))"
            case let value?: return "\(value)"
            case nil: return "nil"
            }
        }

        /// Sets each value on each attribute, saves, and reads it back through a new coordinator.
        @Test func everyValueOnEveryAttributeIsRefusedOrKept() throws {
            let stack = try TestStack(model: TestModels.todo())
            let attributes = ["name", "createdAt", "done", "priority", "count", "big", "score", "ratio", "price", "blob", "uuid", "link"]
            var accepted: [(key: String, label: String, id: ManagedObjectID, value: String)] = []
            var refused = 0, tried = 0
            let context = stack.context()
            for key in attributes {
                for (label, value) in Self.values {
                    // Crashes the process today; tested in a child process below.
                    if key == "price" && ["Double.nan", "Double.infinity", "Float.nan", "Float 1e30"].contains(label) { continue }
                    tried += 1
                    let item = try context.insertNewObject(forEntityName: "Item")
                    if key != "name" { try item.setValue("n", forKey: "name") }
                    do {
                        try item.setValue(value, forKey: key)
                    } catch is ObjectGraphError {
                        refused += 1
                        context.delete(item)
                        continue
                    }
                    do {
                        try context.save()
                    } catch is ObjectGraphError {
                        refused += 1 // validation (range, length, required): refused at save
                        context.rollback()
                        continue
                    }
                    accepted.append((key, label, item.objectID, Self.describe(try item.value(forKey: key))))
                }
            }
            let reader = PersistentStoreCoordinator(managedObjectModel: stack.model)
            try reader.addPersistentStore(type: .sqlite, at: stack.url)
            let fresh = ManagedObjectContext(concurrencyType: .confinement)
            fresh.persistentStoreCoordinator = reader
            var changed: [String] = []
            for entry in accepted {
                let object = try fresh.existingObject(with: entry.id)
                let stored = Self.describe(try object.value(forKey: entry.key))
                if stored != entry.value { changed.append("\(entry.key) ← \(entry.label): \(entry.value) became \(stored)") }
            }
            // NUL strings, NaN and decimals SQLite cannot keep exactly are refused now; the one change left
            // is -0.0 → 0.0 (SQLite's REAL has no negative zero), which compares equal.
            let known = ["score ← -0.0", "ratio ← -0.0"]
            let unexplained = changed.filter { line in !known.contains { line.hasPrefix($0) } }
            #expect(unexplained.isEmpty, "values changed by the round trip: \(unexplained)")
            print("HostileValueTests: \(tried) attribute/value pairs, \(refused) refused, \(accepted.count) kept, \(changed.count) changed")
        }

        /// Non-finite doubles on a Decimal attribute: refused, not a trap. Run in the worker process, since
        /// a trap would end the test run.
        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage),
              arguments: ["nan", "inf", "-inf", "1e308"])
        func nonFiniteDoubleOnADecimalIsRefusedNotATrap(_ literal: String) throws {
            let result = try WorkerProcess.run(["set-double", AttributeType.decimal.rawValue, literal])
            let check = {
                #expect(result.status == 0, "the process died (status \(result.status)) setting \(literal) on a Decimal")
                #expect(result.output.hasPrefix("refused") || result.output.hasPrefix("accepted"))
            }
            check()
        }

        /// Decimals keep every digit (ValueConversion.decimalStoreValue promises so).
        @Test func decimalsKeepEveryDigit() throws {
            let stack = try TestStack(model: TestModels.todo())
            let context = stack.context()
            // Values SQLite keeps exactly go in; longer ones are refused, never shortened.
            let tooLong = ["123456789012345678901234567890", "1234567890.123456789012345678", "18446744073709551615"]
            for value in tooLong {
                let item = try context.insertNewObject(forEntityName: "Item")
                #expect(throws: ObjectGraphError.self) {
                    try item.setValue(Decimal(string: value, locale: Locale(identifier: "en_US_POSIX"))!, forKey: "price")
                }
                context.delete(item)
            }
            let values = ["123456789012345", "1234567.12345678", "0.1", "-42", "9223372036854775807", "12.34"]
            var items: [ManagedObject] = []
            for value in values {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue("d", forKey: "name")
                try item.setValue(Decimal(string: value, locale: Locale(identifier: "en_US_POSIX"))!, forKey: "price")
                items.append(item)
            }
            try context.save()
            let ids = items.map(\.objectID)
            let other = stack.context()
            var lost: [String] = []
            for (value, id) in zip(values, ids) {
                let stored = try other.existingObject(with: id).value(forKey: "price") as? Decimal
                if stored != Decimal(string: value, locale: Locale(identifier: "en_US_POSIX")) { lost.append("\(value) → \(String(describing: stored))") }
            }
            #expect(lost.isEmpty, "digits lost: \(lost)")
            // An unsigned integer has no case of its own in ValueConversion.storeValue (.decimal): it goes
            // through NSNumber.decimalValue, which passes through a Double on Linux.
            let unsigned = try context.insertNewObject(forEntityName: "Item")
            try unsigned.setValue("u", forKey: "name")
            #expect(throws: ObjectGraphError.self) { try unsigned.setValue(UInt64.max, forKey: "price") }
            try unsigned.setValue(UInt64(Int64.max), forKey: "price")
            #expect(try unsigned.value(forKey: "price") as? Decimal == Decimal(string: "9223372036854775807"))
        }

        /// Strings with NUL characters are refused with a typed error (SQLite's C strings would end at the
        /// NUL); nothing shortened reaches the store.
        @Test func stringsWithNULAreRefusedNotShortened() throws {
            let stack = try TestStack(model: TestModels.todo())
            let context = stack.context()
            let text = "before\u{0}after\u{0}"
            let item = try context.insertNewObject(forEntityName: "Item")
            #expect(throws: ObjectGraphError.self) { try item.setValue(text, forKey: "name") }
            let batch = BatchInsertRequest(entityName: "Item", objects: [["name": text]])
            #expect(throws: ObjectGraphError.self) { try context.execute(batch) }
            #expect(try FetchPlanCount.count(stack, "Item") == 0)
        }

        /// Values another program wrote into our columns: invalid UTF-8, the wrong storage class, absurd
        /// numbers. Reading them must not crash; the object still loads.
        @Test func foreignBytesInColumnsNeverCrashAReader() throws {
            let stack = try TestStack(model: TestModels.todo())
            let context = stack.context()
            let list = try context.insertNewObject(forEntityName: "TodoList")
            try list.setValue("L", forKey: "title")
            for index in 0..<12 {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue("i\(index)", forKey: "name")
                try item.setValue(list, forKey: "list")
            }
            try context.save()
            let writes = [
                "ZNAME = CAST(x'41ff42c0' AS TEXT)", "ZNAME = x'00ff'", "ZPRIORITY = 'nine'", "ZPRIORITY = 1e300",
                "ZCOUNT = 9223372036854775807", "ZCREATEDAT = 'yesterday'", "ZDONE = 'yes'", "ZUUID = x'0102'",
                "ZPRICE = x'ff'", "ZLINK = 'not a url %%'", "ZLIST = 999999", "Z_OPT = NULL",
            ]
            let queue = try DatabaseQueue(path: stack.url.path)
            try queue.write { db in
                for (index, write) in writes.enumerated() {
                    try db.execute(sql: "UPDATE ZITEM SET \(write) WHERE ZNAME = ?", arguments: ["i\(index)"])
                }
            }
            let coordinator = PersistentStoreCoordinator(managedObjectModel: stack.model)
            try coordinator.addPersistentStore(type: .sqlite, at: stack.url)
            let reader = ManagedObjectContext(concurrencyType: .confinement)
            reader.persistentStoreCoordinator = coordinator
            let items = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            #expect(items.count == 12)
            for item in items {
                for key in item.entity.propertiesByName.keys.sorted() {
                    do { _ = try item.value(forKey: key) } catch is ObjectGraphError {} catch is StoreError {}
                }
            }
        }

        /// A large blob is written and read back whole; the store stays intact.
        @Test func largeBlobRoundTrips() throws {
            let stack = try TestStack(model: TestModels.todo())
            let context = stack.context()
            var blob = Data(count: 16 << 20)
            blob.withUnsafeMutableBytes { buffer in
                for index in stride(from: 0, to: buffer.count, by: 8) { buffer.storeBytes(of: UInt64(index) &* 0x9E37_79B9, toByteOffset: index, as: UInt64.self) }
            }
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("big", forKey: "name")
            try item.setValue(blob, forKey: "blob")
            try context.save()
            let other = stack.context()
            let fetched = try other.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0]
            #expect(try fetched.value(forKey: "blob") as? Data == blob)
            #expect(try StoreInvariants.violations(at: stack.url, model: stack.model).isEmpty)
        }
    }
}
