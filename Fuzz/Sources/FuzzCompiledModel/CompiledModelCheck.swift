import Foundation
@testable import OpenCoreData

// What this target checks, for any bytes given as a compiled model (`.mom`, an `NSKeyedArchiver` archive):
// - the keyed-archive reader opens it or throws its own `Failure`, and walking every object's fields, strings
//   and collections never traps, never recurses without bound, never expands without bound;
// - `ManagedObjectModel(compiledModelData:source:)` returns a model or throws a `ModelError`, never another
//   error type; a model it returns has version hashes and a store schema.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

func checkCompiledModel(_ data: Data) {
    if let archive = try? KeyedArchive(data: data), let root = try? archive.topObject() {
        // Walk the graph one reference at a time, as the loaders do, visiting each object once.
        var seen: Set<Int> = [root.index]
        var pending = [root]
        while let next = pending.popLast(), seen.count < 100_000 {
            guard let instance = try? archive.instance(next) else {
                _ = try? archive.resolved(next)
                continue
            }
            for key in instance.fields.keys {
                guard let reference = try? archive.reference(key, of: next) else { continue }
                _ = try? archive.string(reference)
                for element in (try? archive.elements(reference)) ?? [] where seen.insert(element.index).inserted {
                    pending.append(element)
                }
                if seen.insert(reference.index).inserted { pending.append(reference) }
            }
        }
    }
    let model: ManagedObjectModel
    do {
        model = try ManagedObjectModel(compiledModelData: data, source: "fuzz input")
    } catch is ModelError {
        return
    } catch {
        fuzzFailure("ManagedObjectModel(compiledModelData:) threw \(type(of: error)), not a ModelError: \(error)")
    }
    var touched = model.entityVersionHashesByName.count
    for entity in model.entities { touched &+= model.schema.mapping(for: entity).storage.count }
    _ = touched
}
