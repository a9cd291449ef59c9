import Foundation
import OpenCoreData

/// The timed "ours" work that a scenario on an SQLite file and its twin on a PostgreSQL server share: the same
/// context calls on either store, so the two benches measure the same work and cannot drift apart.
enum ContextWork {
    /// Inserts items 1…`count` with the seed's values in `context` and saves once.
    ///
    /// - Returns: `count`.
    /// - Throws: the context's error when an insert, a value or the save fails.
    static func insertAndSave(_ count: Int, in context: ManagedObjectContext) throws -> Int {
        try context.performAndWait {
            for i in 1...count {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue(Seed.name(i), forKey: "name")
                try item.setValue(Date(timeIntervalSinceReferenceDate: Seed.createdAt(i)), forKey: "createdAt")
                try item.setValue(Seed.done(i), forKey: "done")
                try item.setValue(Seed.group(i), forKey: "group")
                try item.setValue(Seed.category(i), forKey: "category")
            }
            try context.save()
            return count
        }
    }

    /// Fetches every item (no batch size) and reads `name` and `createdAt` of each.
    ///
    /// - Returns: a checksum of what was read.
    /// - Throws: the context's error when the fetch or a read fails.
    static func fetchAllReadingNameAndDate(in context: ManagedObjectContext) throws -> Int {
        try context.performAndWait {
            let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            var checksum = items.count
            for item in items {
                checksum &+= (try item.value(forKey: "name") as? String)?.utf8.count ?? 0
                let date = try item.value(forKey: "createdAt") as? Date
                checksum &+= Int(date?.timeIntervalSinceReferenceDate ?? 0) & 7
            }
            return checksum
        }
    }

    /// Reads `name` of every object in the batches of 20 numbered `batchIndexes` of a batched result, so
    /// each batch's first touch loads it.
    ///
    /// - Returns: a checksum of what was read.
    /// - Throws: the context's error when a batch cannot be loaded.
    static func readNames(ofBatches batchIndexes: [Int], of items: FetchResults<ManagedObject>,
                          in context: ManagedObjectContext) throws -> Int {
        try context.performAndWait {
            var checksum = 0
            for batch in batchIndexes {
                let range = (batch * 20)..<min(batch * 20 + 20, items.count)
                for index in range {
                    checksum &+= (try items[index].value(forKey: "name") as? String)?.utf8.count ?? 0
                }
                checksum &+= range.count
            }
            return checksum
        }
    }
}
