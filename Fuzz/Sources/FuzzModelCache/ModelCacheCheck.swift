import Foundation
@testable import OpenCoreData

// What this target checks, for any bytes given as a store's `Z_MODELCACHE.Z_CONTENT` (Core Data's model cache:
// raw DEFLATE, or zlib-wrapped, of a compiled model's `NSKeyedArchiver` archive):
// - decompressing it returns at most `StoreModelCache.maximumModelSize` bytes or throws a `StoreError` naming
//   the problem; a DEFLATE bomb is refused at that limit, never expanded further (libFuzzer's -rss_limit_mb and
//   -timeout catch a decoder that tries);
// - `StoreModelCache.model(fromContent:path:storeNumbers:)` returns a model or throws a `StoreError` or a
//   `ModelError`, never another error type, with and without store numbers; archives whose objects refer to
//   each other in cycles are walked or refused, never recursed into without bound;
// - a model it returns has version hashes and a store schema.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

/// Store numbers that fit the usual two-entity seeds, and some that fit nothing, so both the numbered path and
/// its fallback (`ModelError.unusableEntityNumbers`, retried without numbers) run.
private let storeNumbers: [[String: Int]?] = [nil, ["Author": 2, "Book": 1, "Novel": 3], ["Author": 1, "Book": 1]]

func checkModelCache(_ data: Data) {
    do {
        let archive = try StoreModelCache.archive(fromContent: data, path: "fuzz input")
        if archive.count > StoreModelCache.maximumModelSize {
            fuzzFailure("decompressed to \(archive.count) bytes, past the \(StoreModelCache.maximumModelSize) limit")
        }
    } catch is StoreError {
        // Refused (damaged, or past the limit): the model cannot load either, checked below all the same.
    } catch {
        fuzzFailure("StoreModelCache.archive(fromContent:) threw \(type(of: error)), not a StoreError: \(error)")
    }
    // The input picks one set of numbers, so the corpus keeps inputs for each path without tripling the work.
    let numbers = storeNumbers[data.count % storeNumbers.count]
    let model: ManagedObjectModel
    do {
        model = try StoreModelCache.model(fromContent: data, path: "fuzz input", storeNumbers: numbers)
    } catch is StoreError {
        return
    } catch is ModelError {
        return
    } catch {
        fuzzFailure("StoreModelCache.model(fromContent:) threw \(type(of: error)), not a StoreError or ModelError: \(error)")
    }
    var touched = model.entityVersionHashesByName.count
    for entity in model.entities { touched &+= model.schema.mapping(for: entity).storage.count }
    _ = touched
}

/// libFuzzer's own entry point. Newer SwiftPM links `libclang_rt.fuzzer` whole, so libFuzzer's `main` (which
/// calls this) may be the one that runs instead of `main.swift`'s driver call; both end in the same check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    checkModelCache(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}
