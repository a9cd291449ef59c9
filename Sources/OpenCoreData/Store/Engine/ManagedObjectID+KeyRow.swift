import Foundation

extension ManagedObjectID {
    /// The object ID a `(Z_ENT, Z_PK)` row names (a `RETURNING Z_ENT, Z_PK` or a related-rows query): the
    /// entity by its stored number, `entity` when the number is missing or unknown.
    package init(keyRow row: [StoreValue], default entity: EntityDescription, model: ManagedObjectModel, store: StoreIdentity) {
        let number = Int.fromStoreValue(row[0]) ?? entity.entityNumber
        self.init(entity: model.entity(number: number) ?? entity, primaryKey: Int64.fromStoreValue(row[1]) ?? 0, store: store)
    }
}
