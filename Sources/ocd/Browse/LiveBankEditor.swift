import Foundation
import OpenCoreData

/// `--live`: a background context that, every second, inserts a bank, edits one, or deletes one it
/// inserted, saves, and reports what it did, so the browser shows changes arriving from elsewhere.
final class LiveBankEditor: @unchecked Sendable {
    // @unchecked Sendable: `step`, `inserted` and `timer` are touched only on `queue`.
    private let context: ManagedObjectContext
    private let queue = DispatchQueue(label: "ocd.live")
    private var timer: DispatchSourceTimer?
    private var step = 0
    private var inserted: [ManagedObjectID] = []
    private let states = ["AL", "CA", "GA", "IL", "TX"]

    init(store: OpenedStore) {
        context = store.newContext()
    }

    func start(_ report: @escaping @Sendable (String) -> Void) {
        queue.async {
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.schedule(deadline: .now() + 1, repeating: 1)
            timer.setEventHandler { report(self.change()) }
            timer.resume()
            self.timer = timer
        }
    }

    func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    /// One change, in turn: insert, edit, insert, delete.
    private func change() -> String {
        step += 1
        do {
            return try context.performAndWait {
                defer { context.reset() }
                switch step % 4 {
                case 1, 3:
                    let state = states[step % states.count]
                    let record = FailedBankRecord(name: "Live Bank \(step)", city: "Springfield", state: state,
                                                  cert: Int32(90_000 + step), acquiringInstitution: "",
                                                  closeDate: Date())
                    let bank = try BankImporter.insert(record, into: context, updatedAt: Date())
                    try context.save()
                    inserted.append(bank.objectID)
                    return "inserted Live Bank \(step) in \(state)"
                case 2:
                    let request = BankSections.makeRequest()
                    request.fetchLimit = 1
                    guard let bank = try context.fetch(request).first else { return "nothing to edit" }
                    let name = bank.name ?? "?"
                    let city = bank.city ?? ""
                    bank.city = city.hasSuffix(" (edited)") ? city : city + " (edited)"
                    try context.save()
                    return "updated \(name)"
                default:
                    guard !inserted.isEmpty else { return "nothing to delete" }
                    let id = inserted.removeFirst()
                    let bank = try context.existingObject(with: id)
                    let name = (try bank.value(forKey: "name") as? String) ?? "?"
                    context.delete(bank)
                    try context.save()
                    return "deleted \(name)"
                }
            }
        } catch {
            return "live change failed: \(error)"
        }
    }
}
