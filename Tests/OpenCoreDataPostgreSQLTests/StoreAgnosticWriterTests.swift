import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// The engine's change-set writer (`ChangeSetWriter`) on both stores, against a naive reference: random
/// saves of inserts (more than one multi-row statement's worth on PostgreSQL), updates, deletes and
/// many-to-many changes, each followed by a fresh context's fetch of everything, which must equal what the
/// reference holds; with history on, every delete's tombstone holds the deleted note's title.
struct StoreAgnosticWriterTests {
    /// Notes with a preserved title, a rank, bytes, and tags on both sides of a many-to-many.
    static func model() throws -> ManagedObjectModel {
        let title = AttributeDescription(name: "title", type: .string)
        title.preservesValueInHistoryOnDeletion = true
        return try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [
                title,
                AttributeDescription(name: "rank", type: .integer64),
                AttributeDescription(name: "bytes", type: .binaryData),
                RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "notes"),
            ]),
            EntityDescription(name: "Tag", properties: [
                AttributeDescription(name: "label", type: .string),
                RelationshipDescription(name: "notes", destination: "Note", toMany: true, inverse: "tags"),
            ]),
        ])
    }

    /// What the store should hold for one note.
    struct Expected: Equatable, CustomStringConvertible {
        var rank: Int64
        var bytes: Data?
        var tags: Set<String>
        var description: String { "rank \(rank), \(bytes?.count ?? -1) bytes, tags \(tags.sorted())" }
    }

    @Test(arguments: agnosticKinds, [1, 2, 3])
    func randomSavesAgreeWithAFreshFetch(kind: StoreKind, seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let location = try SharedStoreLocation(kind, model: try Self.model(),
                                               options: StoreOptions(persistentHistoryTracking: true))
        let context = try location.context()
        let labels = ["red", "green", "blue", "grey"]
        var tags: [String: ManagedObject] = [:]
        for label in labels {
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue(label, forKey: "label")
            tags[label] = tag
        }
        var notes: [String: ManagedObject] = [:]
        var expected: [String: Expected] = [:]
        var deletedTitles: Set<String> = []
        // A note inserted and deleted before a save never reaches the store, nor its history.
        var savedTitles: Set<String> = []
        var nextNumber = 0
        for round in 0..<6 {
            // The first round inserts past one multi-row INSERT (500 rows) so the inserter sends two.
            let inserts = round == 0 ? 700 : Int.random(in: 0...40, using: &random)
            for _ in 0..<inserts {
                let title = "Note \(nextNumber)"
                nextNumber += 1
                let note = try context.insertNewObject(forEntityName: "Note")
                let value = Expected(rank: Int64.random(in: -1_000...1_000, using: &random),
                                     bytes: Bool.random(using: &random) ? Data((0..<Int.random(in: 0...40, using: &random)).map { _ in
                                         UInt8.random(in: 0...255, using: &random)
                                     }) : nil,
                                     tags: Set(labels.filter { _ in Int.random(in: 0..<4, using: &random) == 0 }))
                try note.setValue(title, forKey: "title")
                try note.setValue(value.rank, forKey: "rank")
                try note.setValue(value.bytes, forKey: "bytes")
                try note.setValue(Set(value.tags.map { tags[$0]! }), forKey: "tags")
                notes[title] = note
                expected[title] = value
            }
            for title in notes.keys.sorted() where Int.random(in: 0..<5, using: &random) == 0 {
                let note = notes[title]!
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    context.delete(note)
                    notes[title] = nil
                    expected[title] = nil
                    if savedTitles.contains(title) { deletedTitles.insert(title) }
                case 1:
                    let rank = Int64.random(in: -1_000...1_000, using: &random)
                    try note.setValue(rank, forKey: "rank")
                    expected[title]!.rank = rank
                case 2:
                    let bytes = Data(repeating: UInt8.random(in: 0...255, using: &random), count: Int.random(in: 1...30, using: &random))
                    try note.setValue(bytes, forKey: "bytes")
                    expected[title]!.bytes = bytes
                default:
                    let label = labels.randomElement(using: &random)!
                    var now = expected[title]!.tags
                    if now.contains(label) { now.remove(label) } else { now.insert(label) }
                    try note.setValue(Set(now.map { tags[$0]! }), forKey: "tags")
                    expected[title]!.tags = now
                }
            }
            try context.save()
            savedTitles.formUnion(notes.keys)
            let stored = try Self.storedNotes(try location.context())
            #expect(stored.count == expected.count, "round \(round): \(stored.count) notes stored, \(expected.count) expected")
            for (title, value) in expected where stored[title] != value {
                Issue.record("round \(round), \(title): stored \(stored[title].map(String.init(describing:)) ?? "nothing"), expected \(value)")
            }
        }
        // Every delete's history change keeps the deleted note's title, read as it was deleted.
        let request = PersistentHistoryChangeRequest.fetchHistory(after: Optional<PersistentHistoryToken>.none)
        let result = try #require(try context.execute(request) as? PersistentHistoryResult)
        var tombstoneTitles: Set<String> = []
        for transaction in result.transactions {
            for change in transaction.changes ?? [] where change.changeType == .delete {
                if case .text(let title)? = change.tombstone?["title"] { tombstoneTitles.insert(title) }
            }
        }
        #expect(tombstoneTitles == deletedTitles)
    }

    /// Every note a fresh context fetches, by title.
    static func storedNotes(_ context: ManagedObjectContext) throws -> [String: Expected] {
        var stored: [String: Expected] = [:]
        for note in try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")) {
            let title = try #require(try note.value(forKey: "title") as? String)
            let tags = try (note.value(forKey: "tags") as? Set<ManagedObject> ?? []).map { try #require(try $0.value(forKey: "label") as? String) }
            stored[title] = Expected(rank: try #require(try note.value(forKey: "rank") as? Int64),
                                     bytes: try note.value(forKey: "bytes") as? Data, tags: Set(tags))
        }
        return stored
    }
}

/// The change-set tests' generator, for the standard library's `random(in:using:)`: the same edits for the same
/// seed on every machine.
extension SplitMix: RandomNumberGenerator {}
