import Foundation
import Testing
@testable import OpenCoreData

/// Xcode 3's binary `.xcdatamodel` (`elements` and `layout`, no `contents`) reads into the model its XML form
/// gives; what the reader does not map is refused by name with the way to convert it, and a damaged archive is
/// a `malformedModelFile` error.
@Suite struct Xcode3BinaryModelTests {
    /// Shaped like the public sample the layout was confirmed against: String and Integer 32 attributes, a
    /// to-one and its to-many inverse, a fetched property.
    static let carsAndDrivers = """
        <model userDefinedModelVersionIdentifier="">
          <entity name="Car" representedClassName=".Car">
            <attribute name="maker" optional="YES" attributeType="String"/>
            <attribute name="model" optional="YES" attributeType="String"/>
            <attribute name="year" optional="YES" attributeType="Integer 32" defaultValueString="0"/>
            <relationship name="driver" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Driver" inverseName="cars" inverseEntity="Driver"/>
          </entity>
          <entity name="Driver" representedClassName=".Driver">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="driver" inverseEntity="Car"/>
            <fetchedProperty name="recentCars" optional="YES">
              <fetchRequest name="fetchedPropertyFetchRequest" entity="Car" predicateString="year &gt; 2014"/>
            </fetchedProperty>
          </entity>
        </model>
        """

    /// Every attribute type, with the settings that reach the model: defaults, limits, flags, hash modifiers,
    /// renaming identifiers, user info.
    static let everyAttributeType = """
        <model userDefinedModelVersionIdentifier="2.1">
          <entity name="Sample" representedClassName="Sample" versionHashModifier="v2" elementID="OldSample">
            <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
            <attribute name="colour" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>
            <attribute name="done" optional="YES" attributeType="Boolean" defaultValueString="YES"/>
            <attribute name="due" optional="YES" attributeType="Date"/>
            <attribute name="identifier" optional="YES" attributeType="UUID" defaultValueString="6F9619FF-8B86-D011-B42D-00C04FC964FF"/>
            <attribute name="large" optional="YES" attributeType="Integer 64" defaultValueString="9000000000"/>
            <attribute name="link" optional="YES" attributeType="URI" defaultValueString="https://example.com/a"/>
            <attribute name="medium" optional="YES" attributeType="Integer 32" defaultValueString="-3"/>
            <attribute name="price" optional="YES" attributeType="Decimal" defaultValueString="1.25"/>
            <attribute name="ratio" optional="YES" attributeType="Double" defaultValueString="0.5" maxValueString="1"/>
            <attribute name="scratch" optional="YES" transient="YES" attributeType="String">
              <userInfo><entry key="note" value="kept in memory"/></userInfo>
            </attribute>
            <attribute name="small" attributeType="Integer 16" defaultValueString="7" minValueString="1" maxValueString="99"/>
            <attribute name="title" attributeType="String" defaultValueString="untitled" minValueString="1" maxValueString="40" regularExpressionString="[a-z ]+" versionHashModifier="t2" elementID="heading"/>
            <attribute name="weight" optional="YES" attributeType="Float" defaultValueString="2.5"/>
            <userInfo><entry key="owner" value="tests"/><entry key="empty" value=""/></userInfo>
          </entity>
        </model>
        """

    /// Relationships of every kind: to-one and to-many, ordered, counts, each delete rule, one without an
    /// inverse; an abstract entity.
    static let everyRelationshipKind = """
        <model>
          <entity name="Author" representedClassName="Author" isAbstract="YES">
            <attribute name="name" attributeType="String"/>
            <relationship name="books" toMany="YES" minCount="1" maxCount="5" deletionRule="Cascade" destinationEntity="Book" inverseName="author" inverseEntity="Book"/>
            <relationship name="favourite" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Book"/>
          </entity>
          <entity name="Book" representedClassName="Book">
            <attribute name="title" attributeType="String"/>
            <relationship name="author" maxCount="1" deletionRule="Deny" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
            <relationship name="chapters" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Chapter" inverseName="book" inverseEntity="Chapter"/>
          </entity>
          <entity name="Chapter" representedClassName="Chapter">
            <attribute name="number" attributeType="Integer 16" defaultValueString="1"/>
            <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="chapters" inverseEntity="Book"/>
          </entity>
        </model>
        """

    static let models = [("CarsAndDrivers", carsAndDrivers), ("EveryAttributeType", everyAttributeType),
                         ("EveryRelationshipKind", everyRelationshipKind)]

    private func expectSameModel(_ loaded: ManagedObjectModel, as xml: String, _ name: String) throws {
        let reference = try ManagedObjectModel(xmlData: Data(xml.utf8), source: name)
        #expect(XcodeModelWriterTests.canonical(loaded) == XcodeModelWriterTests.canonical(reference), "\(name)")
        #expect(loaded.entityVersionHashesByName == reference.entityVersionHashesByName, "\(name)")
        #expect(loaded.versionIdentifiers == reference.versionIdentifiers, "\(name)")
    }

    @Test func eachModelReadsBackAsItsXMLFormDoes() throws {
        let directory = TemporaryDirectory()
        for (name, xml) in Self.models {
            let folder = try Xcode3ElementsFixture.folder(named: name, in: directory.url,
                                                          elements: try Xcode3ElementsFixture.elements(fromXML: xml))
            let before = try Data(contentsOf: folder.appendingPathComponent("elements"))
            try expectSameModel(try ManagedObjectModel(contentsOf: folder), as: xml, name)
            #expect(try Data(contentsOf: folder.appendingPathComponent("elements")) == before, "reading changes nothing")
        }
        let sample = try ManagedObjectModel(contentsOf: directory.file("CarsAndDrivers.xcdatamodel"))
        let recent = try #require(sample.entitiesByName["Driver"]?.fetchedProperty(named: "recentCars"))
        #expect(recent.entityName == "Car" && recent.predicate != nil)
        let driver = try #require(sample.entitiesByName["Car"]?.relationshipsByName["driver"])
        #expect(driver.destinationEntityName == "Driver" && driver.inverseName == "cars" && !driver.isToMany)
    }

    @Test func aBundleWithAVersionInTheBinaryFormReadsIt() throws {
        let directory = TemporaryDirectory()
        let bundle = directory.file("Library.xcdatamodeld")
        _ = try Xcode3ElementsFixture.folder(named: "Library", in: bundle,
                                             elements: try Xcode3ElementsFixture.elements(fromXML: Self.everyRelationshipKind))
        try expectSameModel(try ManagedObjectModel(contentsOf: bundle), as: Self.everyRelationshipKind, "bundle")
        let versions = try ModelVersionBundle(contentsOf: bundle)
        #expect(versions.current.model.entityVersionHashesByName
                == (try ManagedObjectModel(xmlData: Data(Self.everyRelationshipKind.utf8), source: "x")).entityVersionHashesByName)
    }

    // MARK: Refusals

    private func expectRefusal(_ body: () throws -> Void, folder: URL, construct: String) {
        #expect {
            try body()
        } throws: { error in
            guard case ModelError.xcode3BinaryModel(let named, let what)? = error as? ModelError else { return false }
            let message = "\(error)"
            return named == folder.path && what.contains(construct) && message.contains(folder.path)
                && message.contains("Xcode 3") && message.contains("momc") && message.contains("Xcode 4.1")
        }
    }

    /// The fixture's archive with `change` applied to its object list.
    private func altered(_ xml: String, _ change: (inout [PropertyListValue]) -> Void) throws -> Data {
        guard case .dictionary(var archive) = try BinaryPropertyListReader.read(try Xcode3ElementsFixture.elements(fromXML: xml)),
              case .array(var objects)? = archive["$objects"] else { preconditionFailure("not an archive") }
        change(&objects)
        archive["$objects"] = .array(objects)
        return BinaryPropertyListWriter.write(.dictionary(archive))
    }

    /// The index of the instance whose `_name` is `name` and whose class is `className`.
    private func index(of name: String, class className: String, in objects: [PropertyListValue]) -> Int {
        objects.indices.first { index in
            guard case .dictionary(let fields) = objects[index], let nameUID = fields["_name"]?.uid,
                  let classUID = fields["$class"]?.uid else { return false }
            return objects[Int(nameUID)].string == name
                && objects[Int(classUID)].dictionary?["$classname"]?.string == className
        }!
    }

    private func setField(_ key: String, to value: PropertyListValue, at index: Int, in objects: inout [PropertyListValue]) {
        guard case .dictionary(var fields) = objects[index] else { preconditionFailure("not an instance") }
        fields[key] = value
        objects[index] = .dictionary(fields)
    }

    @Test func whatTheReaderDoesNotMapIsRefusedByName() throws {
        let directory = TemporaryDirectory()
        // An archive whose root is not Xcode's model class (the layout is another one).
        let other = try Xcode3ElementsFixture.folder(named: "Other", in: directory.url, elements: try KeyedArchiveWriter.archive(
            KeyedArchiveWriter.Instance(classNames: ["XDDevModel"], fields: ["entities": ["Book", "Author"]])))
        expectRefusal({ _ = try ManagedObjectModel(contentsOf: other) }, folder: other, construct: "XDDevModel")

        let cases: [(String, String, (inout [PropertyListValue]) -> Void)] = [
            // Generalizations hold XDUMLGeneralizationImp objects (Xcode3ModelArchive), not the superentity itself.
            ("Inherits", "generalization", { objects in
                let book = self.index(of: "Book", class: "XDPMEntity", in: objects)
                let author = self.index(of: "Author", class: "XDPMEntity", in: objects)
                objects.append(.dictionary(["NS.objects": .array([.uid(UInt64(author))]),
                                            "$class": .uid(UInt64(self.classIndex("NSMutableArray", in: objects)))]))
                self.setField("XDBucketForGeneralizationsstorage", to: .uid(UInt64(objects.count - 1)), at: book, in: &objects)
            }),
            ("UnknownKey", "XD_futureSetting", { objects in
                let book = self.index(of: "Book", class: "XDPMEntity", in: objects)
                self.setField("XD_futureSetting", to: .boolean(true), at: book, in: &objects)
            }),
            ("UMLFlag", "_isDerived", { objects in
                let title = self.index(of: "title", class: "XDPMAttribute", in: objects)
                self.setField("_isDerived", to: .boolean(true), at: title, in: &objects)
            }),
            ("DeleteRule", "delete rule 7", { objects in
                let slot = self.index(of: "XD_PRK_deleteRule", class: "XDUMLPropertyImp", in: objects)
                objects.append(.integer(7))
                self.setField("_default", to: .uid(UInt64(objects.count - 1)), at: slot, in: &objects)
            }),
            ("TypeCode", "attribute type code 0", { objects in
                let slot = self.index(of: "XD_PAttK_attributeType", class: "XDUMLPropertyImp", in: objects)
                objects.append(.integer(0))
                self.setField("_default", to: .uid(UInt64(objects.count - 1)), at: slot, in: &objects)
            }),
        ]
        for (name, construct, change) in cases {
            let folder = try Xcode3ElementsFixture.folder(named: name, in: directory.url,
                                                          elements: try altered(Self.everyRelationshipKind, change))
            expectRefusal({ _ = try ManagedObjectModel(contentsOf: folder) }, folder: folder, construct: construct)
        }
        // A date given as text: how Xcode 3 wrote it is not known.
        let dated = try Xcode3ElementsFixture.folder(named: "Dated", in: directory.url, elements: try Xcode3ElementsFixture.elements(
            fromXML: #"<model><entity name="E"><attribute name="when" attributeType="Date" defaultValueString="0"/></entity></model>"#))
        expectRefusal({ _ = try ManagedObjectModel(contentsOf: dated) }, folder: dated, construct: "Date attribute")
    }

    private func classIndex(_ name: String, in objects: [PropertyListValue]) -> Int {
        objects.indices.first { objects[$0].dictionary?["$classname"]?.string == name }!
    }

    // MARK: Damage

    private func expectDamage(_ data: Data, named name: String, in directory: URL) throws {
        let folder = try Xcode3ElementsFixture.folder(named: name, in: directory, elements: data)
        let elements = folder.appendingPathComponent("elements").path
        #expect {
            _ = try ManagedObjectModel(contentsOf: folder)
        } throws: { error in
            guard case ModelError.malformedModelFile(let path, _)? = error as? ModelError else { return false }
            return path == elements
        }
    }

    @Test func aDamagedArchiveIsAMalformedModelFile() throws {
        let directory = TemporaryDirectory()
        let whole = try Xcode3ElementsFixture.elements(fromXML: Self.carsAndDrivers)
        try expectDamage(whole.prefix(whole.count / 2), named: "Truncated", in: directory.url)
        try expectDamage(Data(), named: "Empty", in: directory.url)
        // A trailer claiming 2^40 objects.
        var huge = whole
        huge.replaceSubrange(huge.count - 24 ..< huge.count - 16, with: [0, 0, 1, 0, 0, 0, 0, 0])
        try expectDamage(huge, named: "Huge", in: directory.url)
        // An attribute type that is a string; a class name that is the model itself (a cycle back to the root).
        try expectDamage(try altered(Self.carsAndDrivers) { objects in
            let slot = self.index(of: "XD_PAttK_attributeType", class: "XDUMLPropertyImp", in: objects)
            objects.append(.string("String"))
            self.setField("_default", to: .uid(UInt64(objects.count - 1)), at: slot, in: &objects)
        }, named: "WrongType", in: directory.url)
        try expectDamage(try altered(Self.carsAndDrivers) { objects in
            let slot = self.index(of: "XD_PSK_entityClassName", class: "XDUMLPropertyImp", in: objects)
            self.setField("_default", to: .uid(1), at: slot, in: &objects)
        }, named: "Cycle", in: directory.url)
        try expectDamage(try altered(Self.carsAndDrivers) { objects in
            let car = self.index(of: "Car", class: "XDPMEntity", in: objects)
            self.setField("XDBucketForOwnedAttributesstorage", to: .uid(UInt64(objects.count + 5)), at: car, in: &objects)
        }, named: "OutOfRange", in: directory.url)
    }

    /// Bytes changed at random give a model or a `ModelError`, never a crash or a hang.
    @Test func randomDamageGivesAModelOrATypedError() throws {
        let directory = TemporaryDirectory()
        let whole = try Xcode3ElementsFixture.elements(fromXML: Self.everyRelationshipKind)
        var generator = SeededGenerator(seed: 24)
        for round in 0..<60 {
            var bytes = whole
            for _ in 0..<(1 + round % 4) {
                let position = Int(generator.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            let folder = try Xcode3ElementsFixture.folder(named: "Random\(round)", in: directory.url, elements: bytes)
            do {
                _ = try ManagedObjectModel(contentsOf: folder)
            } catch is ModelError {
                // A typed refusal is what is asked.
            }
        }
    }

    /// `ocd model convert` writes the XML form of a binary model, which reads back as the same model.
    @Test func theToolConvertsItToTheXMLForm() throws {
        guard let binary = OcdBinary.url else { return }
        let directory = TemporaryDirectory()
        let folder = try Xcode3ElementsFixture.folder(named: "Library", in: directory.url,
                                                      elements: try Xcode3ElementsFixture.elements(fromXML: Self.everyRelationshipKind))
        let output = directory.file("Out.xcdatamodeld")
        let convert = try OcdBinary.run(["model", "convert", folder.path, "--output", output.path], binary: binary)
        #expect(convert.status == 0, "\(convert.stderr)")
        try expectSameModel(try ManagedObjectModel(contentsOf: output), as: Self.everyRelationshipKind, "converted")

        let other = try Xcode3ElementsFixture.folder(named: "Other", in: directory.url, elements: try KeyedArchiveWriter.archive(
            KeyedArchiveWriter.Instance(classNames: ["XDDevModel"], fields: [:])))
        let refused = directory.file("Refused.xcdatamodeld")
        let failed = try OcdBinary.run(["model", "convert", other.path, "--output", refused.path], binary: binary)
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("Xcode 3") && failed.stderr.contains(other.path), "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: refused.path))
    }
}
