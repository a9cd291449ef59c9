import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Saves whose updates change different sets of columns (so the store switches statements row by row),
/// checked against a naive reference: the values each object was given, its version, and the changed
/// keys the did-save report names.
@Suite struct StoreChangeSetTests {
    static let keys = ["name", "done", "big", "score", "createdAt"]

    static func randomValue(for key: String, using generator: inout SeededGenerator) -> Any {
        switch key {
        case "name": return ["", "a", "Item \(Int.random(in: 0..<1000, using: &generator))", "ünïcødé"].randomElement(using: &generator)!
        case "done": return Bool.random(using: &generator)
        case "big": return Int64.random(in: -1_000_000...1_000_000, using: &generator)
        case "score": return Double(Int.random(in: -100...100, using: &generator)) / 4
        // Not a whole number: the TIMESTAMP column (numeric affinity) would store a whole one as an integer.
        default: return Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...1_000_000, using: &generator)) + 0.25)
        }
    }

    /// The row value the store should hold for a value set through `setValue`.
    static func stored(_ value: Any) -> StoreValue {
        switch value {
        case let v as String: return v.storeValue
        case let v as Bool: return (v ? 1 : 0).storeValue
        case let v as Int64: return v.storeValue
        case let v as Double: return v.storeValue
        case let v as Date: return v.timeIntervalSinceReferenceDate.storeValue
        default: return .null
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func mixedUpdateShapesMatchANaiveReference(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        var objects: [ManagedObject] = []
        var expected: [Int64: [String: StoreValue]] = [:]
        var versions: [Int64: Int64] = [:]
        for index in 0..<40 {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("item \(index)", forKey: "name")
            objects.append(item)
        }
        try context.save()
        for item in objects {
            expected[item.objectID.primaryKey] = ["name": Self.stored(try item.value(forKey: "name")!), "done": 0.storeValue]
            versions[item.objectID.primaryKey] = 1
        }
        let saves = Collector<ContextDidSave>()
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification,
                                                           object: context, queue: nil) { note in
            if let changes = note.userInfo?[ManagedObjectContext.didSaveKey] as? ContextDidSave { saves.append(changes) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        for round in 0..<6 {
            var changedKeys: [ManagedObjectID: Set<String>] = [:]
            for item in objects where Bool.random(using: &generator) {
                // A random, non-empty subset of keys: neighbouring rows rarely share a shape.
                let chosen = Self.keys.filter { _ in Bool.random(using: &generator) }
                for key in chosen.isEmpty ? ["done"] : chosen {
                    let value = Self.randomValue(for: key, using: &generator)
                    try item.setValue(value, forKey: key)
                    expected[item.objectID.primaryKey, default: [:]][key] = Self.stored(value)
                    changedKeys[item.objectID, default: []].insert(key)
                }
            }
            try context.save()
            for id in changedKeys.keys { versions[id.primaryKey]! += 1 }
            let report = try #require(saves.values.last)
            #expect(report.updatedObjectIDs == Set(changedKeys.keys), "round \(round)")
            #expect(report.changedKeys == changedKeys, "round \(round)")
        }
        #expect(saves.values.count == 6)

        let queue = try DatabaseQueue(path: stack.url.path)
        let rows = try queue.read { try Row.fetchAll($0, sql: "SELECT Z_PK, Z_OPT, ZNAME, ZDONE, ZBIG, ZSCORE, ZCREATEDAT FROM ZITEM") }
        #expect(rows.count == objects.count)
        for row in rows {
            let key: Int64 = row["Z_PK"]
            let values = try #require(expected[key])
            #expect(row["Z_OPT"] as Int64 == versions[key], "Z_OPT of \(key)")
            for (name, column) in zip(Self.keys, ["ZNAME", "ZDONE", "ZBIG", "ZSCORE", "ZCREATEDAT"]) {
                #expect(row[column] as StoreValue == values[name] ?? .null, "\(name) of \(key)")
            }
        }
    }
}
