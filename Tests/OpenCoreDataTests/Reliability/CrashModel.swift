import Foundation
@testable import OpenCoreData

/// The crash harness's model, as Sources/ocd-crash-worker/CrashWorkload.swift declares it (the worker is an
/// executable, so the test cannot import it). A difference makes the store refuse this model.
enum CrashModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Folder") {
                Attribute("name", .string, optional: false)
                ToMany("notes", "Note", inverse: "folder", deleteRule: .cascade)
            }
            EntityDescription("Note") {
                Attribute("title", .string, optional: false)
                Attribute("rank", .integer64, default: Int64(0))
                Attribute("body", .string)
                Attribute("blob", .binaryData)
                ToOne("folder", "Folder", inverse: "notes")
                ToMany("labels", "Label", inverse: "notes")
                ToOne("attachment", "Attachment", inverse: "note", deleteRule: .cascade)
            }
            EntityDescription("Label") {
                Attribute("name", .string, optional: false)
                ToMany("notes", "Note", inverse: "labels")
            }
            EntityDescription("Attachment") {
                Attribute("path", .string, optional: false)
                ToOne("note", "Note", inverse: "attachment")
            }
            EntityDescription("Progress") {
                Attribute("iteration", .integer64, default: Int64(0))
            }
        }
    }

    /// The store's objects in the worker's canonical form (`LogicalState.canonicalLines`), read through
    /// the library: one line per object, sorted.
    static func canonicalLines(of coordinator: PersistentStoreCoordinator) throws -> [String] {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        func all(_ entity: String) throws -> [ManagedObject] {
            Array(try context.fetch(FetchRequest<ManagedObject>(entityName: entity)))
        }
        func string(_ object: ManagedObject?, _ key: String) throws -> String {
            guard let object else { return "-" }
            return try object.value(forKey: key) as? String ?? "-"
        }
        var lines: [String] = []
        for folder in try all("Folder") { lines.append("folder \(try string(folder, "name"))") }
        for label in try all("Label") { lines.append("label \(try string(label, "name"))") }
        for note in try all("Note") {
            let title = try string(note, "title")
            let rank = try note.value(forKey: "rank") as? Int64 ?? -1
            let blob = (try note.value(forKey: "blob") as? Data).map { "\($0.count)/\(fnv1a($0))" } ?? "-"
            let folder = try string(note.value(forKey: "folder") as? ManagedObject, "name")
            let attachment = try string(note.value(forKey: "attachment") as? ManagedObject, "path")
            let labels = try (note.value(forKey: "labels") as? Set<ManagedObject> ?? []).map { try string($0, "name") }
            lines.append("note \(title) rank=\(rank) body=\(try string(note, "body")) blob=\(blob) folder=\(folder) "
                + "attachment=\(attachment) labels=\(labels.sorted().joined(separator: ","))")
        }
        for attachment in try all("Attachment") {
            let note = try string(attachment.value(forKey: "note") as? ManagedObject, "title")
            lines.append("attachment \(try string(attachment, "path")) note=\(note)")
        }
        for progress in try all("Progress") {
            lines.append("progress \(try progress.value(forKey: "iteration") as? Int64 ?? -1)")
        }
        return lines.sorted()
    }

    /// FNV-1a, 32 bits, as the worker's `Blob.checksum`.
    static func fnv1a(_ data: Data) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in data { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash
    }
}
