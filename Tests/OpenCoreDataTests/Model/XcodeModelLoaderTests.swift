import Foundation
import Testing
@testable import OpenCoreData

@Suite struct XcodeModelLoaderTests {
    private func library() throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld"))
    }

    @Test func bundleLoadsTheCurrentVersion() throws {
        let model = try library()
        #expect(model.versionIdentifiers == ["2.0"])
        #expect(Set(model.entitiesByName.keys) == ["Author", "Book", "Chapter", "Item", "Magazine", "Shelf"])
    }

    @Test func versionFolderAndContentsFileLoadToo() throws {
        let folder = try InteropFixtures.url("Library.xcdatamodeld/Library.xcdatamodel")
        let fromFolder = try ManagedObjectModel(contentsOf: folder)
        let fromFile = try ManagedObjectModel(contentsOf: folder.appendingPathComponent("contents"))
        #expect(fromFolder.versionIdentifiers == ["1.0"])
        #expect(Set(fromFolder.entitiesByName.keys) == ["Author", "Book"])
        #expect(fromFolder.entityVersionHashesByName == fromFile.entityVersionHashesByName)
    }

    @Test func withoutMarkerTheLastVersionInNumericOrderIsUsed() throws {
        let model = try ManagedObjectModel(contentsOf: InteropFixtures.url("NoMarker.xcdatamodeld"))
        #expect(model.versionIdentifiers == ["Model 10"])
    }

    @Test func currentVersionMarker() {
        let marker = Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict><key>other</key><string>x</string>
        <key>_XCCurrentVersionName</key><string>Model 3.xcdatamodel</string></dict></plist>
        """.utf8)
        #expect(XcodeModelLoader.currentVersionName(inMarker: marker) == "Model 3.xcdatamodel")
        #expect(XcodeModelLoader.currentVersionName(inMarker: Data("<plist><dict><key>_XCCurrentVersionName</key></dict></plist>".utf8)) == nil)
        #expect(XcodeModelLoader.currentVersionName(inMarker: Data("garbage".utf8)) == nil)
    }

    @Test func everyAttributeTypeAndDefaultValue() throws {
        let book = try #require(try library().entitiesByName["Book"])
        let attributes = book.attributesByName
        let expectedTypes: [String: AttributeType] = [
            "bookID": .uuid, "chapterCount": .integer32, "copiesSold": .integer64, "cover": .transformable,
            "inPrint": .boolean, "isbn": .string, "pageCount": .integer16, "price": .decimal, "rating": .float,
            "scan": .binaryData, "website": .uri, "weight": .double, "createdAt": .date, "title": .string,
        ]
        for (name, type) in expectedTypes {
            #expect(attributes[name]?.attributeType == type, "\(name)")
        }
        #expect(attributes["bookID"]?.defaultValue as? UUID == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(attributes["chapterCount"]?.defaultValue as? Int32 == 12)
        #expect(attributes["copiesSold"]?.defaultValue as? Int64 == 0)
        #expect(attributes["inPrint"]?.defaultValue as? Bool == true)
        #expect(attributes["pageCount"]?.defaultValue as? Int16 == 100)
        #expect(attributes["price"]?.defaultValue as? Decimal == Decimal(string: "9.99"))
        #expect(attributes["rating"]?.defaultValue as? Float == 2.5)
        #expect(attributes["weight"]?.defaultValue as? Double == 0.45)
        #expect(attributes["website"]?.defaultValue as? URL == URL(string: "https://example.org/books"))
        #expect(attributes["createdAt"]?.defaultValue as? Date == Date(timeIntervalSinceReferenceDate: 694_224_000))
        #expect(attributes["cover"]?.valueTransformerName == "NSSecureUnarchiveFromData")
        #expect(attributes["scan"]?.allowsExternalBinaryDataStorage == true)
        #expect(attributes["scan"]?.preservesValueInHistoryOnDeletion == true)
        #expect(attributes["isbn"]?.isOptional == false)
        #expect(attributes["price"]?.isOptional == true)
    }

    @Test func validationLimitsFollowTheAttributeType() throws {
        let model = try library()
        let book = try #require(model.entitiesByName["Book"])
        #expect(book.attributesByName["pageCount"]?.minValue == 1)
        #expect(book.attributesByName["pageCount"]?.maxValue == 10000)
        #expect(book.attributesByName["isbn"]?.minLength == 10)
        #expect(book.attributesByName["isbn"]?.maxLength == 13)
        let author = try #require(model.entitiesByName["Author"])
        #expect(author.attributesByName["name"]?.regularExpression == "[A-Z].*")
        #expect(author.attributesByName["born"]?.minDate == Date(timeIntervalSinceReferenceDate: -31_622_400_000))
        #expect(author.attributesByName["born"]?.maxDate == Date(timeIntervalSinceReferenceDate: 3_155_760_000))
        #expect(author.attributesByName["displayName"]?.isTransient == true)
    }

    @Test func relationshipsCountsRulesAndInverses() throws {
        let model = try library()
        let book = try #require(model.entitiesByName["Book"])
        let author = try #require(book.relationshipsByName["author"])
        #expect(!author.isToMany && author.maxCount == 1 && author.deleteRule == .nullify)
        #expect(author.inverseRelationship === model.entitiesByName["Author"]?.relationshipsByName["books"])
        let chapters = try #require(book.relationshipsByName["chapters"])
        #expect(chapters.isToMany && chapters.isOrdered && chapters.maxCount == 0 && chapters.deleteRule == .cascade)
        let shelves = try #require(book.relationshipsByName["shelves"])
        #expect(shelves.maxCount == 5 && shelves.deleteRule == .noAction && shelves.isManyToMany)
        #expect(model.entitiesByName["Shelf"]?.relationshipsByName["books"]?.minCount == 1)
        #expect(model.entitiesByName["Author"]?.relationshipsByName["books"]?.deleteRule == .deny)
        #expect(model.entitiesByName["Chapter"]?.relationshipsByName["book"]?.isOptional == false)
    }

    @Test func entitiesInheritanceConstraintsIndexesAndUserInfo() throws {
        let model = try library()
        let item = try #require(model.entitiesByName["Item"])
        #expect(item.isAbstract)
        #expect(item.subentities.map(\.name) == ["Book", "Magazine"])
        let book = try #require(model.entitiesByName["Book"])
        #expect(book.superentityName == "Item" && book.managedObjectClassName == "Book")
        #expect(book.attributesByName["createdAt"] != nil)  // inherited
        #expect(book.uniquenessConstraints == [["isbn"]])
        #expect(book.userInfo == ["shelfMark": "B"])
        #expect(book.propertiesByName["sameAuthorBooks"] == nil)  // fetched properties are not stored
        #expect(model.entitiesByName["Magazine"]?.versionHashModifier == "monthly")
        #expect(model.entitiesByName["Author"]?.indexes == [IndexDescription(name: "byNameIndex", propertyNames: ["name"])])
        #expect(model.entitiesByName["Shelf"]?.attributesByName["label"]?.userInfo == ["hint": "as printed on the shelf"])
    }

    @Test func failedBanks() throws {
        let model = try ManagedObjectModel(contentsOf: InteropFixtures.url("FailedBanks.xcdatamodeld"))
        #expect(model.versionIdentifiers.isEmpty)
        let info = try #require(model.entitiesByName["FailedBankInfo"])
        let details = try #require(model.entitiesByName["FailedBankDetails"])
        #expect(["name", "city", "state"].allSatisfy { info.attributesByName[$0]?.attributeType == .string })
        #expect(details.attributesByName["closeDate"]?.attributeType == .date)
        #expect(details.attributesByName["updatedDate"]?.attributeType == .date)
        #expect(details.attributesByName["zip"]?.attributeType == .integer32)
        #expect(info.relationshipsByName["details"]?.inverseRelationship === details.relationshipsByName["info"])
        #expect(info.relationshipsByName["details"]?.isToMany == false)
        #expect(details.relationshipsByName["info"]?.isToMany == false)
    }

    // MARK: Errors

    @Test func malformedXMLReportsLineAndColumn() throws {
        let url = try InteropFixtures.url("Broken.xcdatamodel")
        #expect {
            try ManagedObjectModel(contentsOf: url)
        } throws: { error in
            guard case .malformedModelFile(let path, let reason) = error as? ModelError else { return false }
            return path.hasSuffix("Broken.xcdatamodel/contents") && reason.contains("line ")
        }
    }

    @Test(arguments: [
        ("", "no XML"), ("garbage", "not XML"), ("<model><entity name=\"A\">", "unclosed"),
        ("<plist/>", "wrong root"), ("\u{0}\u{1}\u{2}", "binary"),
        ("<model><entity><attribute name=\"a\" attributeType=\"String\"/></entity></model>", "entity without name"),
        ("<model><entity name=\"A\"><attribute attributeType=\"String\"/></entity></model>", "attribute without name"),
        ("<model><entity name=\"A\"><relationship name=\"r\" maxCount=\"x\" destinationEntity=\"A\"/></entity></model>", "bad count"),
        ("<model><entity name=\"A\"><relationship name=\"r\" deletionRule=\"Explode\" destinationEntity=\"A\"/></entity></model>", "bad rule"),
        ("<model><entity name=\"A\"><attribute name=\"a\" attributeType=\"Integer 16\" minValueString=\"low\"/></entity></model>", "bad limit"),
    ])
    func malformedInputIsAModelError(xml: String, label: String) {
        #expect(throws: ModelError.self, "\(label)") {
            try ManagedObjectModel(xmlData: Data(xml.utf8), source: label)
        }
    }

    @Test func unknownAttributeType() {
        let xml = InteropFixtures.modelXML(#"<entity name="A"><attribute name="shape" attributeType="Hologram"/></entity>"#)
        #expect(throws: ModelError.unknownType(entity: "A", property: "shape", type: "Hologram")) {
            try ManagedObjectModel(xmlData: xml, source: "test")
        }
    }

    @Test func relationshipWithoutDestination() {
        let xml = InteropFixtures.modelXML(#"<entity name="A"><relationship name="b" optional="YES" maxCount="1" deletionRule="Nullify"/></entity>"#)
        #expect(throws: ModelError.invalidRelationship(entity: "A", relationship: "b",
                                                       reason: "it has no destination entity")) {
            try ManagedObjectModel(xmlData: xml, source: "test")
        }
    }

    @Test func invalidDefaultValue() {
        let xml = InteropFixtures.modelXML(#"<entity name="A"><attribute name="n" attributeType="Integer 16" defaultValueString="70000"/></entity>"#)
        #expect(throws: ModelError.self) { try ManagedObjectModel(xmlData: xml, source: "test") }
    }

    /// Xcode's boolean spelling left on a number attribute (SRGSSR's SRGUserData_v7 ships `"NO"` on an
    /// Integer 64) reads as 0 or 1, as Core Data loads such a model; other text is still refused.
    @Test func booleanSpellingOnANumberReadsAsZeroOrOne() throws {
        let xml = InteropFixtures.modelXML(#"""
            <entity name="A">
                <attribute name="no" attributeType="Integer 64" defaultValueString="NO"/>
                <attribute name="yes" attributeType="Integer 16" defaultValueString="YES"/>
                <attribute name="ratio" attributeType="Double" defaultValueString="NO"/>
            </entity>
            """#)
        let entity = try #require(try ManagedObjectModel(xmlData: xml, source: "test").entitiesByName["A"])
        #expect(entity.attributesByName["no"]?.defaultValue as? Int64 == 0)
        #expect(entity.attributesByName["yes"]?.defaultValue as? Int16 == 1)
        #expect(entity.attributesByName["ratio"]?.defaultValue as? Double == 0)
        let other = InteropFixtures.modelXML(#"<entity name="A"><attribute name="n" attributeType="Integer 64" defaultValueString="no"/></entity>"#)
        #expect(throws: ModelError.self) { try ManagedObjectModel(xmlData: other, source: "test") }
    }

    @Test func modelChecksStillApply() {
        let xml = InteropFixtures.modelXML(#"<entity name="A"><relationship name="b" maxCount="1" destinationEntity="B" deletionRule="Nullify"/></entity>"#)
        #expect(throws: ModelError.unknownDestination(entity: "A", relationship: "b", destination: "B")) {
            try ManagedObjectModel(xmlData: xml, source: "test")
        }
    }

    /// No input crashes the loader: truncations and byte changes of a real model file either load or
    /// throw a ModelError. (This found FoundationXML trapping on names that are not valid UTF-8.)
    @Test func damagedFilesNeverCrash() throws {
        let url = try InteropFixtures.url("Library.xcdatamodeld/Library 2.xcdatamodel/contents")
        let original = try Data(contentsOf: url)
        var generator = InteropFixtures.SeededGenerator(seed: 2001)
        var samples: [Data] = stride(from: 0, to: original.count, by: 37).map { original.prefix($0) }
        for _ in 0..<1000 {
            var damaged = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<damaged.count, using: &generator)
                damaged[index] = UInt8.random(in: 0...255, using: &generator)
            }
            samples.append(damaged)
        }
        for sample in samples {
            do {
                _ = try ManagedObjectModel(xmlData: sample, source: "damaged")
            } catch is ModelError {
                // Expected for most samples.
            }
        }
    }

    @Test func invalidUTF8IsRefused() {
        var bytes = Array(InteropFixtures.modelXML(#"<entity name="A" isAbstract="NO"/>"#))
        if let index = bytes.firstIndex(of: UInt8(ascii: "s")) { bytes[index] = 0xE5 }
        #expect(throws: ModelError.self) { try ManagedObjectModel(xmlData: Data(bytes), source: "latin") }
    }

    @Test func missingFilesAndCompiledModels() throws {
        #expect(throws: ModelError.self) {
            try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "/nonexistent/Model.xcdatamodeld"))
        }
        let compiled = FileManager.default.temporaryDirectory.appendingPathComponent("Compiled-\(UUID()).momd")
        try FileManager.default.createDirectory(at: compiled, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: compiled) }
        #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: compiled) }
    }

    @Test func derivedAttributesAndFetchedPropertiesLoad() throws {
        let xml = InteropFixtures.modelXML("""
        <entity name="Person">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="searchName" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(name)"/>
            <attribute name="plain" optional="YES" attributeType="String" derivationExpression="name"/>
            <fetchedProperty name="namesakes" optional="YES">
                <fetchRequest name="fetchedPropertyFetchRequest" entity="Person" predicateString="name == $FETCH_SOURCE.name"/>
                <userInfo><entry key="k" value="v"/></userInfo>
            </fetchedProperty>
        </entity>
        <entity name="Employee" parentEntity="Person">
            <attribute name="badge" optional="YES" attributeType="String"/>
        </entity>
        """)
        let model = try ManagedObjectModel(xmlData: xml, source: "derived")
        let person = try #require(model.entitiesByName["Person"])
        #expect(person.attributesByName["searchName"]?.derivationExpression
                == .function(.canonical, [.key("name")]))
        // Without derived="YES" the expression is not read.
        #expect(person.attributesByName["plain"]?.isDerived == false)
        let namesakes = try #require(person.fetchedProperty(named: "namesakes"))
        #expect(namesakes.isOptional && namesakes.userInfo == ["k": "v"] && namesakes.entity === person)
        // Inherited by sub-entities; never a stored property.
        #expect(model.entitiesByName["Employee"]?.fetchedProperty(named: "namesakes") === namesakes)
        #expect(person.allProperties.map(\.name) == ["name", "searchName", "plain"])
    }

    @Test func derivedWithoutAnExpressionIsRefused() {
        let xml = InteropFixtures.modelXML(#"<entity name="A"><attribute name="n" optional="YES" attributeType="String" derived="YES"/></entity>"#)
        #expect(throws: ModelError.invalidDerivation(entity: "A", attribute: "n", reason: "it has no derivationExpression")) {
            try ManagedObjectModel(xmlData: xml, source: "test")
        }
    }

    @Test func canonicalFoldsCaseAndDiacritics() throws {
        let canonical = try QueryExpression(format: "canonical:(name)")
        #expect(try canonical.evaluate(with: ["name": "Crème BRÛLÉE"]) as? String == "creme brulee")
        #expect(try canonical.evaluate(with: ["name": 3]) == nil)
        #expect(canonical.expressionFormat == "canonical:(name)")
    }
}
