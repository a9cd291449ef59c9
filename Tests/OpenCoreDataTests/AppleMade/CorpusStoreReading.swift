import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Opens a copy of a corpus store with a model and reads all of it through a context, checking it against
/// what SQLite holds: every row of every entity table is an object, every attribute of each reads, and every
/// join table row is a link seen from its owning side.
enum CorpusStoreReading {
    /// What a full read found.
    struct Summary: Equatable {
        /// Objects per root entity.
        var objectsByRootEntity: [String: Int] = [:]
        /// Links per join table, counted from the side that names it.
        var linksByJoinTable: [String: Int] = [:]
        /// The value transformers attributes name that this process lacks ("Entity.key: name"): reading such
        /// an attribute is a typed error naming the transformer, and the object's other values still read.
        var missingTransformers: Set<String> = []
    }

    /// Reads every object and link of the store at `url` (a copy) opened with `model`, and expects the counts
    /// SQLite gives for the same tables.
    static func readEverything(storeAt url: URL, model: ManagedObjectModel, readOnly: Bool = false,
                               sourceLocation: SourceLocation = #_sourceLocation) throws -> Summary {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: readOnly))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        var summary = Summary()
        for entity in model.entitiesByNumber where entity.superentity == nil {
            let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name))
            summary.objectsByRootEntity[entity.name] = objects.count
            for object in objects {
                for property in object.entity.allProperties {
                    do {
                        _ = try object.value(forKey: property.name)
                    } catch ObjectGraphError.unknownValueTransformer(let entity, let key, let name) {
                        summary.missingTransformers.insert("\(entity).\(key): \(name)")
                    }
                }
            }
        }
        let schema = store.schema
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        for entity in model.entitiesByNumber where entity.superentity == nil {
            let table = entity.tableName
            let rows = try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table)") ?? 0 }
            #expect(summary.objectsByRootEntity[entity.name] == rows, "\(entity.name) in \(table)", sourceLocation: sourceLocation)
        }
        for join in schema.joinTables {
            let rows = try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(join.name)") ?? 0 }
            var links = 0
            for entity in model.entitiesByNumber {
                for case let relationship as RelationshipDescription in entity.properties {
                    guard let slot = entity.slot(forKey: relationship.name),
                          case .toManyByJoinTable(let stored) = entity.storage[slot], stored.name == join.name, stored.sourceColumn == join.sourceColumn else { continue }
                    let request = FetchRequest<ManagedObject>(entityName: entity.name)
                    request.includesSubentities = false
                    for object in try context.fetch(request) {
                        switch try object.value(forKey: relationship.name) {
                        case let set as Set<ManagedObject>: links += set.count
                        case let list as [ManagedObject]: links += list.count
                        default: break
                        }
                    }
                }
            }
            summary.linksByJoinTable[join.name] = links
            #expect(links == rows, "join table \(join.name)", sourceLocation: sourceLocation)
        }
        return summary
    }
}
