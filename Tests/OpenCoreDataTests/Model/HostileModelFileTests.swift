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

    @Test func aBundleOfManyVersionsLoadsInTimeLinearInThem() throws {
        // Each version used to list and sort the whole bundle again: 2,000 versions took 52 s.
        func bundle(versions: Int, in directory: TemporaryDirectory) throws -> URL {
            let url = directory.file("Many \(versions).xcdatamodeld")
            for number in 1...versions {
                let folder = url.appendingPathComponent("Many \(number).xcdatamodel")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try InteropFixtures.modelXML(#"<entity name="A"><attribute name="a\#(number)" attributeType="String"/></entity>"#)
                    .write(to: folder.appendingPathComponent("contents"))
            }
            return url
        }
        let directory = TemporaryDirectory()
        func seconds(_ versions: Int) throws -> Double {
            let url = try bundle(versions: versions, in: directory)
            let start = ContinuousClock.now
            let loaded = try ModelVersionBundle(contentsOf: url)
            let elapsed = ContinuousClock.now - start
            #expect(loaded.versions.count == versions)
            #expect(loaded.current.name == "Many \(versions)")
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        }
        let small = try seconds(150), large = try seconds(1_500)
        // Ten times the versions: linear work takes about ten times as long, quadratic about a hundred.
        #expect(large < small * 30 + 1, "150 versions \(small) s, 1,500 versions \(large) s")
    }

    /// `E0` ← `E1` ← … ← `E<depth-1>`, each entity adding one attribute.
    static func chainXML(depth: Int) -> String {
        var xml = "<model>"
        for level in 0..<depth {
            let parent = level == 0 ? "" : #" parentEntity="E\#(level - 1)""#
            xml += #"<entity name="E\#(level)"\#(parent)><attribute name="a\#(level)" attributeType="Integer 64"/></entity>"#
        }
        return xml + "</model>"
    }

    @Test func aFourHundredLevelChainTakesOneDigestPerEntityAndProperty() throws {
        let xml = Self.chainXML(depth: 400)
        #expect(xml.utf8.count > 30_000)
        let model = try ManagedObjectModel(xmlData: Data(xml.utf8), source: "chain")
        #expect(model.entitiesByNumber.map(\.name) == (0..<400).map { "E\($0)" })
        var calculator = VersionHashCalculator()
        var hashes: [String: Data] = [:]
        for entity in model.entities { hashes[entity.name] = calculator.entityHash(entity) }
        // 400 entities and 400 attributes: each digested once, however deep the chain.
        #expect(calculator.digestCount == 800)
        #expect(hashes == model.entityVersionHashesByName)
        #expect(model.entitiesByName["E399"]?.allProperties.count == 400)
        #expect(model.entitiesByName["E0"]?.allSubentities.count == 399)
    }

    /// Core Data's rule for an entity's hash, computed directly from the definition (recursively, each
    /// entity on its own): the reference the memoized calculator must agree with.
    static func referenceHash(_ entity: EntityDescription) -> Data {
        var input = VersionHashInput()
        input.append(entity.name)
        input.append(byte: entity.isAbstract ? 1 : 0)
        if let parent = entity.superentity { input.append(referenceHash(parent)) }
        var persistent: [PropertyDescription] = []
        var next: EntityDescription? = entity
        while let current = next {
            persistent.append(contentsOf: current.properties.filter { !$0.isTransient })
            next = current.superentity
        }
        for property in persistent.sorted(by: { codePointPrecedes($0.name, $1.name) }) {
            if let attribute = property as? AttributeDescription { input.append(attribute.versionHash) }
            if let relationship = property as? RelationshipDescription { input.append(relationship.versionHash) }
        }
        if let modifier = entity.versionHashModifier { input.append(modifier) }
        for constraint in entity.uniquenessConstraints.map({ $0.joined(separator: ".") }).sorted(by: codePointPrecedes)
        where !constraint.isEmpty {
            input.append(constraint)
        }
        return input.digest
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func memoizedHashesAgreeWithTheDefinition(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var xml = "<model>"
        for index in 0..<40 {
            // A random forest: each entity's parent is an earlier one, or none.
            let parent = index > 0 && random.next() % 4 != 0 ? #" parentEntity="E\#(random.next() % UInt64(index))""# : ""
            let abstract = random.next() % 5 == 0 ? #" isAbstract="YES""# : ""
            xml += #"<entity name="E\#(index)"\#(parent)\#(abstract)>"#
            for property in 0..<Int(random.next() % 4) {
                // Names interleave with the parents' in code-point order.
                let name = ["b", "z", "a", "q", "m"][Int(random.next() % 5)] + "\(index)_\(property)"
                let transient = random.next() % 6 == 0 ? #" transient="YES""# : ""
                xml += #"<attribute name="\#(name)" attributeType="String"\#(transient)/>"#
            }
            xml += "</entity>"
        }
        xml += "</model>"
        let model = try ManagedObjectModel(xmlData: Data(xml.utf8), source: "forest")
        for entity in model.entities {
            #expect(model.entityVersionHashesByName[entity.name] == Self.referenceHash(entity), "\(entity.name)")
            #expect(entity.versionHash == Self.referenceHash(entity), "\(entity.name)")
        }
    }
}
