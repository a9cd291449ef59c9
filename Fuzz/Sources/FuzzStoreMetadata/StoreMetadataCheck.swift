import Foundation
@testable import OpenCoreData

// What this target checks, for any bytes given as a store's `Z_PLIST` (Core Data's metadata, a binary
// property list):
// - the property-list reader returns a value or throws its own `Failure`; it never traps, recurses without
//   bound or expands a small input into unbounded memory (libFuzzer's -rss_limit_mb catches that);
// - `StoreMetadata(plistData:)` returns metadata or throws a `StoreError`, never another error type;
// - metadata it returns writes back to a property list that reads back to the same hashes.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

func checkStoreMetadata(_ data: Data) {
    _ = try? BinaryPropertyListReader.read(data)
    let metadata: StoreMetadata
    do {
        metadata = try StoreMetadata(plistData: data, storePath: "fuzz input")
    } catch is StoreError {
        return
    } catch {
        fuzzFailure("StoreMetadata(plistData:) threw \(type(of: error)), not a StoreError: \(error)")
    }
    do {
        let again = try StoreMetadata(plistData: try metadata.plistData(), storePath: "fuzz round trip")
        if again.versionHashes != metadata.versionHashes {
            fuzzFailure("version hashes changed in a round trip")
        }
    } catch {
        fuzzFailure("metadata that was read cannot be written and read back: \(error)")
    }
}
