import Foundation
import Testing
@testable import OpenCoreData

/// Classes the model files below name.
final class Person: ManagedObject {
    @Managed("name") var name: String?
}
final class Gadget: ManagedObject {
    @Managed("name") var name: String?
}
final class Widget: ManagedObject {
    @Managed("name") var name: String?
}

/// `representedClassName` in a model file binds the entity to the program's class, as Core Data does.
@Suite struct ModelFileClassTests {
    /// A one-entity model file (`Person`, with a `name`) naming `className`, loaded.
    static func model(className: String, entityName: String = "Person") throws -> ManagedObjectModel {
        let directory = TemporaryDirectory()
        let folder = directory.file("Model.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
                <entity name="\(entityName)" representedClassName="\(className)" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                </entity>
            </model>
            """.utf8).write(to: folder.appendingPathComponent("contents"))
        return try ManagedObjectModel(contentsOf: folder)
    }

    @Test func aModuleQualifiedClassNameBindsTheClass() throws {
        let stack = try TestStack(model: Self.model(className: "OpenCoreDataTests.Person"))
        let context = stack.context()
        #expect(stack.model.entitiesByName["Person"]?.managedObjectClass == Person.self)
        #expect(try context.fetch(FetchRequest<Person>()).isEmpty)
        let inserted = try context.insertNewObject(forEntityName: "Person")
        let person = try #require(inserted as? Person)
        person.name = "Ada"
        try context.save()
        let fetched = try stack.context().fetch(FetchRequest<Person>())
        #expect(fetched.map(\.name) == ["Ada"])
    }

    /// An entity whose class cannot be found is a plain `ManagedObject`; a typed fetch for another class
    /// refuses alike on an empty table and on a full one, naming the entity and the class.
    @Test func aTypedFetchOfAnUnboundEntityRefusesEmptyOrNot() throws {
        let stack = try TestStack(model: Self.model(className: "NoSuchModule.Nobody"))
        let context = stack.context()
        #expect(stack.model.entitiesByName["Person"]?.managedObjectClass == ManagedObject.self)
        #expect(throws: ObjectGraphError.self) { try context.fetch(FetchRequest<Person>()) }
        try context.insertNewObject(forEntityName: "Person").setValue("Ada", forKey: "name")
        try context.save()
        #expect(throws: ObjectGraphError.self) { try context.fetch(FetchRequest<Person>()) }
        #expect(try context.fetch(FetchRequest<ManagedObject>(entityName: "Person")).count == 1)
    }

    /// Xcode's "Current Product Module" form, `.Gadget`, found in a module the program lists.
    @Test func theCurrentModuleFormIsFoundInTheListedModules() throws {
        let saved = ManagedObjectClassRegistry.searchModules
        defer { ManagedObjectClassRegistry.searchModules = saved }
        ManagedObjectClassRegistry.searchModules = saved + ["OpenCoreDataTests"]
        let model = try Self.model(className: ".Gadget", entityName: "Gadget")
        #expect(model.entitiesByName["Gadget"]?.managedObjectClass == Gadget.self)
    }

    /// A class the runtime cannot find by the file's name is registered, here for its entity.
    @Test func aRegisteredClassIsBoundAndWorksLikeOneGivenInCode() throws {
        ManagedObjectClassRegistry.register(Widget.self, forEntityName: "Thing")
        let stack = try TestStack(model: Self.model(className: "SomeApp.Thing", entityName: "Thing"))
        #expect(stack.model.entitiesByName["Thing"]?.managedObjectClass == Widget.self)
        #expect(Widget.entityName == "Thing")
        #expect(try Widget.entity() === stack.model.entitiesByName["Thing"])
        let context = stack.context()
        let first = try Widget(context: context)
        first.name = "b"
        let second = try context.insertNew(Widget.self)
        second.name = "a"
        try context.save()

        let reader = stack.context()
        let request = Widget.fetchRequest()
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        #expect(try reader.fetch(request).map(\.name) == ["a", "b"])
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: reader,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        #expect(try controller.object(at: IndexPath(item: 1, section: 0)).name == "b")
    }

    @Test func theProgramsModuleIsNamedAfterItsExecutable() {
        #expect(ManagedObjectClassRegistry.moduleName(forExecutable: "/usr/local/bin/ocd-bench") == "ocd_bench")
        #expect(ManagedObjectClassRegistry.moduleName(forExecutable: ".build/debug/MyApp") == "MyApp")
        #expect(ManagedObjectClassRegistry.moduleName(forExecutable: "/x/OpenCoreDataPackageTests.xctest") == "OpenCoreDataPackageTests")
    }
}
