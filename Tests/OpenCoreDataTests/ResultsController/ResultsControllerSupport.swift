import Foundation
@testable import OpenCoreData

/// Helpers for the results-controller tests: a bank store and a delegate that applies reports.
enum BankFixture {
    static let states = ["CA", "FL", "GA", "IL", "NY", "TX"]

    /// Inserts `count` banks (states cycling, close dates spread) and saves.
    @discardableResult
    static func seed(_ context: ManagedObjectContext, count: Int, states: [String] = states) throws -> [ManagedObject] {
        var banks: [ManagedObject] = []
        for index in 0..<count {
            banks.append(try insertBank(context, name: "Bank \(index)", state: states[index % states.count],
                                        closeDate: Date(timeIntervalSinceReferenceDate: Double(index * 1000))))
        }
        try context.save()
        return banks
    }

    @discardableResult
    static func insertBank(_ context: ManagedObjectContext, name: String, state: String?, closeDate: Date?) throws -> ManagedObject {
        let bank = try context.insertNewObject(forEntityName: "FailedBankInfo")
        try bank.setValue(name, forKey: "name")
        try bank.setValue(state, forKey: "state")
        try bank.setValue("City", forKey: "city")
        if let closeDate {
            let details = try context.insertNewObject(forEntityName: "FailedBankDetails")
            try details.setValue(closeDate, forKey: "closeDate")
            try details.setValue(Int32(12345), forKey: "zip")
            try bank.setValue(details, forKey: "details")
        }
        return bank
    }

    /// Banks by state, then newest close date first.
    static func request(batchSize: Int = 0) -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
        request.sortDescriptors = [QuerySortDescriptor(key: "state"),
                                   QuerySortDescriptor(key: "details.closeDate", ascending: false)]
        request.fetchBatchSize = batchSize
        return request
    }
}

/// Applies each report to a copy of the previous state, following the table-view batch-update contract.
final class ContractRecorder: FetchedResultsControllerDelegate {
    var state: [[ManagedObjectID]] = []
    var problems: [String] = []
    var transactions = 0
    var log: [(FetchedResultsChangeType, IndexPath?, IndexPath?)] = []
    var sectionLog: [(FetchedResultsChangeType, Int, String)] = []
    private var deletes: [(IndexPath, ManagedObjectID?)] = []
    private var inserts: [(IndexPath, ManagedObjectID)] = []
    private var sectionDeletes: [Int] = []
    private var sectionInserts: [Int] = []
    private var updates: [(IndexPath, ManagedObjectID)] = []

    init(_ controller: FetchedResultsController<ManagedObject>) {
        state = controller.sectionObjectIDs
        controller.delegate = self
    }

    func controllerWillChangeContent(_ controller: FetchedResultsController<ManagedObject>) {
        deletes = []; inserts = []; sectionDeletes = []; sectionInserts = []; updates = []
        log = []; sectionLog = []
    }

    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        log.append((type, indexPath, newIndexPath))
        switch type {
        case .insert:
            guard let newIndexPath else { problems.append("insert without new index path"); return }
            inserts.append((newIndexPath, object.objectID))
        case .delete:
            guard let indexPath else { problems.append("delete without index path"); return }
            deletes.append((indexPath, object.objectID))
        case .move:
            guard let indexPath, let newIndexPath else { problems.append("move without index paths"); return }
            deletes.append((indexPath, nil))
            inserts.append((newIndexPath, object.objectID))
        case .update:
            guard let indexPath else { problems.append("update without index path"); return }
            updates.append((indexPath, object.objectID))
        }
    }

    func controller(_ controller: FetchedResultsController<ManagedObject>, didChange sectionInfo: SectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        sectionLog.append((type, sectionIndex, sectionInfo.name))
        switch type {
        case .insert: sectionInserts.append(sectionIndex)
        case .delete: sectionDeletes.append(sectionIndex)
        default: problems.append("section change \(type)")
        }
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) {
        transactions += 1
        var next = state
        for (path, id) in updates {
            guard next.indices.contains(path.section), next[path.section].indices.contains(path.item),
                  next[path.section][path.item] == id else { problems.append("update not at old position \(path)"); continue }
        }
        for (path, id) in deletes.sorted(by: { $0.0 > $1.0 }) {
            guard next.indices.contains(path.section), next[path.section].indices.contains(path.item) else {
                problems.append("delete out of range \(path)"); continue
            }
            if let id, next[path.section][path.item] != id { problems.append("delete of wrong object at \(path)") }
            next[path.section].remove(at: path.item)
        }
        for section in sectionDeletes.sorted(by: >) {
            guard next.indices.contains(section), next[section].isEmpty else { problems.append("bad section delete \(section)"); continue }
            next.remove(at: section)
        }
        for section in sectionInserts.sorted() {
            guard section <= next.count else { problems.append("bad section insert \(section)"); continue }
            next.insert([], at: section)
        }
        for (path, id) in inserts.sorted(by: { $0.0 < $1.0 }) {
            guard next.indices.contains(path.section), path.item <= next[path.section].count else {
                problems.append("insert out of range \(path)"); continue
            }
            next[path.section].insert(id, at: path.item)
        }
        state = next
    }
}

/// A thread-safe box for values captured in notification blocks.
final class Captured<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value
    init(_ value: Value) { storage = value }
    var value: Value {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}
