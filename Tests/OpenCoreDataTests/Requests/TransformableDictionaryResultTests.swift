import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A dictionary-result fetch of a Transformable attribute gives the transformed value, as Core Data does,
/// not the stored bytes; bytes the transformer cannot read give the typed error naming entity, key and row.
@Suite struct TransformableDictionaryResultTests {
    static let xml = InteropFixtures.modelXML("""
    <entity name="Owner" representedClassName="Owner">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="badge" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData"/>
        <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="owner" inverseEntity="Note"/>
    </entity>
    <entity name="Note" representedClassName="Note">
        <attribute name="title" optional="YES" attributeType="String"/>
        <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="NSArray"/>
        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Owner" inverseName="notes" inverseEntity="Owner"/>
    </entity>
    """)

    static func stack() throws -> TestStack {
        let stack = try TestStack(model: ManagedObjectModel(xmlData: xml, source: "transformable-dictionaries"))
        let context = stack.context()
        let owner = try context.insertNewObject(forEntityName: "Owner")
        try owner.setValue("Ann", forKey: "name")
        try owner.setValue(["level": 3], forKey: "badge")
        for (title, tags) in [("a", ["red", "blue"] as [String]?), ("b", nil), ("c", [])] {
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue(title, forKey: "title")
            try note.setValue(tags, forKey: "tags")
            try note.setValue(owner, forKey: "owner")
        }
        try context.save()
        return stack
    }

    func request(_ keys: [String]) -> OpenCoreData.FetchRequest<[String: Any]> {
        let request = OpenCoreData.FetchRequest<[String: Any]>(entityName: "Note")
        request.resultType = .dictionary
        request.propertiesToFetch = keys
        request.sortDescriptors = [QuerySortDescriptor(key: "title")]
        return request
    }

    @Test func transformableValuesComeBackTransformed() throws {
        let stack = try Self.stack()
        let rows = try stack.context().fetch(request(["title", "tags", "owner.badge"]))
        #expect(rows.count == 3)
        #expect(rows[0]["tags"] as? [String] == ["red", "blue"])
        #expect(rows[1]["tags"] == nil)
        #expect((rows[2]["tags"] as? [Any])?.isEmpty == true)
        for row in rows {
            #expect((row["owner.badge"] as? [String: Any])?["level"] as? Int == 3)
        }
        // All attributes when none are named.
        let all = try stack.context().fetch(request([]).withAllProperties())
        #expect(all[0]["tags"] as? [String] == ["red", "blue"])
    }

    @Test func undecodableBytesAreATypedErrorNamingTheRow() throws {
        let stack = try Self.stack()
        let key = try DatabaseQueue(path: stack.url.path).write { db -> Int64 in
            try db.execute(sql: "UPDATE ZNOTE SET ZTAGS = ? WHERE ZTITLE = 'c'", arguments: [Data("not an archive".utf8)])
            return try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ZNOTE WHERE ZTITLE = 'c'")!
        }
        #expect {
            try stack.context().fetch(request(["title", "tags"]))
        } throws: { error in
            guard case ObjectGraphError.undecodableValue(let entity, let name, let object, _) = error else { return false }
            return entity == "Note" && name == "tags" && object.primaryKey == key
        }
    }
}

extension OpenCoreData.FetchRequest {
    /// The request fetching every attribute (no `propertiesToFetch`).
    fileprivate func withAllProperties() -> OpenCoreData.FetchRequest<Result> {
        propertiesToFetch = nil
        return self
    }
}
