import Foundation
import OpenCoreData

/// The banks list, sectioned by state and sorted by closing date, newest first: a stand-in for
/// `FetchedResultsController` until it lands (it is built on another branch). Everything the browser
/// and the tour need from the controller goes through this one type — `performFetch()`, `sections`,
/// `object(at:)` — so switching is local to this file: see the report in docs/FEATURES.md.
///
/// Like the controller it reads objects lazily: the fetch has `fetchBatchSize` 20, so only IDs are read
/// up front and objects 20 at a time as rows are shown; section names and sizes come from one
/// dictionary fetch of `state` in the same order, not from the objects.
final class BankSections: @unchecked Sendable {
    // @unchecked Sendable: used on one queue at a time (the browser's), and the context's own queue.

    struct Section: Equatable {
        let name: String
        let rows: Range<Int>
    }

    let context: ManagedObjectContext
    /// Where section names are counted: a context on a coordinator of its own, because the library's
    /// dictionary fetch reads whole rows into its coordinator's row cache, which would hide the batch
    /// faults this list exists to show (a library gap; the controller will not need this).
    let sectionContext: ManagedObjectContext
    /// Typed text narrowing the list: a predicate, or (until predicates land) a case-insensitive
    /// substring of the name, city or state.
    private(set) var filterText = ""
    /// Why the filter could not be used as a predicate, for the status line.
    private(set) var filterNote: String?
    private(set) var sections: [Section] = []
    private var objects: AnyRandomAccessCollection<ManagedObject> = AnyRandomAccessCollection([])
    /// The IDs in order, to report what changed between fetches.
    private(set) var objectIDs: [ManagedObjectID] = []

    init(context: ManagedObjectContext, sectionContext: ManagedObjectContext? = nil) {
        self.context = context
        self.sectionContext = sectionContext ?? context
    }

    var count: Int { objects.count }

    /// The seed's request: FailedBankInfo by state, then `details.closeDate` descending; batches of 20.
    static func makeRequest() -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
        request.sortDescriptors = [QuerySortDescriptor(key: "state", ascending: true),
                                   QuerySortDescriptor(key: "details.closeDate", ascending: false),
                                   QuerySortDescriptor(key: "name", ascending: true)]
        request.fetchBatchSize = 20
        return request
    }

    /// Sets the filter (empty: none) and fetches again.
    func setFilter(_ text: String) throws {
        filterText = text
        try performFetch()
    }

    /// Fetches (again): forgets the context's objects so changes saved elsewhere show.
    func performFetch() throws {
        try context.performAndWait {
            context.reset()
            filterNote = nil
            let trimmed = filterText.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                let results = try context.fetch(Self.makeRequest())
                objects = AnyRandomAccessCollection(results)
                objectIDs = results.objectIDs ?? results.map(\.objectID)
                sections = try sectionContext.performAndWait {
                    sectionContext.reset()
                    return try Self.sectionsFromStateColumn(sectionContext)
                }
                return
            }
            let request = Self.makeRequest()
            var matched: [ManagedObject]
            do {
                request.predicate = try QueryPredicate(format: trimmed)
                matched = Array(try context.fetch(request))
            } catch where PendingPredicates.isPlaceholderRefusal(error) {
                request.predicate = nil
                let needle = trimmed.lowercased()
                matched = try Array(context.fetch(request)).filter { bank in
                    try ["name", "city", "state"].contains { key in
                        ((try bank.value(forKey: key) as? String) ?? "").lowercased().contains(needle)
                    }
                }
                filterNote = "predicates pending: matching name, city or state containing '\(trimmed)'"
            }
            objects = AnyRandomAccessCollection(matched)
            objectIDs = matched.map(\.objectID)
            sections = try Self.sections(ofSortedStates: matched.map { try $0.value(forKey: "state") as? String })
        }
    }

    /// The bank at a flat row index (call on any thread; reads on the context's queue).
    func bank(at row: Int) -> BankRow? {
        guard row >= 0 && row < objects.count else { return nil }
        return context.performAndWait {
            let index = objects.index(objects.startIndex, offsetBy: row)
            return BankRow(objects[index])
        }
    }

    /// The section holding a flat row index.
    func section(containing row: Int) -> Int? {
        sections.firstIndex { $0.rows.contains(row) }
    }

    /// Deletes the bank at a flat row index (its details go too: cascade), saves, and fetches again.
    func deleteBank(at row: Int) throws -> String? {
        guard row >= 0 && row < objects.count else { return nil }
        let name: String? = try context.performAndWait {
            let index = objects.index(objects.startIndex, offsetBy: row)
            let bank = objects[index]
            let name = try bank.value(forKey: "name") as? String
            context.delete(bank)
            try context.save()
            return name
        }
        try performFetch()
        return name
    }

    private static func sectionsFromStateColumn(_ context: ManagedObjectContext) throws -> [Section] {
        let request = FetchRequest<[String: Any]>(dictionariesOf: "FailedBankInfo")
        request.propertiesToFetch = ["state"]
        request.sortDescriptors = [QuerySortDescriptor(key: "state", ascending: true)]
        return sections(ofSortedStates: try context.fetch(request).map { $0["state"] as? String })
    }

    private static func sections(ofSortedStates states: [String?]) -> [Section] {
        var sections: [Section] = []
        var start = 0
        for index in states.indices where index == states.count - 1 || states[index] != states[index + 1] {
            sections.append(Section(name: states[index] ?? "—", rows: start..<(index + 1)))
            start = index + 1
        }
        return sections
    }
}

/// What a row of the list shows, read from a bank and its details.
struct BankRow: Sendable, Equatable {
    var name: String
    var city: String
    var state: String
    var closeDate: Date?

    init(name: String, city: String, state: String, closeDate: Date?) {
        self.name = name
        self.city = city
        self.state = state
        self.closeDate = closeDate
    }

    init(_ bank: ManagedObject) {
        name = (try? bank.value(forKey: "name") as? String) ?? "?"
        city = (try? bank.value(forKey: "city") as? String) ?? ""
        state = (try? bank.value(forKey: "state") as? String) ?? ""
        let details = (try? bank.value(forKey: "details")) as? ManagedObject
        closeDate = (try? details?.value(forKey: "closeDate")) as? Date
    }

    /// `2011-10-21`, in UTC as the list's dates are.
    var closeDateText: String {
        guard let closeDate else { return "—" }
        return DayFormat.string(from: closeDate)
    }
}

/// `yyyy-MM-dd` in UTC.
enum DayFormat {
    static func string(from date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
