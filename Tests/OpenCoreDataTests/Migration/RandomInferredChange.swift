import Foundation
@testable import OpenCoreData

/// A random inferred change for the migration property tests (shared by the SQLite suite and, through a
/// link, the PostgreSQL one): a random first version of a small model, a second version changing it as an
/// inferred mapping can, random objects of the first version, and the same objects as the second version
/// spells them (the reference: a plain Swift transformation, no migration code).
struct RandomInferredChange {
    /// One object: its entity, its identity (the value of its `key` attribute), attribute values and links.
    struct Object {
        var entity: String
        var key: String
        var values: [String: Any] = [:]
        var links: [String: [String]] = [:]
    }

    struct Attribute {
        var name: String
        var type: String
        var optional: Bool
        var defaultText: String?
        var renamedFrom: String?
    }

    enum LinkKind: CaseIterable { case toOne, toMany, oneToMany, manyToOne, manyToMany }

    struct Version {
        var entityNames: [String]
        var renamedFrom: [String?]
        var attributes: [[Attribute]]
        var link: String
        var linkRenamedFrom: String?
        var kind: LinkKind

        var xml: String {
            var entities: [String] = []
            for (index, name) in entityNames.enumerated() {
                var body = #"<attribute name="key" attributeType="String"/>"#
                for attribute in attributes[index] {
                    body += #"<attribute name="\#(attribute.name)" \#(attribute.optional ? #"optional="YES" "# : "")attributeType="\#(attribute.type)""#
                        + (attribute.defaultText.map { #" defaultValueString="\#($0)""# } ?? "")
                        + (attribute.renamedFrom.map { #" elementID="\#($0)""# } ?? "") + "/>"
                }
                let renamed = renamedFrom[index].map { #" elementID="\#($0)""# } ?? ""
                if index == 0 {
                    let toMany = kind == .toOne || kind == .manyToOne ? #"maxCount="1""# : #"toMany="YES""#
                    let inverse = [.oneToMany, .manyToOne, .manyToMany].contains(kind) ? #" inverseName="back""# : ""
                    body += #"<relationship name="\#(link)" optional="YES" \#(toMany) destinationEntity="\#(entityNames[1])"\#(inverse)"#
                        + (linkRenamedFrom.map { #" elementID="\#($0)""# } ?? "") + "/>"
                }
                if index == 1, [.oneToMany, .manyToOne, .manyToMany].contains(kind) {
                    let toMany = kind == .oneToMany ? #"maxCount="1""# : #"toMany="YES""#
                    body += #"<relationship name="back" optional="YES" \#(toMany) destinationEntity="\#(entityNames[0])" inverseName="\#(link)"/>"#
                }
                entities.append(#"<entity name="\#(name)"\#(renamed)>"# + body + "</entity>")
            }
            return entities.joined()
        }
    }

    static let types = ["Integer 16", "Integer 32", "Integer 64", "Boolean", "Float", "Double", "String"]
    static let widening: [String: [String]] = [
        "Integer 16": ["Integer 32", "Integer 64", "Double", "Float"], "Integer 32": ["Integer 64", "Double", "Float"],
        "Integer 64": ["Double"], "Boolean": ["Integer 16", "Integer 32", "Integer 64", "Double", "Float"], "Float": ["Double"],
    ]
    static let defaults = ["Integer 16": "7", "Integer 32": "7", "Integer 64": "7", "Boolean": "YES", "Float": "1.5",
                           "Double": "1.5", "String": "dflt"]

    /// The Swift value of a default text.
    static func value(defaultText text: String, type: String) -> Any {
        switch type {
        case "Integer 16": return Int16(text)!
        case "Integer 32": return Int32(text)!
        case "Integer 64": return Int64(text)!
        case "Boolean": return text == "YES"
        case "Float": return Float(text)!
        case "Double": return Double(text)!
        default: return text
        }
    }

    static func randomValue(_ type: String, using random: inout SeededGenerator) -> Any {
        let number = Int.random(in: -1000...1000, using: &random)
        switch type {
        case "Integer 16": return Int16(number)
        case "Integer 32": return Int32(number)
        case "Integer 64": return Int64(number)
        case "Boolean": return Bool.random(using: &random)
        case "Float": return Float(number) / 4
        case "Double": return Double(number) / 8
        default: return "s\(number)"
        }
    }

    /// A value of `type` as `newType` holds it (the reference for the accepted conversions).
    static func convert(_ value: Any, from type: String, to newType: String) -> Any {
        let number: Double = switch value {
        case let v as Int16: Double(v)
        case let v as Int32: Double(v)
        case let v as Int64: Double(v)
        case let v as Bool: v ? 1 : 0
        case let v as Float: Double(v)
        case let v as Double: v
        default: 0
        }
        switch newType {
        case type: return value
        case "Integer 16": return Int16(number)
        case "Integer 32": return Int32(number)
        case "Integer 64": return Int64(number)
        case "Float": return Float(number)
        default: return number
        }
    }

    let old: Version
    let new: Version
    let oldObjects: [Object]
    let newObjects: [Object]

    init(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed) &* 7919)
        // The first version.
        let count = Int.random(in: 2...3, using: &random)
        let old = Version(
            entityNames: (0..<count).map { "E\($0)" }, renamedFrom: Array(repeating: nil, count: count),
            attributes: (0..<count).map { entity in
                (0..<Int.random(in: 1...4, using: &random)).map { index in
                    let optional = Bool.random(using: &random)
                    let type = Self.types.randomElement(using: &random)!
                    return Attribute(name: "a\(entity)x\(index)", type: type, optional: optional,
                                     defaultText: optional ? nil : Self.defaults[type])
                }
            },
            link: "link", linkRenamedFrom: nil, kind: LinkKind.allCases.randomElement(using: &random)!)
        // The second: each attribute kept, renamed, removed, widened, made optional or required with a default;
        // maybe one added; maybe the second entity and the link renamed; the link's kind changed.
        var new = old
        if Bool.random(using: &random) {
            new.entityNames[1] = "F1"
            new.renamedFrom[1] = "E1"
        }
        if Bool.random(using: &random) {
            new.link = "linked"
            new.linkRenamedFrom = "link"
        }
        new.kind = LinkKind.allCases.randomElement(using: &random)!
        for entity in 0..<count {
            var attributes: [Attribute] = []
            for attribute in old.attributes[entity] {
                var changed = attribute
                switch Int.random(in: 0..<6, using: &random) {
                case 0: changed.name += "r"; changed.renamedFrom = attribute.name
                case 1: continue
                case 2: changed.type = Self.widening[attribute.type]?.randomElement(using: &random) ?? attribute.type
                case 3: changed.optional = true
                case 4: changed.optional = false
                default: break
                }
                changed.defaultText = changed.optional ? nil : Self.defaults[changed.type]
                attributes.append(changed)
            }
            if Bool.random(using: &random) {
                let type = Self.types.randomElement(using: &random)!
                let optional = Bool.random(using: &random)
                attributes.append(Attribute(name: "n\(entity)", type: type, optional: optional,
                                            defaultText: optional ? nil : Self.defaults[type]))
            }
            new.attributes[entity] = attributes
        }
        // Data: a few objects per entity, and links pairing objects one to one (so every kind holds them).
        var oldObjects: [Object] = []
        var newObjects: [Object] = []
        var keysByEntity: [[String]] = []
        for entity in 0..<count {
            var keys: [String] = []
            for index in 0..<Int.random(in: 0...4, using: &random) {
                let key = "k\(entity)_\(index)"
                keys.append(key)
                var values: [String: Any] = ["key": key]
                for attribute in old.attributes[entity] where !attribute.optional || Bool.random(using: &random) {
                    values[attribute.name] = Self.randomValue(attribute.type, using: &random)
                }
                var newValues: [String: Any] = ["key": key]
                for attribute in new.attributes[entity] {
                    let source = old.attributes[entity].first { $0.name == (attribute.renamedFrom ?? attribute.name) }
                    if let source, let value = values[source.name] {
                        newValues[attribute.name] = Self.convert(value, from: source.type, to: attribute.type)
                    } else if let text = attribute.defaultText {
                        newValues[attribute.name] = Self.value(defaultText: text, type: attribute.type)
                    }
                }
                oldObjects.append(Object(entity: old.entityNames[entity], key: key, values: values))
                newObjects.append(Object(entity: new.entityNames[entity], key: key, values: newValues))
            }
            keysByEntity.append(keys)
        }
        let destinations = keysByEntity[1].shuffled(using: &random)
        for index in keysByEntity[0].indices where index < destinations.count && Bool.random(using: &random) {
            oldObjects[index].links["link"] = [destinations[index]]
            newObjects[index].links[new.link] = [destinations[index]]
        }

        self.old = old
        self.new = new
        self.oldObjects = oldObjects
        self.newObjects = newObjects
    }

    /// The bundle holding the two versions (`V1`, `V2`, the current one) in `folder`, as Xcode writes it.
    func bundle(in folder: URL) throws -> URL {
        let bundle = folder.appendingPathComponent("Random.xcdatamodeld")
        for (name, entities) in [("V1", old.xml), ("V2", new.xml)] {
            let version = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try Data("""
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">\(entities)</model>
                """.utf8).write(to: version.appendingPathComponent("contents"))
        }
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>V2.xcdatamodel</string></dict></plist>
            """.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    /// Saves `objects` through a context of `coordinator` (of either store), one save each so keys follow
    /// the order given, then their links.
    static func fill(_ coordinator: PersistentStoreCoordinator, with objects: [Object]) throws {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        var made: [String: ManagedObject] = [:]
        for object in objects {
            let inserted = try context.insertNewObject(forEntityName: object.entity)
            for (key, value) in object.values { try inserted.setValue(value, forKey: key) }
            made["\(object.entity)/\(object.key)"] = inserted
            try context.save()
        }
        for object in objects where !object.links.isEmpty {
            let source = made["\(object.entity)/\(object.key)"]!
            for (name, keys) in object.links {
                let relationship = source.entity.relationshipsByName[name]!
                let targets = keys.map { made["\(relationship.destinationEntityName)/\($0)"]! }
                if relationship.isToMany {
                    try source.setValue(Set(targets), forKey: name)
                } else {
                    try source.setValue(targets.first, forKey: name)
                }
            }
        }
        try context.save()
    }

    /// Every object `coordinator` (of either store) fetches, one line each in a fixed order: entity, every
    /// attribute with its type, every relationship as the `key`s of its destinations.
    static func dump(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let model = coordinator.managedObjectModel
        var lines: [String] = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            var entityLines: [String] = []
            for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity.name)) {
                var parts = [entity.name]
                for property in entity.allProperties.sorted(by: { $0.name < $1.name }) {
                    switch try object.value(forKey: property.name) {
                    case let other as ManagedObject: parts.append("\(property.name)->\(try other.value(forKey: "key") ?? "nil")")
                    case let set as Set<ManagedObject>:
                        parts.append("\(property.name)->{\(try set.map { "\(try $0.value(forKey: "key") ?? "nil")" }.sorted().joined(separator: ","))}")
                    case nil: parts.append("\(property.name)=nil")
                    case let value?: parts.append("\(property.name)=\(value) (\(type(of: value)))")
                    }
                }
                entityLines.append(parts.joined(separator: " "))
            }
            lines += entityLines.sorted()
        }
        return lines
    }
}
