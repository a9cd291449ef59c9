import Foundation

/// The `Z_METADATA` row's property list (see docs/INTEROP.md).
struct StoreMetadataRow {
    var model: ManagedObjectModel
    var uuid: String

    func plistData() throws -> Data {
        let plist: [String: Any] = [
            "NSStoreType": "SQLite",
            "NSStoreUUID": uuid,
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": model.versionIdentifiers.isEmpty ? [""] : model.versionIdentifiers,
            "_NSAutoVacuumLevel": "2",
        ]
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }
}
