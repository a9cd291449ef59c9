import Foundation
@testable import OpenCoreData

// What this target checks, for any bytes given as the XML of a `.xcdatamodel`'s `contents` file:
// - `ManagedObjectModel(xmlData:source:)` returns a model or throws a `ModelError`; it never traps, overflows
//   the stack or throws another error type;
// - a model it returns is usable: its entities, properties and version hashes can be read, its store schema
//   can be mapped, and an in-memory SQLite store can be created for it (errors are fine, traps are not).
// A broken property calls `fuzzFailure`, which traps, so that libFuzzer saves the input as a crash.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

/// Known crashes outside this target's control are skipped so that fuzzing can look for others; set
/// OCD_FUZZ_KNOWN_CRASHES=1 to run them anyway (`scripts/fuzz.sh --known` does, on Fuzz/Crashes/).
let skipsKnownCrashes = ProcessInfo.processInfo.environment["OCD_FUZZ_KNOWN_CRASHES"] != "1"

/// Known crash 1 (docs/FUZZING.md): a processing instruction without data, such as `<?x?>` or `<?xml?>`,
/// makes libxml2 pass a NULL data pointer to FoundationXML's `_NSXMLParserProcessingInstruction`, which calls
/// `String(cString:)` on it (SIGSEGV in strlen) inside `XMLParser.parse()`, called by
/// `XcodeModelXMLNode.parse`. Matches `<?`, a run of bytes without whitespace, `?` or `>`, then `?>`.
func hasProcessingInstructionWithoutData(_ data: Data) -> Bool {
    let bytes = [UInt8](data)
    var index = 0
    while index + 1 < bytes.count {
        if bytes[index] == UInt8(ascii: "<") && bytes[index + 1] == UInt8(ascii: "?") {
            var end = index + 2
            while end < bytes.count, ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
                                       UInt8(ascii: "?"), UInt8(ascii: ">")].contains(bytes[end]) {
                end += 1
            }
            if end + 1 < bytes.count && bytes[end] == UInt8(ascii: "?") && bytes[end + 1] == UInt8(ascii: ">") {
                return true
            }
        }
        index += 1
    }
    return false
}

func checkModelXML(_ data: Data) {
    if skipsKnownCrashes && hasProcessingInstructionWithoutData(data) { return }
    let model: ManagedObjectModel
    do {
        model = try ManagedObjectModel(xmlData: data, source: "fuzz input")
    } catch is ModelError {
        return
    } catch {
        fuzzFailure("ManagedObjectModel(xmlData:) threw \(type(of: error)), not a ModelError: \(error)")
    }
    var touched = 0
    for entity in model.entities {
        touched &+= entity.versionHash.count
        touched &+= entity.allProperties.count &+ entity.allSubentities.count
        for attribute in entity.attributesByName.values {
            touched &+= attribute.versionHash.count
        }
        for relationship in entity.relationshipsByName.values {
            touched &+= relationship.versionHash.count &+ (relationship.inverseRelationship == nil ? 0 : 1)
        }
        touched &+= model.schema.mapping(for: entity).storage.count
    }
    _ = model.entityVersionHashesByName.count &+ touched
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    _ = try? coordinator.addPersistentStore(type: .inMemory)
    if skipsKnownCrashes { breakRetainCycles(in: model) }
}

/// Known issue 2 (docs/FUZZING.md): a loaded model with sub-entities or relationships is never freed, because
/// `EntityDescription.superentity` and `.subentities`, and `RelationshipDescription.destinationEntity` and
/// `.inverseRelationship`, are all strong references (about 5 KB per model); libFuzzer then stops on its
/// RSS limit after some two million inputs. Cutting the back references after the checks keeps long runs going.
func breakRetainCycles(in model: ManagedObjectModel) {
    for entity in model.entities {
        entity.superentity = nil
        entity.subentities = []
        for relationship in entity.relationshipsByName.values {
            relationship.inverseRelationship = nil
            relationship.destinationEntity = nil
        }
    }
}

/// libFuzzer's own entry point. Newer SwiftPM links `libclang_rt.fuzzer` whole, so libFuzzer's `main` (which
/// calls this) may be the one that runs instead of `main.swift`'s driver call; both end in the same check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    checkModelXML(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}
