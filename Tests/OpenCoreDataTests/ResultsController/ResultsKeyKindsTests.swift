import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// The controller's sort keys of every attribute kind, held in typed, repeated and boxed key columns: nil
/// section keys, sections of more rows than a chunk (one repeated value per chunk), and a store holding
/// integers and reals in one column. Random changes must report exactly what a fresh fetch shows.
@Suite struct ResultsKeyKindsTests {
    /// Optional attributes: nil for a negative pick.
    private static let optional: Set = ["count", "score", "createdAt"]

    /// A few values per kind (so sections hold more rows than a chunk). Picks 0..<3 give 0, 2, 4; picks 3
    /// and 4 give 1, between two of them, and 5, after all (new sections next to runs of one value).
    private static func value(_ key: String, _ pick: Int) -> Any? {
        if pick < 0 && optional.contains(key) { return nil }
        let v = [0, 2, 4, 1, 5][max(0, pick) % 5]
        switch key {
        case "priority": return Int16(v)
        case "count": return Int32(v - 2)
        case "big": return Int64(v) * 10_000_000_000
        case "score": return Double(v) + 0.25
        case "ratio": return Float(v) / 2
        case "createdAt": return Date(timeIntervalSinceReferenceDate: Double(v) * 86_400)
        case "done": return v >= 2
        default: return "n\(v)"
        }
    }

    private func insert(_ context: ManagedObjectContext, key: String, pick: Int, serial: Int) throws -> ManagedObject {
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue(String(format: "item %05d", serial), forKey: "name")
        try item.setValue(Self.value(key, pick), forKey: key)
        return item
    }

    private func controller(_ context: ManagedObjectContext, key: String, sections: Bool) throws -> FetchedResultsController<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: key),
                                   QuerySortDescriptor(key: key == "name" ? "big" : "name", ascending: false)]
        request.fetchBatchSize = 20
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: sections ? key : nil, cacheName: nil)
        try controller.performFetch()
        return controller
    }

    @Test(arguments: ["priority", "count", "big", "score", "ratio", "createdAt", "done", "name"], [true, false])
    func changesMatchAFreshFetch(key: String, sections: Bool) throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        var rng = SeededGenerator(seed: UInt64(key.utf8.count) &* 31 &+ (sections ? 1 : 0))
        var items: [ManagedObject] = []
        for serial in 0..<1_500 { items.append(try insert(context, key: key, pick: Int.random(in: -1..<3, using: &rng), serial: serial)) }
        try context.save()
        if key == "createdAt" {
            // Another program stored whole seconds as integers in the date column: integers and reals mixed.
            try stack.coordinator.primaryStore().write { db in
                try db.execute(sql: "UPDATE ZITEM SET ZCREATEDAT = 86400 WHERE Z_PK % 7 = 0 AND ZCREATEDAT IS NOT NULL")
            }
        }
        let reader = stack.context()
        let frc = try controller(reader, key: key, sections: sections)
        let recorder = ContractRecorder(frc)
        func names(_ controller: FetchedResultsController<ManagedObject>) -> [String] { controller.sections?.map(\.name) ?? [] }
        var serial = 1_500
        for round in 0..<40 {
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let dice = Int.random(in: 0..<10, using: &rng)
                if dice < 3 {
                    items.append(try insert(reader, key: key, pick: Int.random(in: -1..<5, using: &rng), serial: serial))
                    serial += 1
                } else if let index = items.indices.randomElement(using: &rng) {
                    let item = try reader.existingObject(with: items[index].objectID)
                    if dice < 5 {
                        reader.delete(item)
                        items.remove(at: index)
                    } else {
                        try item.setValue(Self.value(key, Int.random(in: -1..<5, using: &rng)), forKey: key)
                    }
                }
            }
            if round % 8 == 7 { try reader.save() } else { reader.processPendingChanges() }
            let fresh = try controller(reader, key: key, sections: sections)
            #expect(recorder.problems.isEmpty, "\(key) round \(round): \(recorder.problems)")
            #expect(recorder.state == fresh.sectionObjectIDs, "\(key) round \(round)")
            #expect(frc.sectionObjectIDs == fresh.sectionObjectIDs, "\(key) round \(round)")
            #expect(names(frc) == names(fresh), "\(key) round \(round)")
            if !recorder.problems.isEmpty || frc.sectionObjectIDs != fresh.sectionObjectIDs { break }
        }
        #expect(frc.statistics.recoveryFetches == 0)
        if sections {
            // Three values at first, the two between them since, and "" for nil where the attribute is optional.
            let optional = Self.optional.contains(key)
            #expect(names(frc).count == (key == "done" ? 2 : (optional ? 6 : 5)), "\(key): \(names(frc))")
            #expect(names(frc).contains("") == optional)
        }
    }

    /// Text that Swift's `String ==` calls equal but the store does not (canonically equivalent spellings):
    /// the controller keeps the store's byte order and sections, through random changes, as a fresh fetch.
    @Test(arguments: [true, false])
    func canonicallyEquivalentTextKeepsTheStoresOrder(sections: Bool) throws {
        let spellings = ["K", "\u{212A}", "L", "\u{E9}", "e\u{301}", "f", "\u{C5}", "\u{212B}", "A\u{30A}"]
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        var rng = SeededGenerator(seed: sections ? 7 : 8)
        var serial: Int64 = 0
        func insert() throws -> ManagedObject {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue(spellings.randomElement(using: &rng)!, forKey: "name")
            try item.setValue(serial, forKey: "big")
            serial += 1
            return item
        }
        var items = try (0..<60).map { _ in try insert() }
        try context.save()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name"), QuerySortDescriptor(key: "big")]
        let frc = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                               sectionNameKeyPath: sections ? "name" : nil, cacheName: nil)
        try frc.performFetch()
        func scalars(_ text: String) -> [UInt32] { text.unicodeScalars.map(\.value) }
        for round in 0..<12 {
            for _ in 0..<4 {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: items.append(try insert())
                case 1: try items.randomElement(using: &rng)!.setValue(spellings.randomElement(using: &rng)!, forKey: "name")
                default: if let index = items.indices.randomElement(using: &rng) { context.delete(items.remove(at: index)) }
                }
            }
            try context.save()
            let fresh = try context.fetch(request)
            #expect(frc.fetchedObjects.map { Array($0).map(\.objectID) } == fresh.map(\.objectID), "round \(round)")
            if sections {
                var runs: [[UInt32]] = []
                for item in fresh {
                    let name = scalars(try #require(item.value(forKey: "name") as? String))
                    if runs.last != name { runs.append(name) }
                }
                #expect((frc.sections ?? []).map { scalars($0.name) } == runs, "round \(round)")
            }
        }
    }
}
