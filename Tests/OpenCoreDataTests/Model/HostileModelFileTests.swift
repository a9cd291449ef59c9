import Foundation
import Testing
@testable import OpenCoreData

/// Model files that used to exhaust the stack or take minutes to load (issue 30): each is refused with a
/// `ModelError` naming the file, or loads in work linear in its size.
@Suite struct HostileModelFileTests {
    @Test func xmlNestedThirtyThousandLevelsIsRefused() throws {
        let xml = "<model>" + String(repeating: "<a>", count: 30_000) + String(repeating: "</a>", count: 30_000) + "</model>"
        do {
            _ = try ManagedObjectModel(xmlData: Data(xml.utf8), source: "deep.xml")
            Issue.record("a model nested 30,000 levels deep must be refused")
        } catch let error as ModelError {
            guard case .malformedModelFile(let path, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == "deep.xml")
            #expect(reason.contains("nested deeper than \(XcodeModelXMLNode.maximumDepth) levels"), "\(reason)")
        }
        // Xcode's own depth is far inside the cap.
        let usual = #"<model><entity name="A"><attribute name="x" attributeType="String"><userInfo><entry key="k" value="v"/></userInfo></attribute></entity></model>"#
        #expect(try ManagedObjectModel(xmlData: Data(usual.utf8), source: "usual").entitiesByName["A"] != nil)
    }

    /// A bundle with one version and a `.xccurrentversion` naming `name`.
    static func bundle(in directory: TemporaryDirectory, currentVersionName name: String) throws -> URL {
        let bundle = directory.file("Model.xcdatamodeld")
        let version = bundle.appendingPathComponent("Model.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(#"<model><entity name="A"><attribute name="x" attributeType="String"/></entity></model>"#.utf8)
            .write(to: version.appendingPathComponent("contents"))
        let marker = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(name)</string></dict></plist>
        """
        try Data(marker.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    @Test(arguments: ["", "   ", ".", "./", "Model.xcdatamodeld", "Missing.xcdatamodel", "..", ".xcdatamodel"])
    func aCurrentVersionNameThatIsNotAVersionIsRefused(name: String) throws {
        let directory = TemporaryDirectory()
        let bundle = try Self.bundle(in: directory, currentVersionName: name)
        do {
            _ = try ManagedObjectModel(contentsOf: bundle)
            Issue.record("'\(name)' must be refused")
        } catch let error as ModelError {
            guard case .malformedModelFile(let path, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path.hasSuffix(".xccurrentversion"))
            #expect(reason.contains("_XCCurrentVersionName"), "\(reason)")
        }
    }

    @Test func aCurrentVersionNameThatIsAVersionLoads() throws {
        let directory = TemporaryDirectory()
        let bundle = try Self.bundle(in: directory, currentVersionName: "Model.xcdatamodel")
        #expect(try ManagedObjectModel(contentsOf: bundle).entitiesByName["A"] != nil)
    }
}
