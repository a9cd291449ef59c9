import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Objects described by value, so one data set can fill a store of any version and be compared with
/// what a store holds (namespaced so they cannot clash with other suites' helpers).
enum MigrationFixtures {
    /// One object: its entity, its identity (the value of the entity's key attribute), its attribute
    /// values and its links (destination identities, in order for ordered relationships).
    struct Object {
        var entity: String
        var key: String
        var values: [String: Any] = [:]
        var links: [String: [String]] = [:]
    }

    /// The attribute that identifies an object of each fixture entity in dumps and links.
    static let keyAttribute = ["Customer": "name", "Order": "number", "Purchase": "number", "Product": "title",
                               "Tag": "label", "Coupon": "code", "Legacy": "code", "Note": "title",
                               "Person": "name", "Pet": "name"]

    static func shopBundle() throws -> URL { try InteropFixtures.url("Shop.xcdatamodeld") }

    /// A bundle of versions written as Xcode writes them, in a temporary folder.
    static func bundle(in directory: TemporaryDirectory, name: String = "Test",
                       versions: [(name: String, entities: String)], current: String? = nil) throws -> URL {
        let bundle = directory.file("\(name).xcdatamodeld")
        for version in versions {
            let folder = bundle.appendingPathComponent("\(version.name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try InteropFixtures.modelXML(version.entities).write(to: folder.appendingPathComponent("contents"))
        }
        let marker = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(current ?? versions.last!.name).xcdatamodel</string></dict></plist>
            """
        try Data(marker.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    /// Creates a store of `model` at `url` holding `objects`, each saved on its own so primary keys
    /// follow the order given; the store is closed when this returns.
    static func fill(_ url: URL, model: ManagedObjectModel, with objects: [Object]) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        var made: [String: ManagedObject] = [:]
        for object in objects {
            let inserted = try context.insertNewObject(forEntityName: object.entity)
            for (key, value) in object.values { try inserted.setValue(value, forKey: key) }
            // Registered under its ancestors too, so links to a parent entity find it.
            var entity: EntityDescription? = inserted.entity
            while let current = entity {
                made["\(current.name)/\(object.key)"] = inserted
                entity = current.superentity
            }
            try context.save()
        }
        for object in objects where !object.links.isEmpty {
            let source = made["\(object.entity)/\(object.key)"]!
            for (name, keys) in object.links {
                let relationship = source.entity.relationshipsByName[name]!
                let targets = keys.map { made["\(relationship.destinationEntityName)/\($0)"]! }
                if !relationship.isToMany {
                    try source.setValue(targets.first, forKey: name)
                } else if relationship.isOrdered {
                    try source.setValue(targets, forKey: name)
                } else {
                    try source.setValue(Set(targets), forKey: name)
                }
            }
        }
        try context.save()
        coordinator.persistentStores.forEach(coordinator.remove)
    }

    /// Every object of the store, one line each, in a fixed order: entity, identity, every attribute,
    /// every relationship as destination identities (sorted unless ordered).
    static func dump(_ url: URL, model: ManagedObjectModel, keys: [String: String] = keyAttribute) throws -> [String] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        func identity(_ object: ManagedObject) throws -> String {
            "\(try object.value(forKey: keys[object.entity.name]!) ?? "nil")"
        }
        var lines: [String] = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.includesSubentities = false
            var entityLines: [String] = []
            for object in try context.fetch(request) {
                var parts = [entity.name]
                for property in entity.allProperties.sorted(by: { $0.name < $1.name }) where !property.isTransient {
                    let value = try object.value(forKey: property.name)
                    switch value {
                    case let object as ManagedObject: parts.append("\(property.name)->\(try identity(object))")
                    case let list as [ManagedObject]: parts.append("\(property.name)->[\(try list.map(identity).joined(separator: ","))]")
                    case let set as Set<ManagedObject>:
                        parts.append("\(property.name)->{\(try set.map(identity).sorted().joined(separator: ","))}")
                    case nil: parts.append("\(property.name)=nil")
                    case let value?: parts.append("\(property.name)=\(value) (\(type(of: value)))")
                    }
                }
                entityLines.append(parts.joined(separator: " "))
            }
            lines += entityLines.sorted()
        }
        return lines
    }

    /// The store's layout: each table's columns and types in order, the indexes, and `Z_PRIMARYKEY`'s
    /// numbering, so a migrated store can be compared with a fresh one.
    static func layout(_ url: URL) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            var lines: [String] = []
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(\"\(table)\")").map { "\($0["name"] as String) \($0["type"] as String)" }
                lines.append("table \(table): \(columns.joined(separator: ", "))")
            }
            for index in try Row.fetchAll(db, sql: "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name") {
                let columns = try Row.fetchAll(db, sql: "PRAGMA index_info(\"\(index[0] as String)\")").map { $0["name"] as String }
                lines.append("index \(index[0] as String) on \(index[1] as String) (\(columns.joined(separator: ", ")))")
            }
            for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
                lines.append("entity \(row[0] as Int) \(row[1] as String) super \(row[2] as Int)")
            }
            return lines
        }
    }

    /// The store file's bytes (its WAL is checkpointed away when the last connection closes).
    static func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }
}
