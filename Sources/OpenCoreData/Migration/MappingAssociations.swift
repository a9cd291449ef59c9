import Foundation

/// Which destination object each entity mapping made from which source object: Core Data's migration
/// manager keeps the same table (`destinationInstances(forEntityMappingName:sourceInstances:)`).
///
/// Kept as primary keys, one dictionary per entity mapping, so it costs two integers a row whatever the
/// objects held; the only thing of a heavy migration that grows with the store.
struct MappingAssociations {
    /// Per entity mapping name: source primary key → destination primary key.
    private var keys: [String: [Int64: Int64]] = [:]
    /// Per entity mapping name: the source and destination entities.
    private var entities: [String: (source: EntityDescription, destination: EntityDescription)] = [:]
    /// Per source entity name: the mappings that read it, in order (for generated relationship mappings).
    private var mappingsBySourceEntity: [String: [String]] = [:]
    /// The destination store's identity, for IDs made from keys.
    private(set) var destinationStoreIndex: UInt32 = 0

    /// Makes room for the mapping `name` from `source` to `destination`.
    mutating func register(mapping name: String, source: EntityDescription, destination: EntityDescription) {
        entities[name] = (source, destination)
        keys[name] = [:]
        mappingsBySourceEntity[source.name, default: []].append(name)
    }

    /// Records that the mapping `name` made `destination` from the source object with key `source`.
    mutating func associate(mapping name: String, source: Int64, destination: ManagedObjectID) {
        keys[name]?[source] = destination.primaryKey
        destinationStoreIndex = destination.storeIndex
    }

    /// The source keys the mapping `name` read, in key order.
    func sourceKeys(of name: String) -> [Int64] { (keys[name] ?? [:]).keys.sorted() }

    /// The ID of the destination object the mapping `name` made from the source object with key `key`.
    func destinationID(mapping name: String, sourceKey key: Int64) -> ManagedObjectID? {
        guard let entity = entities[name]?.destination, let destination = keys[name]?[key] else { return nil }
        return ManagedObjectID(entity: entity, primaryKey: destination, storeIndex: destinationStoreIndex)
    }

    /// The IDs of the destination objects the mapping `name` made from `sources` (objects of the source
    /// store), in their order; objects it did not make (filtered out, of another entity) give none. An
    /// empty `name` looks each object up in the first mapping that read its entity and made it.
    func destinationInstances(forEntityMappingName name: String, sourceInstances sources: [ManagedObject]) -> [ManagedObjectID] {
        sources.compactMap { source in
            let candidates = name.isEmpty ? (mappingsBySourceEntity[source.entity.name] ?? []) : [name]
            for candidate in candidates {
                guard let entities = entities[candidate], entities.source === source.entity else { continue }
                if let id = destinationID(mapping: candidate, sourceKey: source.objectID.primaryKey) { return id }
            }
            return nil
        }
    }
}
