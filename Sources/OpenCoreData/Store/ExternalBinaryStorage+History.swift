import Foundation

/// Persistent history keeps, for a deleted object, the values of its attributes marked
/// `preservesValueInHistoryOnDeletion` (its tombstone). The delete triggers capture the columns as stored;
/// for attributes kept outside their rows that is a marker and the bytes, or the name of a file the delete
/// lets go of, so the tombstone gets the plain bytes instead, read while the file is still there (a
/// deleted value's file is removed only after the commit).
extension ExternalBinaryStorage {
    /// `stored`, the captured columns of `attributes` (tombstone order) of the deleted row `primaryKey`
    /// of `entity`, with the values of flagged attributes decoded to the bytes the object had.
    ///
    /// - Throws: ``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)`` naming the row
    ///   when a flagged value cannot be read (bad marker or reference, missing file): the delete fails
    ///   rather than record a tombstone that names a file about to be removed.
    func tombstone(_ stored: [StoreValue], of attributes: [AttributeDescription], entity: String,
                   primaryKey: Int64) throws -> [StoreValue] {
        var values = stored
        for (index, attribute) in attributes.enumerated() where index < values.count && Self.usesExternalStorage(attribute) {
            guard case .blob(let bytes) = values[index].storage else { continue }
            values[index] = try decode(bytes, entity: entity, key: attribute.name, primaryKey: primaryKey).storeValue
        }
        return values
    }
}
