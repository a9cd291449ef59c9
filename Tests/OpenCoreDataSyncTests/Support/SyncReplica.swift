import Foundation
@testable import OpenCoreData
@testable import OpenCoreDataSync

/// The model the sync tests edit: folders of notes (cascade), notes with tags (many-to-many), every kind of
/// value sync carries. Kept as Xcode's XML, so that the kill harness's worker process loads the same model
/// from a file.
enum SyncTestModel {
    static func make() throws -> ManagedObjectModel {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-sync-model-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        return try ManagedObjectModel(contentsOf: try write(into: folder))
    }

    /// Writes the model as `Notes.xcdatamodel` in `folder`; returns its URL.
    static func write(into folder: URL) throws -> URL {
        let model = folder.appendingPathComponent("Notes.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: model.appendingPathComponent("contents"))
        return model
    }

    static let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="21754" systemVersion="22E261" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Folder" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="notes" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
            </entity>
            <entity name="Note" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <attribute name="words" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="pinned" optional="YES" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                <attribute name="edited" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="price" optional="YES" attributeType="Decimal"/>
                <attribute name="blob" optional="YES" attributeType="Binary"/>
                <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
                <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
            </entity>
            <entity name="Tag" syncable="YES">
                <attribute name="label" attributeType="String"/>
                <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
            </entity>
        </model>
        """
}

/// One replica: a container on an SQLite file with history on, in a folder removed with the value.
final class SyncReplica: @unchecked Sendable {
    let folder: URL
    let container: PersistentContainer
    let context: ManagedObjectContext

    init(model: ManagedObjectModel, name: String = "Replica") throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        container = PersistentContainer(name: name, managedObjectModel: model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(
            url: folder.appendingPathComponent("\(name).sqlite"), type: .sqlite,
            options: StoreOptions(persistentHistoryTracking: true))]
        try container.loadPersistentStores()
        context = container.newBackgroundContext()
        // As an app's editing context would be set up: it sees the sync engine's saves, and its own edits
        // win over values it read before one of them.
        context.automaticallyMergesChangesFromParent = true
        context.mergePolicy = .mergeByPropertyObjectTrump
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    var local: SyncLocalStore { get throws { try SyncLocalStore(container: container) } }

    /// Every object, by record ID: entity and synced values (relationships as record IDs, sorted for
    /// unordered to-many). An object with no record ID is named by its object ID, so that it shows as a
    /// difference.
    func snapshot() throws -> [String: ReplicaObject] {
        let local = try self.local
        return try context.performAndWait {
            var result: [String: ReplicaObject] = [:]
            var names: [ManagedObjectID: String] = [:]
            func name(_ id: ManagedObjectID) throws -> String {
                if let known = names[id] { return known }
                let row = try local.store.syncRecords(forObjects: [(id.entity.name, id.primaryKey)]).first { !$0.isDeleted }
                let found = row?.recordID.uuidString ?? "unsynced \(id)"
                names[id] = found
                return found
            }
            for entity in container.managedObjectModel.entities {
                let request = FetchRequest<ManagedObject>(entityName: entity.name)
                for object in try context.fetch(request) {
                    var values: [String: SyncValue] = [:]
                    for (key, attribute) in SyncedProperties.attributes(of: entity) {
                        values[key] = try SyncValueConversion.syncValue(try object.value(forKey: key), of: attribute)
                    }
                    for (key, relationship) in SyncedProperties.relationships(of: entity) {
                        let value = try object.value(forKey: key)
                        if relationship.isToMany {
                            let set = (value as? Set<ManagedObject>).map(Array.init) ?? (value as? [ManagedObject]) ?? []
                            values[key] = .string(try set.map { try name($0.objectID) }.sorted().joined(separator: ","))
                        } else {
                            values[key] = .string(try (value as? ManagedObject).map { try name($0.objectID) } ?? "-")
                        }
                    }
                    let key = try name(object.objectID)
                    result[key] = ReplicaObject(entity: entity.name, values: values)
                }
            }
            return result
        }
    }
}

/// One object of a snapshot: its entity and synced values.
struct ReplicaObject: Hashable, CustomStringConvertible {
    var entity: String
    var values: [String: SyncValue]
    var description: String { "\(entity)\(values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })" }
}

/// Random edits of the sync test model, reproducible from a seed.
struct RandomNoteEdits {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    /// Makes `count` random edits in `context` and saves.
    mutating func edit(_ context: ManagedObjectContext, count: Int) throws {
        try context.performAndWait {
            for _ in 0..<count { try editOnce(context) }
            if context.hasChanges { try context.save() }
        }
    }

    private mutating func editOnce(_ context: ManagedObjectContext) throws {
        let folders = try context.fetch(FetchRequest<ManagedObject>(entityName: "Folder"))
        let notes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
        let tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
        switch random.next(12) {
        case 0:
            let folder = try context.insertNewObject(forEntityName: "Folder")
            try folder.setValue("folder \(random.next(1000))", forKey: "name")
        case 1, 2:
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue("note \(random.next(1000))", forKey: "title")
            try note.setValue(Int32(random.next(500)), forKey: "words")
            if random.next(2) == 0 { try note.setValue(Date(timeIntervalSinceReferenceDate: Double(random.next(1_000_000))), forKey: "edited") }
            if random.next(3) == 0 { try note.setValue(Decimal(random.next(10_000)) / 100, forKey: "price") }
            if random.next(4) == 0 { try note.setValue(Data((0..<random.next(8)).map { _ in UInt8(random.next(256)) }), forKey: "blob") }
            if !folders.isEmpty, random.next(3) > 0 { try note.setValue(folders[random.next(folders.count)], forKey: "folder") }
        case 3:
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue("tag \(random.next(100))", forKey: "label")
        case 4, 5:
            guard !notes.isEmpty else { return }
            let note = notes[random.next(notes.count)]
            try note.setValue("edit \(random.next(1000))", forKey: "title")
            if random.next(2) == 0 { try note.setValue(random.next(2) == 0, forKey: "pinned") }
        case 6:
            guard !notes.isEmpty else { return }
            try notes[random.next(notes.count)].setValue(folders.isEmpty || random.next(4) == 0 ? nil : folders[random.next(folders.count)], forKey: "folder")
        case 7, 8:
            guard !notes.isEmpty, !tags.isEmpty else { return }
            let note = notes[random.next(notes.count)]
            var current = (try note.value(forKey: "tags") as? Set<ManagedObject>) ?? []
            let tag = tags[random.next(tags.count)]
            if current.contains(tag) { current.remove(tag) } else { current.insert(tag) }
            try note.setValue(current, forKey: "tags")
        case 9:
            guard !notes.isEmpty else { return }
            context.delete(notes[random.next(notes.count)])
        case 10:
            guard !tags.isEmpty, random.next(2) == 0 else { return }
            context.delete(tags[random.next(tags.count)])
        default:
            guard !folders.isEmpty else { return }
            if random.next(3) == 0 { context.delete(folders[random.next(folders.count)]) }
            else { try folders[random.next(folders.count)].setValue("renamed \(random.next(1000))", forKey: "name") }
        }
    }
}

/// SplitMix64: every failure reproduces from its seed.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(max(1, bound)))
    }
}
