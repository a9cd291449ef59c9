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
        request.predicate = try QueryPredicate(format: "done == NO")
        let result = try context.performAndWait {
            guard let result = try context.execute(request) as? BatchResult else {
                throw OCDError("the batch update returned no result")
            }
            return result
        }
        let seconds = Date().timeIntervalSince(started)
        return (Measurement(updated: result.count, seconds: seconds,
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
            request.predicate = try QueryPredicate(format: "done == NO")
            let unread = try context.fetch(request)
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

    /// How many items are unread: a count fetch with the predicate (one `SELECT COUNT`).
    static func unreadCount(_ context: ManagedObjectContext) throws -> Int {
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = try QueryPredicate(format: "done == NO")
        return try context.performAndWait { try context.count(for: request) }
    }
}
