import Foundation
import OpenCoreData

/// Finds the model to open a store with: the `--model` given, or else the compiled model the store carries
/// in `Z_MODELCACHE`, or else one of ocd's own models whose version hashes the store carries.
enum ModelLocator {
    static func load(modelPath: String) throws -> ManagedObjectModel {
        guard FileManager.default.fileExists(atPath: modelPath) else { throw OCDError("\(modelPath): no such model") }
        do {
            let url = URL(fileURLWithPath: modelPath)
            if ["mom", "momd"].contains(url.pathExtension.lowercased()) { return try ManagedObjectModel(compiledModelAt: url) }
            // A Core Data XML store describes its own entities: the model its objects make.
            if url.pathExtension.lowercased() == "xml" { return try ManagedObjectModel.derivedModel(ofXMLStoreAt: url) }
            return try ManagedObjectModel(contentsOf: url)
        } catch {
            throw OCDError("\(modelPath): \(error)")
        }
    }

    /// Loads `--model` numbered as the store at `storePath` numbers its entities (a store Core Data wrote may
    /// number them differently from ours); when the store's numbers do not fit the model, loads it as it is,
    /// so opening the store reports what differs.
    static func load(modelPath: String, numberedLike storePath: String) throws -> ManagedObjectModel {
        guard FileManager.default.fileExists(atPath: modelPath) else { throw OCDError("\(modelPath): no such model") }
        if URL(fileURLWithPath: modelPath).pathExtension.lowercased() == "xml" { return try load(modelPath: modelPath) }
        do {
            return try ManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath),
                                          numberedLikeStoreAt: URL(fileURLWithPath: storePath))
        } catch is StoreError {
            return try load(modelPath: modelPath)
        } catch ModelError.unusableEntityNumbers {
            return try load(modelPath: modelPath)
        } catch {
            throw OCDError("\(modelPath): \(error)")
        }
    }

    /// Opens `storePath` (read-only unless `readOnly` is false) with `--model`, or with whichever built-in
    /// model fits it.
    /// `watch` turns on remote-change notifications for the store.
    static func openFindingModel(storePath: String, modelPath: String?, watch: Bool = false, readOnly: Bool = true) throws
        -> (OpenedStore, modelName: String) {
        if let modelPath {
            let name = URL(fileURLWithPath: modelPath).lastPathComponent
            // A bundle: open the store with the version that wrote it (a read-only open never migrates).
            if URL(fileURLWithPath: modelPath).pathExtension.lowercased() == "xcdatamodeld",
               let bundle = try? ModelVersionBundle(contentsOf: URL(fileURLWithPath: modelPath)),
               let version = try? bundle.version(ofStoreAt: URL(fileURLWithPath: storePath)) {
                return (try OpenedStore.open(path: storePath, model: version.model, readOnly: readOnly, watch: watch),
                        "\(name), version '\(version.name)'\(version.isCurrent ? " (current)" : ", not the current '\(bundle.current.name)'")")
            }
            return (try OpenedStore.open(path: storePath, model: load(modelPath: modelPath, numberedLike: storePath),
                                         readOnly: readOnly, watch: watch), name)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: storePath, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw OCDError("\(storePath): no such file")
        }
        // An XML store describes its own entities.
        if URL(fileURLWithPath: storePath).pathExtension.lowercased() == "xml" {
            return (try OpenedStore.open(path: storePath, model: load(modelPath: storePath), readOnly: readOnly, watch: watch),
                    "the model its objects describe (XML store)")
        }
        // A store Core Data wrote carries its compiled model. Why it could not be used is kept: when no
        // built-in model fits either, that is the answer the user needs.
        var cacheFailure: String?
        do {
            if let cached = try ManagedObjectModel.cachedModel(ofStoreAt: URL(fileURLWithPath: storePath)) {
                return (try OpenedStore.open(path: storePath, model: cached, readOnly: readOnly, watch: watch),
                        "the store's model cache (Z_MODELCACHE)")
            }
        } catch {
            cacheFailure = "\(error)"
        }
        var lastError: Error?
        for (name, make) in [("ocd's to-do model", TodoModel.make), ("seed 004's FailedBanks model", BankModel.make)] {
            do {
                return (try OpenedStore.open(path: storePath, model: make(), readOnly: readOnly, watch: watch), name)
            } catch {
                lastError = error
            }
        }
        let reason = lastError.map { "\($0)" } ?? "unknown"
        if reason.contains("not a store") { throw OCDError(reason.replacingOccurrences(of: "cannot open ", with: "")) }
        if let cacheFailure {
            throw OCDError("\(storePath): the model the store carries (Z_MODELCACHE) does not open it: \(cacheFailure); pass --model <xcdatamodeld>")
        }
        throw OCDError("\(storePath) was not written by one of ocd's models; pass --model <xcdatamodeld>")
    }
}
