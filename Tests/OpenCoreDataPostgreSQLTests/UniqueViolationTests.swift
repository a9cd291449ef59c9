import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// An object whose `validateForInsert` runs a hook once per label: the moment between a save's constraint
/// lookup and its write, where another coordinator can save the same values.
final class RacedTag: ManagedObject {
    nonisolated(unsafe) private static var hooks: [String: () -> Void] = [:]
    private static let lock = NSLock()

    /// Runs `hook` when an object labelled `label` is next validated for insert.
    static func beforeWriting(_ label: String, _ hook: @escaping () -> Void) {
        lock.withLock { hooks[label] = hook }
    }

    override func validateForInsert() throws {
        try super.validateForInsert()
        guard let label = try value(forKey: "label") as? String,
              let hook = Self.lock.withLock({ Self.hooks.removeValue(forKey: label) }) else { return }
        hook()
    }
}

@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct UniqueViolationTests {
    /// Another coordinator saves the same label after this save looked for it and before it writes: the
    /// store's unique index refuses the write, and the context reports it as the validation failure it gives
    /// on SQLite (entity, constraint keys, the object), not a server error. Saved again, the merge policy
    /// meets the other row and merges as it does for a row stored before.
    @Test(arguments: agnosticKinds)
    func valueSavedMeanwhileIsAUniquenessViolationThenMerged(kind: StoreKind) throws {
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "label", type: .string),
            AttributeDescription(name: "weight", type: .integer64),
        ])
        tag.uniquenessConstraints = [["label"]]
        tag.managedObjectClass = RacedTag.self
        let location = try SharedStoreLocation(kind, model: try ManagedObjectModel(entities: [tag]))
        let label = "red-\(kind)-\(UUID().uuidString)"
        let mine = try location.context()
        mine.mergePolicy = .mergeByPropertyObjectTrump
        let other = try location.context()
        RacedTag.beforeWriting(label) {
            do {
                let theirs = try other.insertNewObject(forEntityName: "Tag")
                try theirs.setValue(label, forKey: "label")
                try theirs.setValue(Int64(1), forKey: "weight")
                try other.save()
            } catch {
                Issue.record("the other coordinator's save failed: \(error)")
            }
        }
        let object = try mine.insertNewObject(forEntityName: "Tag")
        try object.setValue(label, forKey: "label")
        try object.setValue(Int64(2), forKey: "weight")
        do {
            try mine.save()
            Issue.record("the save went through beside the other coordinator's row")
        } catch ObjectGraphError.validationFailed(let failures) {
            #expect(failures.count == 1)
            let failure = try #require(failures.first)
            #expect(failure.entity == "Tag")
            #expect(failure.key == "label")
            #expect(failure.rule == .uniquenessViolation)
            #expect(failure.objectID == object.objectID)
        }
        try mine.save()
        let tags = try location.context().fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
        #expect(tags.count == 1)
        #expect(try tags.first?.value(forKey: "weight") as? Int64 == 2)
    }
}
