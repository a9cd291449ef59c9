import Foundation
import OpenCoreData

/// Seed 000's data: many to-do items (and seed 001's yoga and meditation sessions, one per four items),
/// inserted with batch inserts in chunks so a progress bar can follow.
enum TodoPopulation {
    static let chunkSize = 5_000

    /// Inserts `count` items and `count / 4` sessions (at least one), reporting inserted items to `progress`.
    static func populate(_ store: OpenedStore, count: Int, progress: ProgressBar) throws -> (items: Int, sessions: Int) {
        let context = store.newContext()
        let start = Date(timeIntervalSinceReferenceDate: 700_000_000)
        var inserted = 0
        while inserted < count {
            let size = min(chunkSize, count - inserted)
            let first = inserted
            let objects: [[String: Any]] = (0..<size).map { offset in
                let number = first + offset
                return ["name": "To-do \(number + 1)",
                        "createdAt": start.addingTimeInterval(Double(number)),
                        "done": false,
                        "priority": Int16(number % 3)]
            }
            try context.performAndWait {
                _ = try context.execute(BatchInsertRequest(entityName: "Item", objects: objects))
            }
            inserted += size
            progress.update(inserted)
        }
        progress.finish()
        let sessionCount = max(1, count / 4)
        var sessions: [[String: Any]] = []
        sessions.reserveCapacity(sessionCount)
        for number in 0..<sessionCount {
            // Deterministic durations (5 to 90 minutes) so runs are comparable.
            let minutes = 5 + (number * 37) % 86
            sessions.append(["kind": number % 3 == 0 ? "meditation" : "yoga",
                             "duration": Double(minutes * 60),
                             "startedAt": start.addingTimeInterval(Double(number) * 3_600)])
        }
        try context.performAndWait {
            _ = try context.execute(BatchInsertRequest(entityName: "Session", objects: sessions))
        }
        return (count, sessionCount)
    }
}
