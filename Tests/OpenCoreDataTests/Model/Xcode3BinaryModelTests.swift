import Foundation
import Testing
@testable import OpenCoreData

/// Xcode 3's binary `.xcdatamodel` (`elements` and `layout`, no `contents`) is not publicly documented, so it
/// is refused by name with the way to convert it, wherever a model folder is read.
@Suite struct Xcode3BinaryModelTests {
    /// A `.xcdatamodel` folder as Xcode 3 left it: a keyed archive in `elements`, the diagram in `layout`.
    private func xcode3Folder(named name: String, in folder: URL) throws -> URL {
        let model = folder.appendingPathComponent("\(name).xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let elements = KeyedArchiveWriter.Instance(classNames: ["XDDevModel"], fields: ["entities": ["Book", "Author"]])
        try KeyedArchiveWriter.archive(elements).write(to: model.appendingPathComponent("elements"))
        try KeyedArchiveWriter.archive(["diagram": "boxes"]).write(to: model.appendingPathComponent("layout"))
        return model
    }

    private func expectXcode3Error(_ body: () throws -> Void, folder: URL) {
        #expect {
            try body()
        } throws: { error in
            guard case ModelError.xcode3BinaryModel(let named)? = error as? ModelError else { return false }
            let message = "\(error)"
            return named == folder.path && message.contains(folder.path) && message.contains("Xcode 3")
                && message.contains("momc") && message.contains("Xcode 4.1")
        }
    }

    @Test func aFolderInXcode3sBinaryFormIsRefusedByNameWithTheWayToConvertIt() throws {
        let directory = TemporaryDirectory()
        let folder = try xcode3Folder(named: "Recipes", in: directory.url)
        let before = try Data(contentsOf: folder.appendingPathComponent("elements"))
        expectXcode3Error({ _ = try ManagedObjectModel(contentsOf: folder) }, folder: folder)
        #expect(try Data(contentsOf: folder.appendingPathComponent("elements")) == before, "reading changes nothing")

        // A folder with neither file is still a missing `contents` file.
        let empty = directory.file("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(throws: ModelError.malformedModelFile(path: empty.path, reason: "the folder has no 'contents' file")) {
            try ManagedObjectModel(contentsOf: empty)
        }
    }

    /// A version bundle whose current version (or any version, for the whole bundle) is in the old form.
    @Test func aBundleVersionInXcode3sBinaryFormIsRefusedByName() throws {
        let directory = TemporaryDirectory()
        let bundle = directory.file("Recipes.xcdatamodeld")
        let old = try xcode3Folder(named: "Recipes", in: bundle)
        expectXcode3Error({ _ = try ManagedObjectModel(contentsOf: bundle) }, folder: old)
        expectXcode3Error({ _ = try ModelVersionBundle(contentsOf: bundle) }, folder: old)
    }

    /// `ocd model convert` reports the same, and writes nothing.
    @Test func theToolSaysHowToConvertIt() throws {
        guard let binary = OcdBinary.url else { return }
        let directory = TemporaryDirectory()
        let folder = try xcode3Folder(named: "Recipes", in: directory.url)
        let output = directory.file("Out.xcdatamodeld")
        let convert = try OcdBinary.run(["model", "convert", folder.path, "--output", output.path], binary: binary)
        #expect(convert.status != 0)
        #expect(convert.stderr.contains("Xcode 3") && convert.stderr.contains(folder.path), "\(convert.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
