import Foundation

/// What a commit made elsewhere changed in the served store, as `/events` sends it: every entity's count
/// now (subentities' objects included, as the index shows them), and per entity how many objects were
/// inserted, updated and deleted, from the store's history when it keeps one, else from the counts.
struct StoreChange: Codable, Sendable, Equatable {
    /// One entity's part of a change. Without history only the counts tell, so updates are not seen and
    /// an insert and a delete in one commit cancel out.
    struct EntityChange: Codable, Sendable, Equatable {
        var entity: String
        var inserted = 0
        var updated = 0
        var deleted = 0
    }

    /// Each entity's object count after the change.
    var counts: [String: Int]
    /// The entities that changed, by name.
    var changes: [EntityChange]
    /// Whether the changes come from the store's history (else from the counts).
    var history: Bool

    /// What changed in words: `Author: 2 inserted, 1 updated; Book: 1 deleted`, or that the store changed
    /// when nothing more can be told.
    var summary: String {
        let parts = changes.map { change in
            let counted = [(change.inserted, "inserted"), (change.updated, "updated"), (change.deleted, "deleted")]
                .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            return "\(change.entity): \(counted.joined(separator: ", "))"
        }
        return parts.isEmpty ? "the store changed" : parts.joined(separator: "; ")
    }

    /// The changes two sets of counts imply: per entity, its own objects (its subentities' taken away) more
    /// are inserted, fewer deleted.
    static func changes(from before: [String: Int], to after: [String: Int],
                        subentities: [String: [String]]) -> [EntityChange] {
        func own(_ counts: [String: Int], _ entity: String) -> Int {
            (counts[entity] ?? 0) - (subentities[entity] ?? []).reduce(0) { $0 + (counts[$1] ?? 0) }
        }
        return after.keys.sorted().compactMap { entity in
            let difference = own(after, entity) - own(before, entity)
            guard difference != 0 else { return nil }
            return difference > 0 ? EntityChange(entity: entity, inserted: difference)
                                  : EntityChange(entity: entity, deleted: -difference)
        }
    }

    /// The change as one server-sent event: `event: change` and its JSON (with the summary) on one data line.
    var eventText: String {
        struct Sent: Encodable {
            var counts: [String: Int]
            var changes: [EntityChange]
            var history: Bool
            var summary: String
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // JSON holds no raw line break, so the data fits one line.
        let data = (try? encoder.encode(Sent(counts: counts, changes: changes, history: history, summary: summary))) ?? Data("{}".utf8)
        return "event: change\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
    }
}
