import Foundation
import GRDB

// The peer side of the results-controller scenarios: a list of records kept current by GRDB's
// `ValueObservation`, as GRDB's documentation recommends for a screen that shows a database list (records
// as structs, the observation refetching the ordered request after each write that touches its table),
// against our FetchedResultsController's change delivery.

/// What the observed list holds after each change: the records in order, and its section sizes when the
/// list is split by category (one section otherwise).
struct PeerList: Sendable {
    var items: [PeerItem]
    var sectionSizes: [Int]

    /// The same checksum as the controller's side (ResultsControllerScenarios.checksum).
    var checksum: Int { ResultsControllerScenarios.checksum(rows: items.count, sections: sectionSizes.count) }
}

/// A list of every item sorted by createdAt (or by category, then createdAt, in sections), kept current by
/// a `ValueObservation` on a pool; the latest value is read by the scenario's thread.
final class PeerLiveList: Sendable {
    private let latest = Shared<PeerList?>(nil)
    private let delivered = DispatchSemaphore(value: 0)
    private let cancellable = Shared<AnyDatabaseCancellable?>(nil)
    private let failure = Shared<(any Error)?>(nil)

    /// Starts observing; the first value comes asynchronously (``waitForCount(_:what:)``).
    init(pool: DatabasePool, sections: Bool) {
        let observation = ValueObservation.tracking { db -> PeerList in
            let request = sections
                ? PeerItem.order(PeerItem.Columns.category, PeerItem.Columns.createdAt)
                : PeerItem.order(PeerItem.Columns.createdAt)
            let items = try request.fetchAll(db)
            guard sections else { return PeerList(items: items, sectionSizes: [items.count]) }
            var sizes: [Int] = []
            var current: Int64?
            for item in items {
                if item.category != current { sizes.append(0); current = item.category }
                sizes[sizes.count - 1] += 1
            }
            return PeerList(items: items, sectionSizes: sizes)
        }
        let queue = DispatchQueue(label: "ocd-bench.peer-observation")
        cancellable.value = observation.start(
            in: pool, scheduling: .async(onQueue: queue),
            onError: { [failure, delivered] error in
                failure.value = error
                delivered.signal()
            },
            onChange: { [latest, delivered] list in
                latest.value = list
                delivered.signal()
            })
    }

    deinit { cancellable.value?.cancel() }

    /// Waits until the list holds `count` items; returns it.
    func waitForCount(_ count: Int, what: String) throws -> PeerList {
        while true {
            if let error = failure.value { throw error }
            if let list = latest.value, list.items.count == count { return list }
            if delivered.wait(timeout: .now() + 600) == .timedOut { throw LatchTimeout(what: what, seconds: 600) }
        }
    }
}

extension PeerBaselines {
    /// The controller-fetch twin: start observing the list and wait for its first value.
    static func observeOnce(_ pool: DatabasePool, sections: Bool, rows: Int) throws -> Int {
        let list = PeerLiveList(pool: pool, sections: sections)
        return try list.waitForCount(rows, what: "the peer observation's first value").checksum
    }

    /// The change-delivery twin: `saves` times, insert `count` items in one write and wait until the observed
    /// list holds them; `deliveryMs` gets the time from before each write to the list's new value.
    static func insertAndObserve(_ pool: DatabasePool, list: PeerLiveList, start rows: Int, saves: Int, count: Int,
                                 entity: Int64, deliveryMs: (Double) -> Void) throws -> Int {
        var expected = rows
        for _ in 0..<saves {
            let start = monotonicSeconds()
            expected += try insert(pool, count: count, entity: entity, name: Seed.name)
            _ = try list.waitForCount(expected, what: "the peer observation's value after a write")
            deliveryMs((monotonicSeconds() - start) * 1000)
        }
        return try list.waitForCount(expected, what: "the peer observation's last value").items.count
    }
}
