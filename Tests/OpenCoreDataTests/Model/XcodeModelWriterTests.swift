import Foundation
import Testing
@testable import OpenCoreData
@testable import ocd

/// A model written as Xcode's XML reads back as the same model: every field the loader reads, and the same
/// version hashes (so the converted bundle opens the same stores).
@Suite struct XcodeModelWriterTests {
    /// Everything the loader reads, in one text, so two models can be compared field by field.
    static func canonical(_ model: ManagedObjectModel) -> String {
        var lines = ["versions \(model.versionIdentifiers)"]
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            lines.append("entity \(entity.name) class=\(entity.managedObjectClassName ?? "-") parent=\(entity.superentityName ?? "-") abstract=\(entity.isAbstract) vhm=\(entity.versionHashModifier ?? "-") renaming=\(entity.renamingIdentifier ?? "-") info=\(entity.userInfo.sorted { $0.key < $1.key }) unique=\(entity.uniquenessConstraints) indexes=\(entity.indexes.map { "\($0.name):\($0.propertyNames)" })")
            for property in entity.properties {
                var line = "  \(property.name) optional=\(property.isOptional) transient=\(property.isTransient) vhm=\(property.versionHashModifier ?? "-") renaming=\(property.renamingIdentifier ?? "-") info=\(property.userInfo.sorted { $0.key < $1.key })"
                if let attribute = property as? AttributeDescription {
                    line += " type=\(attribute.attributeType) default=\(attribute.defaultValue.map { "\($0) (\(type(of: $0)))" } ?? "-") range=\(String(describing: attribute.minValue))…\(String(describing: attribute.maxValue)) length=\(String(describing: attribute.minLength))…\(String(describing: attribute.maxLength)) dates=\(String(describing: attribute.minDate))…\(String(describing: attribute.maxDate)) pattern=\(attribute.regularExpression ?? "-") external=\(attribute.allowsExternalBinaryDataStorage) preserve=\(attribute.preservesValueInHistoryOnDeletion) transformer=\(attribute.valueTransformerName ?? "-") class=\(attribute.customClassName ?? "-") derived=\(attribute.derivationExpression?.expressionFormat ?? "-")"
                } else if let relationship = property as? RelationshipDescription {
                    line += " to=\(relationship.destinationEntityName) inverse=\(relationship.inverseName ?? "-") many=\(relationship.isToMany) ordered=\(relationship.isOrdered) count=\(relationship.minCount)…\(relationship.maxCount) rule=\(relationship.deleteRule)"
                }
                lines.append(line)
            }
            for fetched in entity.fetchedProperties {
                lines.append("  fetched \(fetched.name) \(fetched.entityName) \(fetched.predicate?.predicateFormat ?? "-") optional=\(fetched.isOptional) info=\(fetched.userInfo.sorted { $0.key < $1.key })")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func roundTrip(_ model: ManagedObjectModel) throws -> ManagedObjectModel {
        try ManagedObjectModel(xmlData: model.xcodeModelXML(), source: "written")
    }

    /// A model with every field the writer writes: each attribute type with a default, limits, patterns,
    /// user info with markup characters and line breaks, constraints, indexes, inheritance, every delete rule,
    /// ordered and many-to-many relationships, renaming identifiers and hash modifiers.
    static let everyFeatureXML = #"""
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="v7 &amp; more">
        <entity name="Thing" representedClassName="App.Thing" isAbstract="YES" versionHashModifier="m1" elementID="OldThing">
            <attribute name="title" attributeType="String" defaultValueString="a &lt;b&gt; &quot;c&quot;&#10;d" minValueString="1" maxValueString="80" regularExpressionString="[A-Z].*"/>
            <attribute name="small" optional="YES" attributeType="Integer 16" defaultValueString="-7" minValueString="-100" maxValueString="100"/>
            <attribute name="medium" optional="YES" attributeType="Integer 32" defaultValueString="2147483647"/>
            <attribute name="large" optional="YES" attributeType="Integer 64" defaultValueString="-9223372036854775808"/>
            <attribute name="ratio" optional="YES" attributeType="Double" defaultValueString="0.1" minValueString="0.5" maxValueString="1e20"/>
            <attribute name="single" optional="YES" attributeType="Float" defaultValueString="2.5"/>
            <attribute name="amount" optional="YES" attributeType="Decimal" defaultValueString="12.345"/>
            <attribute name="flag" optional="YES" attributeType="Boolean" defaultValueString="YES"/>
            <attribute name="when" optional="YES" attributeType="Date" defaultDateTimeInterval="340000000.25" minDateTimeInterval="0" maxDateTimeInterval="900000000"/>
            <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES" preserveAfterDeletion="YES"/>
            <attribute name="identifier" optional="YES" attributeType="UUID" defaultValueString="E621E1F8-C36C-495A-93FC-0C247A3E6E5F"/>
            <attribute name="link" optional="YES" attributeType="URI" defaultValueString="https://example.com/a?b=c&amp;d=e"/>
            <attribute name="payload" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="NSArray"/>
            <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
            <attribute name="renamed" optional="YES" attributeType="String" renamingIdentifier="oldName" versionHashModifier="m2">
                <userInfo>
                    <entry key="key &amp; &lt;one&gt;" value="line&#10;break"/>
                    <entry key="two" value=""/>
                </userInfo>
            </attribute>
            <uniquenessConstraints>
                <uniquenessConstraint><constraint value="title"/></uniquenessConstraint>
                <uniquenessConstraint><constraint value="small"/><constraint value="medium"/></uniquenessConstraint>
            </uniquenessConstraints>
            <fetchIndex name="byTitleAndWhen">
                <fetchIndexElement property="title" type="Binary" order="ascending"/>
                <fetchIndexElement property="when" type="Binary" order="ascending"/>
            </fetchIndex>
            <userInfo><entry key="entityKey" value="entity value"/></userInfo>
        </entity>
        <entity name="Gadget" representedClassName="Gadget" parentEntity="Thing">
            <attribute name="serial" attributeType="String"/>
            <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="gadgets" inverseEntity="Person"/>
            <relationship name="parts" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Part" inverseName="gadget" inverseEntity="Part"/>
            <relationship name="tags" optional="YES" toMany="YES" minCount="1" maxCount="5" deletionRule="No Action" destinationEntity="Tag" inverseName="gadgets" inverseEntity="Tag"/>
        </entity>
        <entity name="Person" representedClassName="Person">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="gadgetCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="gadgets.@count"/>
            <attribute name="searchName" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(name)"/>
            <fetchedProperty name="namesakes" optional="YES">
                <fetchRequest name="fetchedPropertyFetchRequest" entity="Person" predicateString="name == $FETCH_SOURCE.name AND SELF != $FETCH_SOURCE"/>
                <userInfo><entry key="why" value="same name"/></userInfo>
            </fetchedProperty>
            <relationship name="gadgets" optional="YES" toMany="YES" deletionRule="Deny" destinationEntity="Gadget" inverseName="owner" inverseEntity="Gadget"/>
        </entity>
        <entity name="Part" representedClassName="Part">
            <relationship name="gadget" maxCount="1" deletionRule="Nullify" destinationEntity="Gadget" inverseName="parts" inverseEntity="Gadget"/>
        </entity>
        <entity name="Tag" representedClassName="Tag">
            <relationship name="gadgets" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Gadget" inverseName="tags" inverseEntity="Gadget"/>
        </entity>
    </model>
    """#

    @Test(arguments: [0x0, 0x7, 0xFFFE, 0xFDD0] as [UInt32])
    func textAnXMLFileCannotHoldIsRefusedNamingEntityAndAttribute(_ scalar: UInt32) throws {
        let text = "a" + String(Unicode.Scalar(scalar)!) + "b"
        let shown = "U+" + String(format: "%04X", scalar)
        // The model refuses a NUL in a String default itself; user info takes any text.
        let attribute = AttributeDescription(name: "title", type: .string)
        attribute.userInfo = ["note": text]
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Book", properties: [attribute])])
        let directory = TemporaryDirectory()
        let url = directory.file("Converted.xcdatamodeld")
        #expect {
            try model.writeModelBundle(to: url, versionName: "Converted")
        } throws: { error in
            guard case ModelError.malformedModelFile(_, let reason) = error else { return false }
            return reason.contains("entity 'Book', attribute 'title', entry 'note' holds \(shown)")
        }
        #expect(!FileManager.default.fileExists(atPath: url.path))
        // Line breaks and tabs are written as references and read back.
        let fine = AttributeDescription(name: "title", type: .string, defaultValue: "a\nb\tc\u{85}")
        try ManagedObjectModel(entities: [EntityDescription(name: "Book", properties: [fine])]).writeModelBundle(to: url, versionName: "Converted")
        let loaded = try ManagedObjectModel(contentsOf: url)
        #expect(loaded.entitiesByName["Book"]?.attributesByName["title"]?.defaultValue as? String == "a\nb\tc\u{85}")
    }

    @Test func everyFieldReadsBackTheSame() throws {
        let model = try ManagedObjectModel(xmlData: Data(Self.everyFeatureXML.utf8), source: "every feature")
        let again = try Self.roundTrip(model)
        #expect(Self.canonical(again) == Self.canonical(model))
        #expect(again.entityVersionHashesByName == model.entityVersionHashesByName)
        // The fixture really uses what it claims to: a writer that dropped these would fail above.
        let thing = try #require(model.entitiesByName["Thing"])
        #expect(thing.uniquenessConstraints.count == 2 && thing.indexes.count == 1 && thing.renamingIdentifier == "OldThing")
        #expect((thing.propertiesByName["title"] as? AttributeDescription)?.defaultValue as? String == "a <b> \"c\"\nd")
    }

    @Test func everyFixtureVersionReadsBackTheSame() throws {
        for bundleName in ["FailedBanks.xcdatamodeld", "Library.xcdatamodeld", "Shop.xcdatamodeld"] {
            let bundle = try ModelVersionBundle(contentsOf: InteropFixtures.url(bundleName))
            for version in bundle.versions {
                let again = try Self.roundTrip(version.model)
                #expect(Self.canonical(again) == Self.canonical(version.model), "\(bundleName) \(version.name)")
                #expect(again.entityVersionHashesByName == version.model.entityVersionHashesByName, "\(bundleName) \(version.name)")
            }
        }
        let inheritance = try ManagedObjectModel(xmlData: RenumberedStoreFixture.xml, source: "inheritance")
        #expect(try Self.roundTrip(inheritance).entityVersionHashesByName == inheritance.entityVersionHashesByName)
    }

    @Test func aCompiledModelBecomesABundleThatOpensItsStores() async throws {
        let directory = TemporaryDirectory()
        let source = try ManagedObjectModel(xmlData: Data(Self.everyFeatureXML.utf8), source: "every feature")
        let momd = directory.file("App.momd")
        try FileManager.default.createDirectory(at: momd, withIntermediateDirectories: true)
        try CompiledModelFixture.momData(source).write(to: momd.appendingPathComponent("App.mom"))
        let info = try PropertyListSerialization.data(
            fromPropertyList: ["NSManagedObjectModel_CurrentVersionName": "App"], format: .xml, options: 0)
        try info.write(to: momd.appendingPathComponent("VersionInfo.plist"))
        let compiled = try ManagedObjectModel(compiledModelAt: momd)

        // A store written with the compiled model opens with the converted bundle.
        let store = directory.file("App.sqlite")
        let writer = PersistentStoreCoordinator(managedObjectModel: compiled)
        try writer.addPersistentStore(type: .sqlite, at: store)

        let output = directory.file("App.xcdatamodeld")
        let command = try ModelConvertCommand.parse([momd.path, "--output", output.path])
        try await command.run()
        let converted = try ManagedObjectModel(contentsOf: output)
        #expect(converted.entityVersionHashesByName == compiled.entityVersionHashesByName)
        let reader = PersistentStoreCoordinator(managedObjectModel: converted)
        try reader.addPersistentStore(type: .sqlite, at: store, options: StoreOptions(readOnly: true))

        // The output is never overwritten.
        let again = try ModelConvertCommand.parse([momd.path, "--output", output.path])
        await #expect(throws: OCDError.self) { try await again.run() }
    }

    @Test func everyVersionOfABundleIsWrittenWithItsCurrentOne() throws {
        let directory = TemporaryDirectory()
        let shop = try ModelVersionBundle(contentsOf: InteropFixtures.url("Shop.xcdatamodeld"))
        let (versions, current) = try ModelConvertCommand.versions(at: InteropFixtures.url("Shop.xcdatamodeld"))
        let output = directory.file("Copy.xcdatamodeld")
        try ManagedObjectModel.writeModelBundle(versions: versions, currentVersion: current, to: output)
        let copy = try ModelVersionBundle(contentsOf: output)
        #expect(copy.versions.map(\.name) == shop.versions.map(\.name))
        #expect(copy.current.name == shop.current.name)
        for (original, written) in zip(shop.versions, copy.versions) {
            #expect(written.model.entityVersionHashesByName == original.model.entityVersionHashesByName)
        }
        #expect(throws: ModelError.self) {
            try ManagedObjectModel.writeModelBundle(versions: versions, currentVersion: "No Such Version",
                                                    to: directory.file("Other.xcdatamodeld"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("Other.xcdatamodeld").path))
    }
}
