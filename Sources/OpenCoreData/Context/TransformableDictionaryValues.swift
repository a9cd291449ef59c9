import Foundation

/// The Transformable attributes, and those kept in Core Data's external binary storage form, among a
/// dictionary-result fetch's columns: their values come back as Core Data gives them (read from their file
/// or marker, then through the attribute's transformer), not as the stored bytes. So that bytes that cannot
/// be read name their row, each such column's row key is fetched after the values (the related row's key
/// for a path through to-ones), unless grouping or distinct results make one result of several rows (then
/// the error names key 0).
struct TransformableDictionaryValues {
    let entity: EntityDescription
    let identity: StoreIdentity
    /// The store's external binary storage, nil when it keeps every value in its row.
    let external: ExternalBinaryStorage?
    /// Result column → the attribute and the to-one path to the row that holds it.
    private var attributes: [Int: (attribute: AttributeDescription, rowPath: [String])] = [:]
    /// Result column → the column holding its row's key.
    private var rowKeyColumns: [Int: Int] = [:]

    init(entity: EntityDescription, identity: StoreIdentity, external: ExternalBinaryStorage? = nil) {
        self.entity = entity
        self.identity = identity
        self.external = external
    }

    /// Notes that result column `position` fetches the key path `key`, if it reaches a Transformable
    /// attribute or one kept in external binary storage form.
    mutating func note(position: Int, key: String) {
        var current: EntityDescription? = entity
        let parts = key.split(separator: ".").map(String.init)
        for part in parts.dropLast() { current = current?.relationshipsByName[part]?.destinationEntity }
        guard let last = parts.last, let attribute = current?.attributesByName[last],
              attribute.attributeType == .transformable
                || (external != nil && ExternalBinaryStorage.usesExternalStorage(attribute)) else { return }
        attributes[position] = (attribute, Array(parts.dropLast()))
    }

    /// Appends the row-key columns to the fetched expressions, unless the results are grouped or distinct.
    mutating func addRowKeys(to expressions: inout [QueryExpression], groupedOrDistinct: Bool) {
        guard !groupedOrDistinct else { return }
        for (position, noted) in attributes.sorted(by: { $0.key < $1.key }) {
            rowKeyColumns[position] = expressions.count
            expressions.append(noted.rowPath.isEmpty ? .evaluatedObject : .key(noted.rowPath.joined(separator: ".")))
        }
    }

    /// The value of result column `position` of the current row: nil when the column is neither
    /// Transformable nor kept in external binary storage form, `.some(nil)` for a nil value.
    ///
    /// - Throws: what reading a Transformable value throws
    ///   (``ObjectGraphError/undecodableValue(entity:key:object:reason:)`` naming the row,
    ///   ``ObjectGraphError/unknownValueTransformer(entity:key:name:)``);
    ///   ``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)`` naming the row.
    func value(at position: Int, _ stored: StoreValue, in row: SteppedRow) throws -> Any?? {
        guard let (attribute, _) = attributes[position] else { return nil }
        let key = rowKeyColumns[position].map { row.integer(at: Int32($0)) } ?? 0
        var stored = stored
        if let external, ExternalBinaryStorage.usesExternalStorage(attribute), case .blob(let bytes) = stored.storage {
            stored = try external.decode(bytes, entity: attribute.entity?.name ?? entity.name, key: attribute.name,
                                         primaryKey: key).storeValue
        }
        guard attribute.attributeType == .transformable else {
            return .some(ValueConversion.swiftValue(stored, for: attribute.attributeType))
        }
        let row = ManagedObjectID(entity: attribute.entity ?? entity, primaryKey: key, store: identity)
        return .some(try TransformableValue.value(stored, for: attribute, of: row))
    }
}
