import Foundation
import OpenCoreDataImport
import OpenCoreData

/// The banks list of seed 004: a ``FetchedResultsController`` over FailedBankInfo, sectioned by `state`
/// and sorted by closing date, newest first, with `fetchBatchSize` 20 (only IDs and sort keys are read
/// up front; objects 20 at a time as rows are shown).
///
/// The browser works with flat row numbers, so this keeps the controller's sections as ranges of rows
/// and turns a row into an index path. Changes reach the browser as the controller reports them
/// (``onChange``), from this context's own saves and from saves merged into it.
final class BankSections: @unchecked Sendable {
    // @unchecked Sendable: `controller`, `isSavingOwnChange` and `ownChange` are touched only on the
    // context's queue; `snapshot` is guarded by `lock`; `filterText`/`filterNote` by the browser's queue.

    struct Section: Equatable {
        let name: String
        let rows: Range<Int>
    }

    /// One transaction the controller reported, counted for the status line.
    struct Change: Sendable, Equatable {
        var inserted = 0
        var deleted = 0
        var moved = 0
        var updated = 0

        init(_ difference: FetchedResultsDifference) {
            moved = difference.movedObjectIDs.count
            inserted = difference.insertions.count - moved
            deleted = difference.removals.count - moved
            updated = difference.updatedObjectIDs.count
        }

        /// `+1 −0`, with moves and updates only when there are some.
        var summary: String {
            var text = "+\(inserted) −\(deleted)"
            if moved > 0 { text += " ↕\(moved)" }
            if updated > 0 { text += " ~\(updated)" }
            return text
        }
    }

    let context: ManagedObjectContext
    /// Typed text narrowing the list: a predicate in Core Data's syntax, or else words looked for in the
    /// name, city and state (as a `CONTAINS[cd]` predicate).
    private(set) var filterText = ""
    /// How the filter was read, for the status line.
    private(set) var filterNote: String?
    /// Called on the context's queue with each change the controller reports, except those of
    /// ``deleteBank(at:)`` (which returns its own). Set with ``observeChanges(_:)``.
    private var onChange: (@Sendable (Change) -> Void)?

    private var controller: FetchedResultsController<FailedBankInfo>?
    private var isSavingOwnChange = false
    private var ownChange: Change?
    private let lock = NSLock()
    private var snapshot: [Section] = []

    init(context: ManagedObjectContext) {
        self.context = context
    }

    /// Hands every change the controller reports from now on to `observer` (on the context's queue).
    func observeChanges(_ observer: @escaping @Sendable (Change) -> Void) {
        context.performAndWait { onChange = observer }
    }

    /// The sections as row ranges (any thread).
    var sections: [Section] { lock.withLock { snapshot } }

    /// How many banks are listed (any thread).
    var count: Int { lock.withLock { snapshot.last?.rows.upperBound ?? 0 } }

    /// The seed's request: FailedBankInfo by state, then `details.closeDate` descending; batches of 20.
    static func makeRequest() -> FetchRequest<FailedBankInfo> {
        let request = FetchRequest<FailedBankInfo>()
        request.sortDescriptors = [QuerySortDescriptor(key: "state", ascending: true),
                                   QuerySortDescriptor(key: "details.closeDate", ascending: false),
                                   QuerySortDescriptor(key: "name", ascending: true)]
        request.fetchBatchSize = 20
        request.relationshipKeyPathsForPrefetching = ["details"]   // the closing date shown in each row
        return request
    }

    /// The predicate for typed text: the text itself when it parses as a predicate, else a search of
    /// name, city and state. Returns the predicate and how the text was read.
    static func predicate(forFilter text: String) throws -> (QueryPredicate?, note: String?) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return (nil, nil) }
        if let parsed = try? QueryPredicate(format: trimmed) { return (parsed, "predicate: \(parsed.predicateFormat)") }
        let search = try QueryPredicate(format: "name CONTAINS[cd] %@ OR city CONTAINS[cd] %@ OR state CONTAINS[cd] %@",
                                        trimmed, trimmed, trimmed)
        return (search, "name, city or state containing '\(trimmed)'")
    }

    /// Sets the filter (empty: none) and fetches again. A predicate the store refuses (an unknown key)
    /// falls back to the text search, and the status says why.
    func setFilter(_ text: String) throws {
        filterText = text
        let (predicate, note) = try Self.predicate(forFilter: text)
        do {
            try fetch(predicate: predicate)
            filterNote = note
        } catch {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let search = try QueryPredicate(format: "name CONTAINS[cd] %@ OR city CONTAINS[cd] %@ OR state CONTAINS[cd] %@",
                                            trimmed, trimmed, trimmed)
            try fetch(predicate: search)
            filterNote = "\(error) — searching for '\(trimmed)' instead"
        }
    }

    /// Fetches with the current filter: a new controller over the seed's request.
    func performFetch() throws {
        try fetch(predicate: Self.predicate(forFilter: filterText).0)
    }

    private func fetch(predicate: QueryPredicate?) throws {
        try context.performAndWait {
            let request = Self.makeRequest()
            request.predicate = predicate
            let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                          sectionNameKeyPath: "state", cacheName: nil)
            controller.onDifference = { [weak self] difference in self?.controllerDidChange(difference) }
            try controller.performFetch()
            self.controller = controller
            publishSections()
        }
    }

    /// On the context's queue: the controller's report of one transaction.
    private func controllerDidChange(_ difference: FetchedResultsDifference) {
        publishSections()
        let change = Change(difference)
        if isSavingOwnChange {
            ownChange = change
        } else {
            onChange?(change)
        }
    }

    /// On the context's queue: the controller's sections as row ranges.
    private func publishSections() {
        var start = 0
        let ranges = (controller?.sections ?? []).map { info -> Section in
            defer { start += info.numberOfObjects }
            return Section(name: info.name.isEmpty ? "—" : TerminalText.escaped(info.name),
                           rows: start..<(start + info.numberOfObjects))
        }
        lock.withLock { snapshot = ranges }
    }

    /// The index path of a flat row.
    private func indexPath(forRow row: Int) -> IndexPath? {
        let sections = self.sections
        guard let index = sections.firstIndex(where: { $0.rows.contains(row) }) else { return nil }
        return IndexPath(item: row - sections[index].rows.lowerBound, section: index)
    }

    /// The bank at a flat row index (call on any thread; reads on the context's queue).
    func bank(at row: Int) -> BankRow? {
        guard let indexPath = indexPath(forRow: row) else { return nil }
        return context.performAndWait {
            guard let object = try? controller?.object(at: indexPath) else { return nil }
            return BankRow(object)
        }
    }

    /// The section holding a flat row index.
    func section(containing row: Int) -> Int? {
        sections.firstIndex { $0.rows.contains(row) }
    }

    /// Deletes the bank at a flat row index (its details go too: cascade) and saves; the controller
    /// reports the removal. Returns the bank's name and that report.
    func deleteBank(at row: Int) throws -> (name: String, change: Change?)? {
        guard let indexPath = indexPath(forRow: row) else { return nil }
        return try context.performAndWait {
            guard let controller else { return nil }
            let bank = try controller.object(at: indexPath)
            let name = bank.name ?? "?"
            context.delete(bank)
            isSavingOwnChange = true
            ownChange = nil
            defer { isSavingOwnChange = false }
            do {
                try context.save()
            } catch {
                context.rollback()
                throw error
            }
            context.processPendingChanges()
            return (name, ownChange)
        }
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

    init(_ bank: FailedBankInfo) {
        // Stored text goes to the terminal: its control characters are shown escaped, never obeyed.
        name = TerminalText.escaped(bank.name ?? "?")
        city = TerminalText.escaped(bank.city ?? "")
        state = TerminalText.escaped(bank.state ?? "")
        closeDate = bank.details?.closeDate
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
