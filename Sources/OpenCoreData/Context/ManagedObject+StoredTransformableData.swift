import Foundation

extension ManagedObject {
    /// The bytes a Transformable attribute's column holds, not transformed: what reading its value needs the
    /// attribute's value transformer for. A store written by an app names the app's own transformer classes;
    /// a process that lacks one still keeps, copies or shows the value as these bytes (`ocd fetch --json`
    /// prints them as base64), while ``value(forKey:)`` of that attribute throws
    /// ``ObjectGraphError/unknownValueTransformer(entity:key:name:)`` and the object's other values read.
    /// Nil when the column is NULL.
    ///
    /// ```swift
    /// do {
    ///     cover = try book.value(forKey: "cover")
    /// } catch ObjectGraphError.unknownValueTransformer {
    ///     coverBytes = try book.storedTransformableData(forKey: "cover")
    /// }
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` when `key` is not a property of the entity;
    ///   ``ObjectGraphError/notATransformableAttribute(entity:key:)`` when it is not a stored Transformable attribute;
    ///   ``ObjectGraphError/undecodableValue(entity:key:object:reason:)`` when the
    ///   column holds a number rather than bytes; what reading the row throws
    ///   (``ObjectGraphError/objectNotFound(_:)``, ``StoreError``).
    public func storedTransformableData(forKey key: String) throws -> Data? {
        QueueCheck.access(to: self, key: key, writing: false)
        guard let slot = entity.slot(forKey: key) else { throw ObjectGraphError.unknownKey(entity: entity.name, key: key) }
        guard let attribute = entity.allProperties[slot] as? AttributeDescription,
              attribute.attributeType == .transformable, case .attribute = entity.storage[slot] else {
            throw ObjectGraphError.notATransformableAttribute(entity: entity.name, key: key)
        }
        switch StoredCellBytes(try primitiveAttribute(atSlot: slot)) {
        case .null: return nil
        case .bytes(let bytes): return bytes
        case .number:
            throw ObjectGraphError.undecodableValue(entity: entity.name, key: key, object: objectID,
                                                    reason: "the column holds a number, not bytes")
        }
    }
}
