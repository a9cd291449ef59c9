import Foundation
import OpenCoreData

/// A model's identity for sync: the SHA-256 of its entities' version hashes (Core Data's own notion of when
/// two models store alike), as lowercase hex. Clients and a server agree on a model exactly when these agree.
public enum SyncModelFingerprint {
    /// The fingerprint of `model`.
    public static func of(_ model: ManagedObjectModel) -> String {
        var hasher = SHA256()
        for name in model.entityVersionHashesByName.keys.sorted() {
            hasher.update(Array(name.utf8))
            hasher.update([0])
            hasher.update(Array(model.entityVersionHashesByName[name] ?? Data()))
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
