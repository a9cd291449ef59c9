import Foundation

/// One version of a `.xcdatamodeld` bundle: its name, whether it is the bundle's current version, and
/// the loaded model.
public struct ModelVersion: Sendable {
    /// The version's name: the `.xcdatamodel` folder's name without the extension ("Library 2").
    public let name: String
    /// Whether `.xccurrentversion` names this version (or, without the marker, it is the last one).
    public let isCurrent: Bool
    /// The model of this version.
    public let model: ManagedObjectModel

    /// A short digest of the version's entity hashes (the first 8 hex digits of a SHA-256 over the entity
    /// names and hashes in name order): two versions with the same digest open the same stores.
    public var hashDigest: String {
        var hasher = SHA256()
        for (name, digest) in model.entityVersionHashesByName.sorted(by: { $0.key < $1.key }) {
            hasher.update(Array(name.utf8))
            hasher.update(Array(digest))
        }
        return hasher.finalize().prefix(4).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether a store whose metadata holds `hashes` was written with this version.
    public func wrote(versionHashes hashes: [String: Data]) -> Bool {
        model.entityVersionHashesByName == hashes
    }
}
