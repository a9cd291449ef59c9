import Foundation
import Testing
@testable import OpenCoreData

/// Reading Core Data XML stores: the model their objects describe, and hostile files refused with typed
/// errors naming the object and key.
struct XMLStoreReadingTests {
    /// A file of two entities, a person whose `pets` lists both pets and pets whose `owner` names the person.
    static func store(_ objects: String, info: String = "") -> Data {
        Data("""
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
        <database>
            <databaseInfo><version>134481920</version><UUID>2CB996DF-63DA-4182-BC5B-7CB919C1BB09</UUID><nextObjectID>110</nextObjectID>\(info)</databaseInfo>
        \(objects)
        </database>
        """.utf8)
    }

    static let people = """
        <object type="PERSON" id="z101">
            <attribute name="name" type="string">Ann &amp; Bo</attribute>
            <attribute name="age" type="int32">41</attribute>
            <attribute name="born" type="date">336046917.00164198875427246094</attribute>
            <attribute name="photo" type="binary">AAEC
            /w==</attribute>
            <relationship name="pets" type="0/0" destination="PET" idrefs="z102 z103"></relationship>
        </object>
        <object type="PET" id="z102">
            <attribute name="name" type="string">Rex</attribute>
            <relationship name="owner" type="1/1" destination="PERSON" idrefs="z101"></relationship>
        </object>
        <object type="PET" id="z103">
            <relationship name="owner" type="1/1" destination="PERSON" idrefs="z101"></relationship>
        </object>
        """

    static func read(_ data: Data) throws -> (ManagedObjectModel, XMLStoreContents) {
        let document = try XMLStoreDocument.parse(data, path: "t.xml")
        let model = try XMLStoreModelDerivation.model(of: document, path: "t.xml")
        return (model, try XMLStoreContents(document: document, model: model, path: "t.xml"))
    }

    static func failure(_ data: Data) -> XMLStoreError? {
        do {
            _ = try read(data)
            return nil
        } catch let error as XMLStoreError {
            return error
        } catch {
            Issue.record("not an XMLStoreError: \(error)")
            return nil
        }
    }

    @Test func theObjectsDescribeTheirModel() throws {
        let (model, contents) = try Self.read(Self.store(Self.people))
        let person = try #require(model.entitiesByName["PERSON"])
        let pet = try #require(model.entitiesByName["PET"])
        #expect((person.propertiesByName["age"] as? AttributeDescription)?.attributeType == .integer32)
        #expect((person.propertiesByName["born"] as? AttributeDescription)?.attributeType == .date)
        let pets = try #require(person.propertiesByName["pets"] as? RelationshipDescription)
        #expect(pets.isToMany && pets.destinationEntity === pet)
        #expect(pets.inverseRelationship?.name == "owner")
        #expect(contents.objects.map(\.fileID) == ["z101", "z102", "z103"])
        let ann = contents.objects[0]
        #expect(ann.values[person.slotByName["name"]!] == "Ann & Bo".storeValue)
        #expect(ann.values[person.slotByName["photo"]!] == Data([0, 1, 2, 255]).storeValue)
        #expect(ann.values[person.slotByName["born"]!] == 336046917.00164198875427246094.storeValue)
        #expect(ann.targets[person.slotByName["pets"]!] == [1, 2])
    }

    @Test func entityNamesTakeTheSpellingOfTheVersionHashes() throws {
        let info = "<metadata><plist version=\"1.0\"><dict><key>NSStoreModelVersionHashes</key><dict><key>Person</key><data>AAAA</data><key>Pet</key><data>AAAA</data></dict></dict></plist></metadata>"
        let (model, _) = try Self.read(Self.store(Self.people, info: info))
        #expect(Set(model.entities.map(\.name)) == ["Person", "Pet"])
    }

    @Test func inverseIsLeftUnsetWhereTheSidesDisagree() throws {
        let lopsided = Self.people.replacingOccurrences(of: #"idrefs="z102 z103""#, with: #"idrefs="z102""#)
        let (model, _) = try Self.read(Self.store(lopsided))
        #expect((model.entitiesByName["PERSON"]?.propertiesByName["pets"] as? RelationshipDescription)?.inverseRelationship == nil)
    }

    @Test func hostileObjectsNameTheObjectAndKey() {
        func expectObject(_ objects: String, _ id: String, _ key: String?, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
            guard case .invalidObject(_, let objectID, let culprit, let text)? = Self.failure(Self.store(objects)) else {
                Issue.record("not refused as an invalid object", sourceLocation: sourceLocation)
                return
            }
            #expect(objectID == id, sourceLocation: sourceLocation)
            #expect(culprit == key, sourceLocation: sourceLocation)
            #expect(text.contains(reason), "\(text)", sourceLocation: sourceLocation)
        }
        expectObject(Self.people.replacingOccurrences(of: "z102 z103", with: "z102 z999"), "z101", "pets", "'z999', which is no object")
        expectObject(Self.people.replacingOccurrences(of: #"id="z103""#, with: #"id="z102""#), "z102", nil, "two objects have the id")
        expectObject(Self.people.replacingOccurrences(of: #"type="int32""#, with: #"type="int128""#), "z101", "age", "'int128'")
        expectObject(Self.people.replacingOccurrences(of: ">41<", with: ">forty<"), "z101", "age", "'forty' is not an int32")
        expectObject(Self.people.replacingOccurrences(of: ">41<", with: ">99999999999<"), "z101", "age", "is not an int32")
        expectObject(Self.people.replacingOccurrences(of: #"type="0/0""#, with: #"type="many""#), "z101", "pets", "'many'")
        expectObject(Self.people.replacingOccurrences(of: #"destination="PET""#, with: #"destination="DOG""#), "z101", "pets", "'DOG' does not exist")
        expectObject(Self.people.replacingOccurrences(of: #"idrefs="z101"></relationship>"#, with: #"idrefs="z101 z104"></relationship>"#)
                     + #"<object type="PERSON" id="z104"></object>"#,
                     "z102", "owner", "a to-one relationship refers to 2 objects")
        expectObject(Self.people.replacingOccurrences(of: #"<attribute name="age" type="int32">41</attribute>"#,
                                                      with: #"<attribute name="age" type="int32">41</attribute><attribute name="AGE" type="int32">4</attribute>"#),
                     "z101", "AGE", "twice")
        expectObject(Self.people.replacingOccurrences(of: "AAEC", with: "A!!!"), "z101", "photo", "base64")
        expectObject(Self.people.replacingOccurrences(of: "336046917.00164198875427246094", with: "1e999"), "z101", "born", "is not a date")
    }

    @Test func hostileFilesAreRefusedAsMalformed() throws {
        func expectMalformed(_ data: Data, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
            guard case .malformed(_, _, let text)? = Self.failure(data) else {
                Issue.record("not refused as malformed", sourceLocation: sourceLocation)
                return
            }
            #expect(text.contains(reason), "\(text)", sourceLocation: sourceLocation)
        }
        expectMalformed(Data("not xml at all".utf8), "invalid XML")
        expectMalformed(Data("<model></model>".utf8), "not <database>")
        expectMalformed(Data([0x3C, 0xFF, 0xFE, 0x3E]), "UTF-8")
        let laughs = """
            <?xml version="1.0"?><!DOCTYPE database [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>
            <database><object type="A" id="z1"><attribute name="s" type="string">&b;</attribute></object></database>
            """
        expectMalformed(Data(laughs.utf8), "<!ENTITY")
        expectMalformed(Self.store(String(repeating: "<x>", count: 200) + String(repeating: "</x>", count: 200)), "nested deeper")
        expectMalformed(Self.store("<junk/>"), "<junk>")
        expectMalformed(Self.store(#"<object type="A" id="z1"><attribute name="s" type="string"><![CDATA[x]]></attribute></object>"#), "CDATA")
    }

    /// The DOCTYPE Core Data writes names a DTD file; none is ever read, so an entity it would define is
    /// never expanded from the disk.
    @Test func theDocumentTypesDTDIsNeverRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("xml-dtd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let dtd = folder.appendingPathComponent("CoreData.dtd")
        try Data("<!ENTITY secret \"LEAKED\">".utf8).write(to: dtd)
        let file = """
            <?xml version="1.0" standalone="no"?>
            <!DOCTYPE database SYSTEM "\(dtd.absoluteString)">
            <database><object type="A" id="z1"><attribute name="s" type="string">&secret;</attribute></object></database>
            """
        do {
            let (_, contents) = try Self.read(Data(file.utf8))
            #expect(!contents.objects.contains { $0.values.values.contains("LEAKED".storeValue) })
        } catch let error as XMLStoreError {
            guard case .malformed = error else { Issue.record("\(error)"); return }
        }
    }

    @Test func largeBinaryValuesRead() throws {
        let bytes = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let objects = #"<object type="BLOB" id="z1"><attribute name="bytes" type="binary">\#(bytes.base64EncodedString(options: .lineLength76Characters))</attribute></object>"#
        let (model, contents) = try Self.read(Self.store(objects))
        let slot = try #require(model.entitiesByName["BLOB"]?.slotByName["bytes"])
        #expect(contents.objects.first?.values[slot] == bytes.storeValue)
    }

    @Test func aGivenModelIsChecked() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Person", properties: [AttributeDescription(name: "name", type: .string)]),
        ])
        let document = try XMLStoreDocument.parse(Self.store(#"<object type="PERSON" id="z1"><attribute name="Name" type="int16">4</attribute></object>"#), path: "t.xml")
        #expect(throws: XMLStoreError.invalidObject(path: "t.xml", objectID: "z1", key: "Name",
                                                    reason: "the file holds a int16, the model's attribute is String")) {
            try XMLStoreContents(document: document, model: model, path: "t.xml")
        }
        let other = try XMLStoreDocument.parse(Self.store(#"<object type="CAR" id="z1"></object>"#), path: "t.xml")
        #expect(throws: XMLStoreError.invalidObject(path: "t.xml", objectID: "z1", key: nil, reason: "its entity 'CAR' is not in the model")) {
            try XMLStoreContents(document: other, model: model, path: "t.xml")
        }
    }
}
