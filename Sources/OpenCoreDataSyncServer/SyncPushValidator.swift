import Foundation
import OpenCoreData
import OpenCoreDataSync

/// Checks pushed changes against the app's model before anything is applied: the entity, each key, each
/// value's kind and range, and what references point at. Every refusal names the entity, key and record.
struct SyncPushValidator {
    let model: ManagedObjectModel

    /// What the server knows of a record while a push is checked: its entity and whether it is deleted.
    typealias Known = (entity: String, deleted: Bool)

    /// Checks `change`; `known` answers for records stored or upserted earlier in the same push.
    ///
    /// - Throws: ``SyncRefusal`` (422 `invalid-change`) naming the culprit.
    func check(_ change: SyncRecordChange, known: (UUID) -> Known?) throws {
        func refuse(_ key: String?, _ reason: String) -> SyncRefusal {
            .invalidChange("\(change.entity)\(key.map { ".\($0)" } ?? "") of record \(change.recordID): \(reason)")
        }
        guard let entity = model.entitiesByName[change.entity] else { throw refuse(nil, "the model has no such entity") }
        if let existing = known(change.recordID), existing.entity != entity.name {
            throw refuse(nil, "the record is a \(existing.entity)")
        }
        guard change.kind == .upsert else {
            guard change.values.isEmpty else { throw refuse(nil, "a delete carries no values") }
            return
        }
        guard !entity.isAbstract else { throw refuse(nil, "the entity is abstract") }
        let attributes = SyncedProperties.attributes(of: entity)
        let relationships = SyncedProperties.relationships(of: entity)
        for (key, value) in change.values {
            if let attribute = attributes[key] {
                if let reason = value.misfit(for: attribute) { throw refuse(key, reason) }
            } else if let relationship = relationships[key] {
                let targets: [UUID]
                switch (relationship.isToMany, value) {
                case (false, .null): targets = []
                case (false, .reference(let id)): targets = [id]
                case (true, .references(let ids)): targets = ids
                default:
                    throw refuse(key, "a \(value.kindName) value for a \(relationship.isToMany ? "to-many" : "to-one") relationship")
                }
                guard Set(targets).count == targets.count else { throw refuse(key, "a record is named twice") }
                let destinations = Set([relationship.destinationEntityName]
                    + (relationship.destinationEntity?.allSubentities.map(\.name) ?? []))
                for target in targets {
                    // A reference to a deleted record is kept: the device had not heard of the delete yet,
                    // and each replica drops the link as it applies the delete.
                    guard let record = known(target) else { throw refuse(key, "refers to record \(target), which the zone does not hold") }
                    guard destinations.contains(record.entity) else {
                        throw refuse(key, "refers to record \(target), a \(record.entity), not a \(relationship.destinationEntityName)")
                    }
                }
            } else {
                throw refuse(key, "no property of that name travels (transient, derived, or the other side of a relationship)")
            }
        }
    }

    /// The keys `values` must hold for a live record of `entityName`: its required attributes, and its
    /// required to-one relationships and to-many minimums among those that travel (the other side of a pair
    /// is set on each replica from the side that travels, so the server cannot see it).
    ///
    /// - Returns: the first required key missing, null or short of its minimum, and why; nil when none is.
    func missingRequiredValue(entity entityName: String, values: [String: SyncValue]) -> (key: String, reason: String)? {
        guard let entity = model.entitiesByName[entityName] else { return nil }
        for (name, attribute) in SyncedProperties.attributes(of: entity).sorted(by: { $0.key < $1.key }) where !attribute.isOptional {
            if values[name] == nil || values[name] == .null { return (name, "a value is required") }
        }
        for (name, relationship) in SyncedProperties.relationships(of: entity).sorted(by: { $0.key < $1.key }) {
            switch values[name] {
            case .reference?: continue
            case .references(let ids)? where relationship.minCount > 0 && ids.count < relationship.minCount:
                return (name, "at least \(relationship.minCount) related records are required, \(ids.count) given")
            case .references?: continue
            default:
                if !relationship.isOptional && !relationship.isToMany { return (name, "a related record is required") }
            }
        }
        return nil
    }
}
