import Foundation
import OpenCoreData

/// Seed 003: marking every unread item read, two ways: one batch update straight in the store, and the
/// object-graph way (load each item, set `done`, save), with the time and memory each took.
enum MarkAllRead {
    struct Measurement: Sendable {
        var updated: Int
        var seconds: Double
        var residentGrowthMB: Double
    }

    /// The batch way: `done == NO` → `done = YES`, one SQL UPDATE, nothing loaded.
    static func batch(_ store: OpenedStore) throws -> (Measurement, unreadBefore: Int) {
        let context = store.newContext()
        let unread = try unreadCount(context)
        let memory = ResidentMemory.megabytes()
        let started = Date()
        let request = BatchUpdateRequest(entityName: "Item")
        request.propertiesToUpdate = ["done": true]
        request.resultType = .count
        let (result, predicateApplied) = try context.performAndWait {
            try PendingPredicates.batchUpdate(request, predicate: QueryPredicate(format: "done == NO"), in: context)
        }
        let seconds = Date().timeIntervalSince(started)
        // Without the predicate every row was written; the rows that changed are the unread ones.
        let updated = predicateApplied ? result.count : unread
        return (Measurement(updated: updated, seconds: seconds,
                            residentGrowthMB: ResidentMemory.megabytes() - memory), unread)
    }

    /// The per-object way: fetch the unread items (in batches of 1,000), set each one's `done`, save.
    static func perObject(_ store: OpenedStore) throws -> Measurement {
        let context = store.newContext()
        let memory = ResidentMemory.megabytes()
        let started = Date()
        let updated = try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.fetchBatchSize = 1_000
            let unread = try PendingPredicates.fetch(request, predicate: QueryPredicate(format: "done == NO"), in: context) { item in
                (try item.value(forKey: "done") as? Bool) != true
            }
            for item in unread { try item.setValue(true, forKey: "done") }
            try context.save()
            return unread.count
        }
        let seconds = Date().timeIntervalSince(started)
        let growth = ResidentMemory.megabytes() - memory
        context.performAndWait { context.reset() }
        return Measurement(updated: updated, seconds: seconds, residentGrowthMB: growth)
    }

    /// Marks every item unread again (a batch update), so both ways can be timed on the same rows.
    static func markAllUnread(_ store: OpenedStore) throws {
        let context = store.newContext()
        let request = BatchUpdateRequest(entityName: "Item")
        request.propertiesToUpdate = ["done": false]
        _ = try context.performAndWait { try context.execute(request) }
    }

    /// How many items are unread: a count fetch with the predicate, or a tally of the `done` column.
    static func unreadCount(_ context: ManagedObjectContext) throws -> Int {
        try context.performAndWait {
            let request = FetchRequest<[String: Any]>(dictionariesOf: "Item")
            request.propertiesToFetch = ["done"]
            return try PendingPredicates.fetch(request, predicate: QueryPredicate(format: "done == NO"), in: context) { row in
                (row["done"] as? Bool) != true && (row["done"] as? Int) != 1
            }.count
        }
    }
}
