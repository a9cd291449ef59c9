import Foundation

/// The rows of a store's tables as the objects of a Core Data XML store, and the file's text. Objects keep
/// the ids the file gave them; new ones take `z` and the next object number, as Core Data numbers them.
struct XMLStoreRowExport {
    /// One `<object>` to write.
    struct Object {
        var id: String
        var entity: String
        var attributes: [(name: String, type: XMLStoreValueType, text: String)] = []
        var relationships: [(name: String, toMany: Bool, destination: String, ids: [String])] = []
    }

    private let model: ManagedObjectModel
    private let path: String
    private(set) var idsByTable: [String: [Int64: String]]
    private(set) var usedIDs: Set<String>
    private(set) var nextObjectID: Int

    init(model: ManagedObjectModel, path: String, idsByTable: [String: [Int64: String]], usedIDs: Set<String>, nextObjectID: Int) {
        self.model = model
        self.path = path
        self.idsByTable = idsByTable
        self.usedIDs = usedIDs
        self.nextObjectID = nextObjectID
    }

    /// Every object of the store, in id order.
    ///
    /// - Throws: ``XMLStoreError/unwritableValue(path:entity:key:reason:)`` for a value the XML layout cannot
    ///   hold (a type without a spelling, text with characters XML cannot carry); what the session throws.
    mutating func objects(in session: some SQLSession) throws -> [Object] {
        func keys(_ sql: String, _ arguments: [StoreValue] = []) throws -> [Int64] {
            try session.rows(sql, arguments).compactMap { Int64.fromStoreValue($0[0]) }
        }
        let schema = model.schema
        let entities = model.entities.filter { !$0.isAbstract }
        // Ids first: a relationship may lead to an object written later.
        var ids: [String: [Int64: String]] = [:]
        for table in Set(entities.map { schema.mapping(for: $0).tableName }).sorted() {
            let known = idsByTable[table] ?? [:]
            for key in try keys("SELECT Z_PK FROM \(SQLIdentifier.quoted(table)) ORDER BY Z_PK") {
                ids[table, default: [:]][key] = known[key] ?? newID()
            }
        }
        idsByTable = ids
        func id(in table: String, _ key: Int64) -> String? { ids[table]?[key] }

        var objects: [Object] = []
        for entity in entities {
            let mapping = schema.mapping(for: entity)
            let rows = try session.rows("SELECT * FROM \(SQLIdentifier.quoted(mapping.tableName)) WHERE Z_ENT = ? ORDER BY Z_PK",
                                        [entity.entityNumber.storeValue])
            for row in rows {
                guard let key = Int64.fromStoreValue(row[0]), let objectID = id(in: mapping.tableName, key) else { continue }
                var object = Object(id: objectID, entity: entity.name.uppercased())
                for (slot, property) in entity.allProperties.enumerated() {
                    let name = property.name.lowercased()
                    switch mapping.storage[slot] {
                    case .attribute(_, let column):
                        guard let attribute = property as? AttributeDescription else { continue }
                        let value = row[column]
                        if value.isNull { continue }
                        guard let type = XMLStoreValueType(attribute.attributeType) else {
                            throw XMLStoreError.unwritableValue(path: path, entity: entity.name, key: property.name,
                                                                reason: "the XML store has no spelling for \(attribute.attributeType.rawValue) values")
                        }
                        guard let text = type.text(of: value), let escaped = XMLStoreText.escapedIfPossible(text) else {
                            throw XMLStoreError.unwritableValue(path: path, entity: entity.name, key: property.name,
                                                                reason: "the value of object '\(objectID)' holds characters XML cannot carry")
                        }
                        object.attributes.append((name, type, escaped))
                    case .toOne(_, let column, _, _):
                        guard let relationship = property as? RelationshipDescription, let destination = relationship.destinationEntity else { continue }
                        let target = Int64.fromStoreValue(row[column])
                        let table = schema.mapping(for: destination).tableName
                        object.relationships.append((name, false, destination.name.uppercased(),
                                                     target.flatMap { id(in: table, $0) }.map { [$0] } ?? []))
                    case .toManyByForeignKey(let table, let column, let orderColumn):
                        guard let relationship = property as? RelationshipDescription, let destination = relationship.destinationEntity else { continue }
                        let order = orderColumn.map { "\(SQLIdentifier.quoted($0)), Z_PK" } ?? "Z_PK"
                        let keys = try keys("SELECT Z_PK FROM \(SQLIdentifier.quoted(table)) WHERE \(SQLIdentifier.quoted(column)) = ? ORDER BY \(order)",
                                            [key.storeValue])
                        object.relationships.append((name, true, destination.name.uppercased(), keys.compactMap { id(in: table, $0) }))
                    case .toManyByJoinTable(let join):
                        guard let relationship = property as? RelationshipDescription, let destination = relationship.destinationEntity else { continue }
                        let table = schema.mapping(for: destination).tableName
                        let order = join.orderColumn.map { "\(SQLIdentifier.quoted($0)), " } ?? ""
                        let keys = try keys("SELECT \(SQLIdentifier.quoted(join.destinationColumn)) FROM \(SQLIdentifier.quoted(join.name)) WHERE \(SQLIdentifier.quoted(join.sourceColumn)) = ? ORDER BY \(order)\(SQLIdentifier.quoted(join.destinationColumn))",
                                            [key.storeValue])
                        object.relationships.append((name, true, destination.name.uppercased(), keys.compactMap { id(in: table, $0) }))
                    case .transient:
                        continue
                    }
                }
                objects.append(object)
            }
        }
        return objects.sorted { Self.order($0.id) < Self.order($1.id) }
    }

    private mutating func newID() -> String {
        while true {
            let id = "z\(nextObjectID)"
            nextObjectID += 1
            if usedIDs.insert(id).inserted { return id }
        }
    }

    /// Ids in Core Data's order: by their number, then as text.
    private static func order(_ id: String) -> (Int, String) {
        (id.first == "z" ? Int(id.dropFirst()) ?? Int.max : Int.max, id)
    }

    /// The whole file, in Core Data's layout and indentation.
    static func documentText(info: XMLStoreDocument.Info, objects: [Object]) -> String {
        var out = """
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

        <database>
            <databaseInfo>
                <version>\(XMLStoreText.escaped(info.version ?? XMLStoreFile.formatVersion))</version>
                <UUID>\(XMLStoreText.escaped(info.uuid ?? ""))</UUID>
                <nextObjectID>\(info.nextObjectID ?? XMLStoreFile.firstObjectNumber)</nextObjectID>
                <metadata>

        """
        out += XMLPropertyList.text(of: info.metadata, indent: 12)
        out += "        </metadata>\n    </databaseInfo>\n"
        for object in objects {
            out += "    <object type=\"\(XMLStoreText.escaped(object.entity))\" id=\"\(XMLStoreText.escaped(object.id))\">\n"
            for attribute in object.attributes {
                out += "        <attribute name=\"\(XMLStoreText.escaped(attribute.name))\" type=\"\(attribute.type.rawValue)\">\(attribute.text)</attribute>\n"
            }
            for relationship in object.relationships {
                let idrefs = relationship.ids.isEmpty ? "" : " idrefs=\"\(relationship.ids.map(XMLStoreText.escaped).joined(separator: " "))\""
                out += "        <relationship name=\"\(XMLStoreText.escaped(relationship.name))\" type=\"\(XMLStoreRelationshipKind.spelling(toMany: relationship.toMany))\" destination=\"\(XMLStoreText.escaped(relationship.destination))\"\(idrefs)></relationship>\n"
            }
            out += "    </object>\n"
        }
        out += "</database>\n"
        return out
    }
}
