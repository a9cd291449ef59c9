import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Ordered many-to-many relationships keep their order in the join table's `Z_FOK_` columns, on both sides.
@Suite struct OrderedManyToManyTests {
    /// Playlist.songs (ordered) names the join table; Song.playlists is ordered too, so the table carries
    /// both order columns.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Playlist") {
                Attribute("name", .string)
                ToMany("songs", "Song", inverse: "playlists", ordered: true)
            }
            EntityDescription("Song") {
                Attribute("title", .string)
                ToMany("playlists", "Playlist", inverse: "songs", ordered: true)
            }
        }
    }

    static func names(_ objects: Any?, key: String) throws -> [String] {
        try (objects as? [ManagedObject] ?? []).map { try $0.value(forKey: key) as? String ?? "?" }
    }

    @Test func theJoinTableHasAnOrderColumnForEachOrderedSide() throws {
        let stack = try TestStack(model: try Self.model())
        let queue = try DatabaseQueue(path: stack.url.path)
        let columns = try queue.read { try Row.fetchAll($0, sql: "PRAGMA table_info(Z_1SONGS)").map { $0["name"] as String } }
        #expect(Set(columns) == ["Z_1PLAYLISTS", "Z_2SONGS", "Z_FOK_2SONGS", "Z_FOK_1PLAYLISTS"])
    }

    /// Random inserts, removals and moves on both sides, saved in rounds; after each save a fresh context on
    /// another coordinator must read every list in the order the saving context holds.
    @Test(arguments: [1, 2, 3])
    func randomEditsOnBothSidesReadBackInOrder(seed: UInt64) throws {
        let stack = try TestStack(model: try Self.model())
        let context = stack.context()
        var random = SeededRandom(seed: seed)
        var playlists: [ManagedObject] = [], songs: [ManagedObject] = []
        for index in 0..<4 {
            let playlist = try context.insertNewObject(forEntityName: "Playlist")
            try playlist.setValue("p\(index)", forKey: "name")
            playlists.append(playlist)
        }
        for index in 0..<10 {
            let song = try context.insertNewObject(forEntityName: "Song")
            try song.setValue("s\(index)", forKey: "title")
            songs.append(song)
        }
        for round in 0..<12 {
            for _ in 0..<6 {
                // Edit one side or the other: the inverse follows in memory, and both orders must persist.
                let (owner, key, pool) = Bool.random(using: &random)
                    ? (playlists.randomElement(using: &random)!, "songs", songs)
                    : (songs.randomElement(using: &random)!, "playlists", playlists)
                var members = try owner.value(forKey: key) as? [ManagedObject] ?? []
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    let candidate = pool.randomElement(using: &random)!
                    if !members.contains(candidate) {
                        members.insert(candidate, at: Int.random(in: 0...members.count, using: &random))
                    }
                case 1:
                    if !members.isEmpty { members.remove(at: Int.random(in: 0..<members.count, using: &random)) }
                default:
                    if members.count > 1 {
                        let moved = members.remove(at: Int.random(in: 0..<members.count, using: &random))
                        members.insert(moved, at: Int.random(in: 0...members.count, using: &random))
                    }
                }
                try owner.setValue(members, forKey: key)
            }
            try context.save()

            let coordinator = PersistentStoreCoordinator(managedObjectModel: stack.model)
            try coordinator.addPersistentStore(type: .sqlite, at: stack.url)
            let fresh = ManagedObjectContext(concurrencyType: .confinement)
            fresh.persistentStoreCoordinator = coordinator
            for (objects, key, label) in [(playlists, "songs", "title"), (songs, "playlists", "name")] {
                for object in objects {
                    let stored = try Self.names(fresh.existingObject(with: object.objectID).value(forKey: key), key: label)
                    let held = try Self.names(object.value(forKey: key), key: label)
                    #expect(stored == held, "round \(round), \(object.objectID) \(key)")
                }
            }
        }
        #expect(try StoreInvariants.violations(at: stack.url, model: stack.model).isEmpty)
    }
}
