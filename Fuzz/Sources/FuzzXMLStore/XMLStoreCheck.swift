import Foundation
@testable import OpenCoreData

// What this target checks, for any bytes given as a Core Data XML store file:
// - opening it as a store, with the model its objects describe, either succeeds or throws an `XMLStoreError`;
//   it never traps, overflows the stack, reads another file or throws another error type;
// - a store that opened is written as a new XML file that opens again, with as many objects.
// A broken property calls `fuzzFailure`, which traps, so that libFuzzer saves the input as a crash.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

/// Where each input is written to be opened (one folder for the whole run).
let folder: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-fuzz-xml-\(ProcessInfo.processInfo.processIdentifier)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}()

/// The objects of the XML store `data` holds, and the file that store writes of them.
func openAndWriteBack(_ data: Data, name: String) throws -> (objects: Int, written: Data) {
    let source = folder.appendingPathComponent("\(name).xml")
    let copy = folder.appendingPathComponent("\(name)-copy.xml")
    try? FileManager.default.removeItem(at: copy)
    try data.write(to: source)
    let model = try ManagedObjectModel.derivedModel(ofXMLStoreAt: source)
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    let store = try coordinator.addPersistentStore(type: .xml, at: source, options: StoreOptions(readOnly: true))
    let context = ManagedObjectContext(concurrencyType: .confinement)
    context.persistentStoreCoordinator = coordinator
    var objects = 0
    for entity in model.entities {
        let request = FetchRequest<ManagedObject>(entityName: entity.name)
        request.includesSubentities = false
        objects += try context.count(for: request)
    }
    try SQLiteStore.copyContents(of: store, model: model, toNewStoreAt: copy, type: .xml)
    return (objects, try Data(contentsOf: copy))
}

func checkXMLStore(_ data: Data) {
    let first: (objects: Int, written: Data)
    do {
        first = try openAndWriteBack(data, name: "input")
    } catch is XMLStoreError {
        return
    } catch {
        fuzzFailure("opening threw \(type(of: error)), not an XMLStoreError: \(error)")
    }
    do {
        let again = try openAndWriteBack(first.written, name: "written")
        guard again.objects == first.objects else {
            fuzzFailure("\(first.objects) objects read, \(again.objects) after writing them back")
        }
    } catch {
        fuzzFailure("a file written from a store that opened does not open again: \(error)")
    }
}
