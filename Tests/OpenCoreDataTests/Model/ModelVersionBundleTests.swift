import Foundation
import Testing
@testable import OpenCoreData

/// Which version of a bundle wrote a store, when several versions hash alike.
@Suite struct ModelVersionBundleTests {
    static let first = #"<model><entity name="E"><attribute name="a" optional="YES" attributeType="String"/></entity></model>"#
    static let second = #"<model><entity name="E"><attribute name="a" optional="YES" attributeType="String"/><attribute name="b" optional="YES" attributeType="String"/></entity></model>"#

    /// `E`, `E 2`, `E 3` with `E 3` equal to `E`, and `current` the current version.
    static func bundle(in directory: TemporaryDirectory, current: String) throws -> URL {
        let bundle = directory.file("E.xcdatamodeld")
        for (name, xml) in [("E", first), ("E 2", second), ("E 3", first)] {
            let version = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try Data(xml.utf8).write(to: version.appendingPathComponent("contents"))
        }
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(current).xcdatamodel</string></dict></plist>
            """.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    @Test func aStoreOfAVersionEqualToALaterOneIsTakenForTheOneNotAfterTheCurrent() throws {
        let directory = TemporaryDirectory()
        let url = try Self.bundle(in: directory, current: "E 2")
        let store = directory.file("E.sqlite")
        let writer = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: url, version: "E"))
        try writer.addPersistentStore(type: .sqlite, at: store)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = writer
        try context.insertNewObject(forEntityName: "E").setValue("kept", forKey: "a")
        try context.save()
        writer.persistentStores.forEach(writer.remove)

        let bundle = try ModelVersionBundle(contentsOf: url)
        #expect(try bundle.version(ofStoreAt: store)?.name == "E")
        #expect(try bundle.version(ofStoreAt: store, notAfter: "E 3")?.name == "E 3")
        // The current version opens it, migrating E → E 2.
        let reader = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: url))
        try reader.addPersistentStore(type: .sqlite, at: store)
        let readContext = ManagedObjectContext(concurrencyType: .confinement)
        readContext.persistentStoreCoordinator = reader
        let objects = try readContext.fetch(FetchRequest<ManagedObject>(entityName: "E"))
        #expect(try objects.map { try $0.value(forKey: "a") as? String } == ["kept"])
    }
}
