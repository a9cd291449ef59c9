import Foundation
import Testing
@testable import OpenCoreData

/// A value kept in an `_EXTERNAL_DATA` file is read when it is asked for, not with its row: a fetch checks
/// that the file is there (a missing file or a FIFO is still reported by the fetch, naming the row) but
/// neither reads nor holds its bytes; reading the attribute reads the file as it is then, and a file gone
/// since the fetch is a typed error naming the row.
@Suite struct ExternalBinaryStorageDeferredReadTests {
    typealias Base = ExternalBinaryStorageTests

    /// Photos "p0"… whose images all refer to one file of `size` bytes (written sparse), whose name is
    /// returned.
    static func photosSharingOneFile(_ stack: TestStack, count: Int, size: Int) throws -> String {
        let name = UUID().uuidString.uppercased()
        try FileManager.default.createDirectory(at: Base.folder(stack), withIntermediateDirectories: true)
        let path = Base.folder(stack).appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, off_t(size)) == 0)
        for index in 0..<count { try Base.write(stack, Base.reference(name), of: "p\(index)") }
        return name
    }

    /// The process's resident memory in bytes, from /proc (0 where there is none).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// 30 rows referring to one 64 MB file: fetching them and reading every name reads none of it (eagerly
    /// it took 30 × 64 MB); reading one image gives the whole file.
    @Test func aFetchDoesNotReadValuesNobodyAsksFor() throws {
        let size = 64 << 20
        let stack = try Base.stack(names: (0..<30).map { "p\($0)" })
        _ = try Self.photosSharingOneFile(stack, count: 30, size: size)
        let context = try Base.freshContext(stack)
        let before = Self.residentBytes()
        for batchSize in [0, 8] {
            let photos = try Base.photos(context, batchSize: batchSize)
            let names = try photos.map { try $0.value(forKey: "name") as? String }
            #expect(names.count == 30)
        }
        let grown = Self.residentBytes() - before
        #expect(grown < 512 << 20, "resident memory grew by \(grown >> 20) MB for 30 names")
        let photo = try #require(try Base.photos(context).first)
        let image = try #require(try photo.value(forKey: "image") as? Data)
        #expect(image.count == size && image.allSatisfy { $0 == 0 })
    }

    /// The file is read when the value is asked for: replaced after the fetch, the new bytes come back; gone
    /// after the fetch, the read is a typed error naming the row, while the row's other values still read.
    @Test func theFileIsReadWhenTheValueIsAskedFor() throws {
        let stack = try Base.stack(names: ["p0", "p1"])
        let name = try Self.photosSharingOneFile(stack, count: 2, size: 200_000)
        let file = Base.folder(stack).appendingPathComponent(name)
        let context = try Base.freshContext(stack)
        let photos = try Base.photos(context)
        let replacement = Base.bytes(150_000, seed: 9)
        try replacement.write(to: file)
        #expect(try photos[0].value(forKey: "image") as? Data == replacement)
        try FileManager.default.removeItem(at: file)
        #expect { try photos[1].value(forKey: "image") } throws: { error in
            guard case StoreError.unreadableExternalData(_, "Photo", "image", let key, let reason)? = error as? StoreError else { return false }
            return key > 0 && reason.contains("missing")
        }
        #expect(try photos[1].value(forKey: "name") as? String == "p1")
        #expect(try photos[1].committedValues(forKeys: ["name"])["name"] as? String == "p1")
    }

    /// A row whose file is missing at fetch time is still reported by the fetch, as before.
    @Test func aFileMissingAtFetchTimeFailsTheFetch() throws {
        let stack = try Base.stack(names: ["p0"])
        let name = try Self.photosSharingOneFile(stack, count: 1, size: 10)
        try FileManager.default.removeItem(at: Base.folder(stack).appendingPathComponent(name))
        #expect(throws: StoreError.self) { try Base.photos(Base.freshContext(stack)) }
    }

    /// A value read later, after the object's row was copied into a block of its own by an edit of another
    /// attribute, reads the file and saves without touching it.
    @Test func anEditOfAnotherAttributeKeepsTheValueAndItsFile() throws {
        let stack = try Base.stack(names: ["p0"])
        let name = try Self.photosSharingOneFile(stack, count: 1, size: 200_000)
        let context = try Base.freshContext(stack)
        let photo = try #require(try Base.photos(context).first)
        try photo.setValue("renamed", forKey: "name")
        try context.save()
        #expect(try photo.value(forKey: "image") as? Data == Data(count: 200_000))
        let again = try #require(try Base.photos(Base.freshContext(stack)).first)
        #expect(try again.value(forKey: "name") as? String == "renamed")
        #expect(try again.value(forKey: "image") as? Data == Data(count: 200_000))
        #expect(Base.files(stack) == [name])
    }
}
