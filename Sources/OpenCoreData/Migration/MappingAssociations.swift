import Foundation

/// Which destination object each entity mapping made from which source object: Core Data's migration
/// manager keeps the same table (`destinationInstances(forEntityMappingName:sourceInstances:)`).
///
/// Kept as primary keys, one dictionary per entity mapping, so it costs two integers a row whatever the
/// objects held; the only thing of a heavy migration that grows with the store. A migration policy may
/// make several objects from one source object: the second and later ones go to `moreKeys`, so the
/// common case stays one integer per destination.
struct MappingAssociations {
    /// Per entity mapping name: source primary key → (first) destination primary key.
    private var keys: [String: [Int64: Int64]] = [:]
    /// Per entity mapping name: source primary key → the destination keys after the first.
    private var moreKeys: [String: [Int64: [Int64]]] = [:]
    /// Per entity mapping name: the source and destination entities.
    private var entities: [String: (source: EntityDescription?, destination: EntityDescription?)] = [:]
    /// Per source entity name: the mappings that read it, in order (for generated relationship mappings).
    private var mappingsBySourceEntity: [String: [String]] = [:]
    /// The destination store's identity, for IDs made from keys.
    private(set) var destinationStoreIndex: UInt32 = 0

    /// Makes room for the mapping `name` from `source` to `destination`.
    mutating func register(mapping name: String, source: EntityDescription?, destination: EntityDescription?) {
        entities[name] = (source, destination)
        keys[name] = [:]
        if let source { mappingsBySourceEntity[source.name, default: []].append(name) }
    }

    /// Records that the mapping `name` made `destination` from the source object with key `source`.
    mutating func associate(mapping name: String, source: Int64, destination: ManagedObjectID) {
        destinationStoreIndex = destination.storeIndex
        guard let first = keys[name]?[source] else {
            keys[name]?[source] = destination.primaryKey
            return
        }
        guard first != destination.primaryKey, moreKeys[name]?[source]?.contains(destination.primaryKey) != true else { return }
        moreKeys[name, default: [:]][source, default: []].append(destination.primaryKey)
    }

    /// The source keys the mapping `name` read, in key order.
    func sourceKeys(of name: String) -> [Int64] { (keys[name] ?? [:]).keys.sorted() }

    /// The IDs of the destination objects the mapping `name` made from the source object with key `key`,
    /// in the order they were made.
    func destinationIDs(mapping name: String, sourceKey key: Int64) -> [ManagedObjectID] {
        guard let entity = entities[name]?.destination ?? nil, let first = keys[name]?[key] else { return [] }
        return ([first] + (moreKeys[name]?[key] ?? [])).map {
            ManagedObjectID(entity: entity, primaryKey: $0, storeIndex: destinationStoreIndex)
        }
    }

    /// The key of the source object the mapping `name` made the destination object with key `key` from;
    /// nil when it made no such object. A scan of the mapping's table: for a migration policy's occasional
    /// question, not for every object.
    func sourceKey(mapping name: String, destinationKey key: Int64) -> Int64? {
        if let found = keys[name]?.first(where: { $0.value == key }) { return found.key }
        return moreKeys[name]?.first(where: { $0.value.contains(key) })?.key
    }

    /// The IDs of the destination objects the mapping `name` made from `sources` (objects of the source
    /// store), in their order; objects it did not make (filtered out, of another entity) give none. An
    /// empty `name` looks each object up in the first mapping that read its entity and made it.
    func destinationInstances(forEntityMappingName name: String, sourceInstances sources: [ManagedObject]) -> [ManagedObjectID] {
        sources.flatMap { source -> [ManagedObjectID] in
            let candidates = name.isEmpty ? (mappingsBySourceEntity[source.entity.name] ?? []) : [name]
            for candidate in candidates {
                guard let entities = entities[candidate], entities.source === source.entity else { continue }
                let ids = destinationIDs(mapping: candidate, sourceKey: source.objectID.primaryKey)
                if !ids.isEmpty { return ids }
            }
            return []
        }
    }
}
