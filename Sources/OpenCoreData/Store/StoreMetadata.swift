import Foundation

/// The store's metadata: Core Data's `Z_METADATA` row and the binary property list in its `Z_PLIST`.
///
/// The version hashes in it are how a store recognises the model it was written with: opening a store
/// compares them with the model's (``differences(from:)``) and refuses a mismatch. Keys follow
/// docs/INTEROP.md; reading tolerates keys we do not write (checksums, Apple's later additions) and the
/// absence of the optional ones.
///
/// ```swift
/// let metadata = StoreMetadata(model: model, uuid: UUID())
/// // INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (?, ?, ?)
/// let row: [Any] = [StoreMetadata.rowVersion, metadata.uuidString, try metadata.plistData()]
///
/// let read = try StoreMetadata(plistData: plistBlob, rowUUID: uuidColumn)
/// let problems = read.differences(from: model)   // [] when the store fits the model
/// ```
package struct StoreMetadata: Sendable, Equatable {
    /// `Z_VERSION` of the one metadata row.
    package static let rowVersion = 1
    /// The `NSStoreModelVersionHashesVersion` Core Data has written since macOS 10.6 (SHA-256 hashes).
    static let currentHashesVersion = 3
    /// Our `NSPersistenceFrameworkVersion`. Core Data writes its own build number here; the value is
    /// informational (no version check uses it), so OpenCoreData writes a fixed number of its own choosing.
    static let frameworkVersion = 1414
    /// `_NSAutoVacuumLevel` as Core Data writes it: the string "2" (SQLite's incremental auto-vacuum).
    static let autoVacuumLevel = "2"

    enum Key {
        static let storeType = "NSStoreType"
        static let storeUUID = "NSStoreUUID"
        static let versionHashes = "NSStoreModelVersionHashes"
        static let versionHashesVersion = "NSStoreModelVersionHashesVersion"
        static let versionIdentifiers = "NSStoreModelVersionIdentifiers"
        static let frameworkVersion = "NSPersistenceFrameworkVersion"
        static let maximumFrameworkVersion = "NSPersistenceMaximumFrameworkVersion"
        static let autoVacuumLevel = "_NSAutoVacuumLevel"
        /// Ours: the store keeps external binary storage values in Core Data's marked form
        /// (docs/INTEROP.md). Every store this library creates carries it; Core Data ignores it.
        static let externalDataMarked = "_OCDExternalDataMarked"
        /// Every key this library has written.
        static let written: Set<String> = [storeType, storeUUID, versionHashes, versionHashesVersion, versionIdentifiers,
                                           frameworkVersion, autoVacuumLevel, externalDataMarked]
    }

    /// `NSStoreType`: "SQLite" for the stores we write.
    package var storeType: String
    /// `NSStoreUUID` (and `Z_UUID`): the store's identity, part of every object ID's URI.
    var storeUUID: UUID
    /// `NSStoreModelVersionHashes`: each entity's 32-byte version hash.
    package var versionHashes: [String: Data]
    /// `NSStoreModelVersionHashesVersion` (3), if present.
    var versionHashesVersion: Int?
    /// `NSStoreModelVersionIdentifiers`: the model's identifiers, `[""]` for a model without one.
    var versionIdentifiers: [String]
    /// `NSPersistenceFrameworkVersion` of whoever last wrote the metadata, if present.
    var frameworkVersion: Int?
    /// `_NSAutoVacuumLevel`, if present (Core Data writes a string; a number is accepted too).
    var autoVacuumLevel: String?
    /// `NSPersistenceMaximumFrameworkVersion`, if present: the newest Core Data that opened the store.
    /// Read only (one of ``otherKeys``); this library never writes it.
    var maximumFrameworkVersion: Int?
    /// `_OCDExternalDataMarked`: true in every store this library created since it keeps external binary
    /// storage values in Core Data's marked form.
    var externalDataMarked: Bool
    /// The keys of the property list that this library never writes (Core Data's checksums, maximum
    /// framework version, an app's own keys), sorted. Read only; not written back.
    var otherKeys: [String] = []

    /// `Z_UUID`: the store UUID as an uppercase string, as Core Data writes it.
    package var uuidString: String { storeUUID.uuidString.uppercased() }

    /// Metadata for a new store of `model`.
    package init(model: ManagedObjectModel, uuid: UUID = UUID()) {
        storeType = "SQLite"
        storeUUID = uuid
        versionHashes = model.entityVersionHashesByName
        versionHashesVersion = Self.currentHashesVersion
        versionIdentifiers = model.versionIdentifiers.isEmpty ? [""] : model.versionIdentifiers
        frameworkVersion = Self.frameworkVersion
        autoVacuumLevel = Self.autoVacuumLevel
        externalDataMarked = true
    }

    /// The binary property list for `Z_PLIST`.
    package func plistData() throws -> Data {
        var plist: [String: Any] = [
            Key.storeType: storeType,
            Key.storeUUID: uuidString,
            Key.versionHashes: versionHashes,
            Key.versionIdentifiers: versionIdentifiers,
        ]
        if let versionHashesVersion { plist[Key.versionHashesVersion] = versionHashesVersion }
        if let frameworkVersion { plist[Key.frameworkVersion] = frameworkVersion }
        if let autoVacuumLevel { plist[Key.autoVacuumLevel] = autoVacuumLevel }
        if externalDataMarked { plist[Key.externalDataMarked] = true }
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }

    /// Reads a `Z_PLIST` blob (a binary property list, as Core Data writes). `rowUUID` is the row's
    /// `Z_UUID`, used when the plist lacks `NSStoreUUID`; `storePath` names the store in errors.
    ///
    /// Throws ``StoreError/corrupt(path:reason:)`` when the data is not a binary property list
    /// dictionary, or lacks the version hashes or a readable store UUID.
    package init(plistData: Data, rowUUID: String? = nil, storePath: String = "Z_METADATA") throws {
        func corrupt(_ reason: String) -> StoreError { .corrupt(path: storePath, reason: "metadata \(reason)") }
        let root: PropertyListValue
        do {
            root = try BinaryPropertyListReader.read(plistData)
        } catch let failure as BinaryPropertyListReader.Failure {
            throw corrupt("is not a readable binary property list (\(failure.reason))")
        }
        guard let plist = root.dictionary else { throw corrupt("is not a dictionary") }

        storeType = plist[Key.storeType]?.string ?? "SQLite"

        guard let uuidText = plist[Key.storeUUID]?.string ?? rowUUID, let uuid = UUID(uuidString: uuidText) else {
            throw corrupt("has no readable store UUID")
        }
        storeUUID = uuid

        guard let hashes = plist[Key.versionHashes]?.dictionary else {
            throw corrupt("has no \(Key.versionHashes) dictionary")
        }
        var versionHashes: [String: Data] = [:]
        for (entity, value) in hashes {
            guard let digest = value.data else { throw corrupt("has a non-data version hash for '\(entity)'") }
            versionHashes[entity] = digest
        }
        self.versionHashes = versionHashes

        versionHashesVersion = plist[Key.versionHashesVersion]?.integer.flatMap { Int(exactly: $0) }
        versionIdentifiers = plist[Key.versionIdentifiers]?.array?.compactMap(\.string) ?? []
        frameworkVersion = plist[Key.frameworkVersion]?.integer.flatMap { Int(exactly: $0) }
        autoVacuumLevel = plist[Key.autoVacuumLevel].flatMap { value in
            value.string ?? value.integer.map { String($0) }
        }
        externalDataMarked = plist[Key.externalDataMarked] == .boolean(true)
        maximumFrameworkVersion = plist[Key.maximumFrameworkVersion]?.integer.flatMap { Int(exactly: $0) }
        otherKeys = plist.keys.filter { !Key.written.contains($0) }.sorted()
    }

    /// Whether this library wrote the store before it kept external binary storage values marked: our
    /// framework version, only keys we write, and not the flag. Core Data writes keys we never wrote
    /// (`NSPersistenceMaximumFrameworkVersion`, `NSStoreModelVersionHashesDigest`,
    /// `NSStoreModelVersionChecksumKey`) in stores of framework versions well below ours, so a store it
    /// wrote with our number would carry them and never match.
    var mayHoldUnmarkedExternalData: Bool {
        !externalDataMarked && frameworkVersion == Self.frameworkVersion && otherKeys.isEmpty
    }

    /// What differs between the store's entities and the model's, one readable line per entity, in name
    /// order; empty when the store fits the model.
    package func differences(from model: ManagedObjectModel) -> [String] {
        let modelHashes = model.entityVersionHashesByName
        let names = Set(modelHashes.keys).union(versionHashes.keys).sorted()
        return names.compactMap { name in
            switch (versionHashes[name], modelHashes[name]) {
            case (nil, _?): return "entity '\(name)' is in the model but not in the store"
            case (_?, nil): return "entity '\(name)' is in the store but not in the model"
            case let (stored?, current?) where stored != current:
                return "entity '\(name)' has changed (store hash \(Self.shortHex(stored)), "
                    + "model hash \(Self.shortHex(current)))"
            default: return nil
            }
        }
    }

    // MARK: Helpers

    private static func shortHex(_ data: Data) -> String {
        data.prefix(6).map { String(format: "%02x", $0) }.joined() + "…"
    }
}
