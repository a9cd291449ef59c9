import Foundation

/// Every version of a `.xcdatamodeld` bundle, loaded by name, in version order.
///
/// A store remembers the version that wrote it only through its entity version hashes; this type finds
/// that version again (``version(ofStoreAt:)``), which is where a migration starts (docs/MIGRATION.md).
///
/// ```swift
/// let bundle = try ModelVersionBundle(contentsOf: url)
/// for version in bundle.versions { print(version.name, version.isCurrent) }
/// let written = try bundle.version(ofStoreAt: storeURL)?.name   // "Library", or nil
/// ```
public struct ModelVersionBundle: Sendable {
    /// The bundle.
    public let url: URL
    /// The versions in version order (numeric name order: "Model", "Model 2", …, "Model 10").
    public let versions: [ModelVersion]

    /// Loads every version of the bundle at `url`.
    ///
    /// - Throws: ``ModelError/malformedModelFile(path:reason:)`` when `url` is not a `.xcdatamodeld`
    ///   bundle with at least one version, and every ``ModelError`` loading one of its versions throws.
    public init(contentsOf url: URL) throws {
        guard url.pathExtension.lowercased() == "xcdatamodeld" else {
            throw ModelError.malformedModelFile(path: url.path, reason: "not a .xcdatamodeld bundle")
        }
        let current = XcodeModelLoader.versionName(try XcodeModelLoader.currentVersionURL(inBundle: url).lastPathComponent)
        self.url = url
        versions = try XcodeModelLoader.versionNames(inBundle: url).map { name in
            ModelVersion(name: name, isCurrent: name == current,
                         model: try ManagedObjectModel(versionFolder: url.appendingPathComponent(name + ".xcdatamodel"), bundle: url))
        }
    }

    /// The current version (the one `.xccurrentversion` names).
    public var current: ModelVersion { versions.first(where: \.isCurrent) ?? versions[versions.count - 1] }

    /// The version named `name` ("Library 2", with or without `.xcdatamodel`), if the bundle has it.
    public func version(named name: String) -> ModelVersion? {
        let wanted = XcodeModelLoader.versionName(name)
        return versions.first { $0.name == wanted }
    }

    /// The version named `name` ("Library 2", with or without `.xcdatamodel`), or the current one when `name`
    /// is nil: the target a migration is asked for.
    ///
    /// - Throws: ``ModelError/versionNotFound(bundle:version:available:)`` naming the bundle, `name` and the
    ///   versions it has, when it has no such version.
    public func version(namedOrCurrent name: String?) throws -> ModelVersion {
        guard let name else { return current }
        guard let found = version(named: name) else {
            throw ModelError.versionNotFound(bundle: url.path, version: name, available: versions.map(\.name))
        }
        return found
    }

    /// The version whose entity hashes are exactly `hashes`, nil when none does. When several versions
    /// hash alike (they open the same stores), the last one not after the current version: a store such
    /// a version wrote opens with the current one, and is never taken for one written by a later version
    /// (which would refuse it as newer); the last one when all come after.
    public func version(withHashes hashes: [String: Data]) -> ModelVersion? {
        version(withHashes: hashes, notAfter: current.name)
    }

    /// The version whose entity hashes are exactly `hashes`; when several versions hash alike, the last
    /// one not after the version named `target` (the version a migration goes to), else the last one.
    public func version(withHashes hashes: [String: Data], notAfter target: String) -> ModelVersion? {
        let matching = versions.indices.filter { versions[$0].wrote(versionHashes: hashes) }
        guard let targetIndex = versions.firstIndex(where: { $0.name == XcodeModelLoader.versionName(target) }),
              let notAfter = matching.last(where: { $0 <= targetIndex }) else { return matching.last.map { versions[$0] } }
        return versions[notAfter]
    }

    /// The version that wrote the store at `storeURL`, read from its metadata without changing the file;
    /// nil when no version of the bundle has the store's hashes.
    ///
    /// - Throws: ``StoreError`` when the file is not a readable store.
    public func version(ofStoreAt storeURL: URL) throws -> ModelVersion? {
        version(withHashes: try StoreMetadata.read(storeAt: storeURL.path).versionHashes)
    }

    /// The version that wrote the store at `storeURL`, as ``version(ofStoreAt:)`` finds it, but among
    /// versions that hash alike the last one not after the version named `target`.
    ///
    /// - Throws: ``StoreError`` when the file is not a readable store.
    public func version(ofStoreAt storeURL: URL, notAfter target: String) throws -> ModelVersion? {
        version(withHashes: try StoreMetadata.read(storeAt: storeURL.path).versionHashes, notAfter: target)
    }
}
