import Foundation
import Testing
@testable import OpenCoreData
#if canImport(Darwin)
import Darwin
#else
/// glibc's, declared in <malloc.h>, which the Glibc module does not export.
@_silgen_name("malloc_usable_size")
private func malloc_usable_size(_ pointer: UnsafeMutableRawPointer?) -> Int
#endif

/// A fetched object's allocation: what every object of a large fetch costs, so a field added without
/// thought (or a layout change that loses the flags' place in the ID's padding) shows here.
@Suite struct ManagedObjectSizeTests {
    private func usableSize(_ object: AnyObject) -> Int {
        let pointer = Unmanaged.passUnretained(object).toOpaque()
        #if canImport(Darwin)
        return malloc_size(pointer)
        #else
        return malloc_usable_size(pointer)
        #endif
    }

    @Test func aFetchedObjectFitsA96ByteChunk() throws {
        let stack = try TestStack(model: TestModels.todo(), inMemory: true)
        let writer = stack.context()
        try writer.insertNewObject(forEntityName: "Item").setValue("Milk", forKey: "name")
        try writer.save()
        let object = try #require(try stack.context().fetch(FetchRequest<ManagedObject>(entityName: "Item")).first)
        #expect(try object.value(forKey: "name") as? String == "Milk")
        // glibc reports a chunk's size less its 8-byte header; Darwin's malloc rounds to 16 bytes.
        #expect(usableSize(object) <= 96, "a fetched object now takes \(usableSize(object)) bytes")
    }
}
