import Foundation

/// A Core Data XML store file as written, before any model is applied: its `<databaseInfo>` and its
/// `<object>` elements with their `<attribute>` and `<relationship>` children, every value still text.
///
/// Core Data's XML store (`NSXMLStoreType`) and Xcode's `xcmapping.xml` share this layout. Parsing checks
/// only the layout: one `<database>` root, ids present and unique, no element a Core Data XML store never
/// holds, no property named twice in one object. What the values mean is for ``XMLStoreContents``.
struct XMLStoreDocument {
    /// `<databaseInfo>`: Core Data's bookkeeping.
    struct Info {
        /// `<version>`: the store format version Core Data wrote (134481920 in every file seen).
        var version: String?
        /// `<UUID>`: the store's identity.
        var uuid: String?
        /// `<nextObjectID>`: the number the next new object's id (`z` and the number) takes.
        var nextObjectID: Int?
        /// `<metadata>`'s property list (version hashes, identifiers and the app's keys).
        var metadata: [String: PropertyListValue] = [:]
    }

    /// `<attribute name="…" type="…">text</attribute>`.
    struct Attribute {
        var name: String
        var type: String?
        var text: String
        var location: String
    }

    /// `<relationship name="…" type="1/1" destination="…" idrefs="z1 z2">`.
    struct Relationship {
        var name: String
        var type: String?
        var destination: String?
        var idrefs: [String]
        var location: String
    }

    /// `<object type="ENTITY" id="z102">`.
    struct Object {
        var id: String
        /// The entity's name as the file spells it (Core Data writes it in capitals).
        var type: String
        var location: String
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
    }

    var info = Info()
    /// In file order.
    var objects: [Object] = []

    /// Reads the file's bytes. Entity declarations, an internal DTD subset and CDATA sections are refused
    /// (Core Data writes none); the `<!DOCTYPE>` Core Data writes, which names
    /// `file:///System/Library/DTDs/CoreData.dtd`, is blanked out before parsing, so that no DTD is ever read.
    ///
    /// - Throws: ``XMLStoreError/malformed(path:location:reason:)`` or
    ///   ``XMLStoreError/invalidObject(path:objectID:key:reason:)`` naming the line and the object.
    static func parse(_ data: Data, path: String) throws -> XMLStoreDocument {
        func malformed(_ location: String, _ reason: String) -> XMLStoreError {
            .malformed(path: path, location: location, reason: reason)
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw malformed("the file", "it is not valid UTF-8 text")
        }
        let parseable = try withoutDocumentType(text, path: path)
        let root: XcodeModelXMLNode
        do {
            root = try XcodeModelXMLNode.parse(Data(parseable.utf8), source: path)
        } catch ModelError.malformedModelFile(_, let reason) {
            throw malformed("the file", reason)
        }
        guard root.name.lowercased() == "database" else {
            throw malformed(root.location, "the root element is <\(root.name)>, not <database>")
        }
        var document = XMLStoreDocument()
        var seenIDs: [String: String] = [:]
        var seenInfo = false
        for node in root.children {
            switch node.name.lowercased() {
            case "databaseinfo":
                guard !seenInfo else { throw malformed(node.location, "a second <databaseInfo>") }
                seenInfo = true
                document.info = try readInfo(node, path: path)
            case "object":
                guard let id = node["id"], !id.isEmpty else { throw malformed(node.location, "the object has no id") }
                if let first = seenIDs[id] {
                    throw XMLStoreError.invalidObject(path: path, objectID: id, key: nil,
                                                      reason: "two objects have the id '\(id)' (at \(first) and \(node.location))")
                }
                seenIDs[id] = node.location
                document.objects.append(try readObject(node, id: id, path: path))
            default:
                throw malformed(node.location, "a <\(node.name)> in <database>, which a Core Data XML store does not have")
            }
        }
        return document
    }

    private static func readObject(_ node: XcodeModelXMLNode, id: String, path: String) throws -> Object {
        func invalid(_ key: String?, _ reason: String) -> XMLStoreError {
            .invalidObject(path: path, objectID: id, key: key, reason: reason)
        }
        guard let type = node["type"], !type.isEmpty else { throw invalid(nil, "the object at \(node.location) has no type (entity)") }
        var object = Object(id: id, type: type, location: node.location)
        var names: Set<String> = []
        for child in node.children {
            let kind = child.name.lowercased()
            guard kind == "attribute" || kind == "relationship" else {
                throw invalid(nil, "the object '\(id)' holds a <\(child.name)> at \(child.location), which a Core Data XML store does not have")
            }
            guard let name = child["name"], !name.isEmpty else {
                throw invalid(nil, "the <\(child.name)> at \(child.location) has no name")
            }
            // Core Data matches names without regard to case (it writes them in lower case).
            guard names.insert(name.lowercased()).inserted else {
                throw invalid(name, "the object '\(id)' holds '\(name)' twice (the second at \(child.location))")
            }
            if let nested = child.children.first {
                throw invalid(name, "a <\(nested.name)> inside <\(child.name)> at \(nested.location)")
            }
            if kind == "attribute" {
                object.attributes.append(Attribute(name: name, type: child["type"], text: child.text, location: child.location))
            } else {
                let idrefs = (child["idrefs"] ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
                object.relationships.append(Relationship(name: name, type: child["type"], destination: child["destination"],
                                                         idrefs: idrefs, location: child.location))
            }
        }
        return object
    }

    private static func readInfo(_ node: XcodeModelXMLNode, path: String) throws -> Info {
        var info = Info()
        for child in node.children {
            let text = child.text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch child.name.lowercased() {
            case "version": info.version = text
            case "uuid": info.uuid = text
            case "nextobjectid":
                guard let number = Int(text), number >= 0 else {
                    throw XMLStoreError.malformed(path: path, location: child.location,
                                                  reason: "<nextObjectID> is '\(text.prefix(40))', not a count")
                }
                info.nextObjectID = number
            case "metadata":
                guard let plist = child.children.first else { continue }
                info.metadata = try XMLPropertyList.dictionary(from: plist, path: path)
            default:
                throw XMLStoreError.malformed(path: path, location: child.location,
                                              reason: "a <\(child.name)> in <databaseInfo>, which Core Data does not write")
            }
        }
        return info
    }

    /// The text with its `<!DOCTYPE …>` replaced by spaces (lines kept, so positions stay right).
    private static func withoutDocumentType(_ text: String, path: String) throws -> String {
        for refused in ["<!ENTITY", "<![CDATA["] {
            if let found = text.range(of: refused) {
                throw XMLStoreError.malformed(path: path, location: "line \(line(of: found.lowerBound, in: text))",
                                              reason: "a \(refused), which a Core Data XML store never holds")
            }
        }
        guard let start = text.range(of: "<!DOCTYPE") else { return text }
        guard let end = text[start.upperBound...].firstIndex(of: ">") else {
            throw XMLStoreError.malformed(path: path, location: "line \(line(of: start.lowerBound, in: text))",
                                          reason: "an unterminated <!DOCTYPE>")
        }
        if text[start.upperBound..<end].contains("[") {
            throw XMLStoreError.malformed(path: path, location: "line \(line(of: start.lowerBound, in: text))",
                                          reason: "a <!DOCTYPE> with declarations of its own, which Core Data never writes")
        }
        let blank = text[start.lowerBound...end].map { $0.isNewline ? String($0) : " " }.joined()
        return String(text[..<start.lowerBound]) + blank + String(text[text.index(after: end)...])
    }

    private static func line(of index: String.Index, in text: String) -> Int {
        text[..<index].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }
}
