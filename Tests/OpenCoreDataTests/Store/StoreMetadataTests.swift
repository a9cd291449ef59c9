import Foundation
import GRDB
import Testing
@testable import OpenCoreData

@Suite struct StoreMetadataTests {
    private func failedBanks() throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: InteropFixtures.url("FailedBanks.xcdatamodeld"))
    }

    private func decode(_ data: Data) throws -> [String: Any] {
        let object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        return try #require(object as? [String: Any])
    }

    @Test func writesABinaryPlistWithCoreDataKeys() throws {
        let model = try failedBanks()
        let uuid = UUID()
        let metadata = StoreMetadata(model: model, uuid: uuid)
        let data = try metadata.plistData()
        #expect(data.starts(with: Data("bplist00".utf8)))

        let plist = try decode(data)
        #expect(plist["NSStoreType"] as? String == "SQLite")
        #expect(plist["NSStoreUUID"] as? String == uuid.uuidString.uppercased())
        #expect(plist["NSStoreModelVersionHashesVersion"] as? Int == 3)
        #expect(plist["NSStoreModelVersionIdentifiers"] as? [String] == [""])
        #expect(plist["NSPersistenceFrameworkVersion"] as? Int == StoreMetadata.frameworkVersion)
        #expect(plist["_NSAutoVacuumLevel"] as? String == "2")
        let hashes = try #require(plist["NSStoreModelVersionHashes"] as? [String: Data])
        #expect(hashes == model.entityVersionHashesByName)
        #expect(hashes.count == 2 && hashes.values.allSatisfy { $0.count == 32 })
        #expect(metadata.uuidString == uuid.uuidString.uppercased())
    }

    @Test func roundTrips() throws {
        let model = try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld"))
        let metadata = StoreMetadata(model: model, uuid: UUID())
        let read = try StoreMetadata(plistData: metadata.plistData())
        #expect(read == metadata)
        #expect(read.versionIdentifiers == ["2.0"])
        #expect(read.differences(from: model).isEmpty)
    }

    @Test func roundTripsThroughAnSQLiteFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-\(UUID()).sqlite")
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try failedBanks()
        let written = StoreMetadata(model: model, uuid: UUID())
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
            try db.execute(sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (?, ?, ?)",
                           arguments: [StoreMetadata.rowVersion, written.uuidString, written.plistData()])
        }
        let row = try #require(try queue.read { db in try Row.fetchOne(db, sql: "SELECT * FROM Z_METADATA") })
        let blob: Data = try #require(row["Z_PLIST"])
        let read = try StoreMetadata(plistData: blob, rowUUID: row["Z_UUID"], storePath: url.path)
        #expect(read == written)
        #expect(row["Z_VERSION"] as Int? == 1)
    }

    @Test func toleratesExtraAndMissingOptionalKeys() throws {
        let uuid = UUID()
        let hash = Data(repeating: 7, count: 32)
        let plist: [String: Any] = [
            "NSStoreModelVersionHashes": ["Note": hash],
            "NSStoreModelVersionChecksumKey": "bMpud663BQGI6vPDOZrdxdMSSBeoxdFxYqvCOeOoxSg=",
            "NSStoreModelVersionHashesDigest": "something newer",
            "_NSAutoVacuumLevel": 2,
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let read = try StoreMetadata(plistData: data, rowUUID: uuid.uuidString)
        #expect(read.storeUUID == uuid)
        #expect(read.storeType == "SQLite")
        #expect(read.versionHashes == ["Note": hash])
        #expect(read.versionIdentifiers.isEmpty)
        #expect(read.versionHashesVersion == nil && read.frameworkVersion == nil)
        #expect(read.autoVacuumLevel == "2")
    }

    @Test(arguments: [
        Data(), Data("garbage".utf8), Data([0x00, 0xFF, 0x10, 0x42]), Data("bplist00 truncated".utf8),
    ])
    func refusesGarbage(data: Data) {
        #expect(throws: StoreError.self) { try StoreMetadata(plistData: data, rowUUID: UUID().uuidString) }
    }

    @Test func refusesANonDictionaryAndMissingEssentials() throws {
        let array = try PropertyListSerialization.data(fromPropertyList: ["a", "b"], format: .binary, options: 0)
        #expect(throws: StoreError.self) { try StoreMetadata(plistData: array, rowUUID: UUID().uuidString) }

        let noHashes = try PropertyListSerialization.data(
            fromPropertyList: ["NSStoreUUID": UUID().uuidString], format: .binary, options: 0)
        #expect(throws: StoreError.self) { try StoreMetadata(plistData: noHashes) }

        let noUUID = try PropertyListSerialization.data(
            fromPropertyList: ["NSStoreModelVersionHashes": [String: Data]()], format: .binary, options: 0)
        #expect(throws: StoreError.self) { try StoreMetadata(plistData: noUUID) }

        let badHash = try PropertyListSerialization.data(
            fromPropertyList: ["NSStoreUUID": UUID().uuidString, "NSStoreModelVersionHashes": ["A": "text"]],
            format: .binary, options: 0)
        #expect(throws: StoreError.self) { try StoreMetadata(plistData: badHash) }
    }

    @Test func differencesNameEachEntity() throws {
        let v1 = try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld/Library.xcdatamodel"))
        let v2 = try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld"))
        let store = StoreMetadata(model: v1, uuid: UUID())
        let differences = store.differences(from: v2)
        #expect(differences.count == 6)  // Author and Book changed; Chapter, Item, Magazine, Shelf added
        #expect(differences.contains { $0.hasPrefix("entity 'Book' has changed") })
        #expect(differences.contains("entity 'Shelf' is in the model but not in the store"))

        let back = StoreMetadata(model: v2, uuid: UUID()).differences(from: v1)
        #expect(back.contains("entity 'Magazine' is in the store but not in the model"))
        #expect(store.differences(from: v1).isEmpty)
    }
}
