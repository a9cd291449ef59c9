import Foundation

extension ManagedObjectModel {
    /// The model as the `contents` file of an Xcode `.xcdatamodel` (the XML form Xcode writes), so that a model
    /// loaded from a compiled `.mom`/`.momd`, a store's `Z_MODELCACHE` or built in code can be opened, versioned
    /// and edited in Xcode. Loading the result gives a model with the same entities, properties and version
    /// hashes (docs/INTEROP.md lists what a compiled model does not carry).
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(compiledModelAt: momdURL)
    /// try model.writeModelBundle(to: URL(fileURLWithPath: "App.xcdatamodeld"), versionName: "App")
    /// ```
    public func xcodeModelXML() -> Data {
        Data(XcodeModelWriter(model: self).document().utf8)
    }

    /// Writes the model as a one-version `.xcdatamodeld` bundle at `url`: `<versionName>.xcdatamodel/contents`
    /// and the `.xccurrentversion` marker naming it.
    ///
    /// - Throws: what ``writeModelBundle(versions:currentVersion:to:)`` throws.
    public func writeModelBundle(to url: URL, versionName: String) throws {
        try ManagedObjectModel.writeModelBundle(versions: [(versionName, self)], currentVersion: versionName, to: url)
    }

    /// Writes a `.xcdatamodeld` bundle at `url` with one `.xcdatamodel` folder per version and the
    /// `.xccurrentversion` marker naming `currentVersion`; either all of it is written or nothing is left.
    ///
    /// - Throws: ``ModelError/malformedModelFile(path:reason:)`` naming `url` when something already exists
    ///   there (nothing is overwritten), when a version name is empty, holds a `/` or is given twice, when
    ///   `currentVersion` is not one of them, when a name or value of a model holds a character an XML file
    ///   cannot (a control character, NUL, a noncharacter; named with its entity and property), or when the
    ///   files cannot be written.
    public static func writeModelBundle(versions: [(name: String, model: ManagedObjectModel)], currentVersion: String,
                                        to url: URL) throws {
        let fileManager = FileManager.default
        guard !fileManager.fileExists(atPath: url.path) else {
            throw ModelError.malformedModelFile(path: url.path, reason: "something already exists there; nothing was written")
        }
        var names = Set<String>()
        for (name, _) in versions where name.isEmpty || name.contains("/") || !names.insert(name).inserted {
            throw ModelError.malformedModelFile(path: url.path, reason: "'\(name)' is not a version name, or is given twice")
        }
        guard names.contains(currentVersion) else {
            throw ModelError.malformedModelFile(path: url.path, reason: "the current version '\(currentVersion)' is not one of the versions written")
        }
        let documents = try versions.map { name, model in
            let document = XcodeModelWriter(model: model).document()
            if let problem = XcodeModelWriter.unwritableCharacter(in: document) {
                throw ModelError.malformedModelFile(path: url.path, reason: "version '\(name)': \(problem); nothing was written")
            }
            return (name, Data(document.utf8))
        }
        do {
            for (name, document) in documents {
                let folder = url.appendingPathComponent(name + ".xcdatamodel", isDirectory: true)
                try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
                try document.write(to: folder.appendingPathComponent("contents"))
            }
            let marker = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>_XCCurrentVersionName</key>
            \t<string>\(XcodeModelWriter.escaped(currentVersion)).xcdatamodel</string>
            </dict>
            </plist>

            """
            try Data(marker.utf8).write(to: url.appendingPathComponent(".xccurrentversion"))
        } catch {
            try? fileManager.removeItem(at: url)
            throw ModelError.malformedModelFile(path: url.path, reason: "cannot be written: \(error)")
        }
    }
}

/// Writes a model's entities, properties, constraints and indexes as Xcode's XML, attribute for attribute
/// what ``XcodeModelLoader`` reads.
struct XcodeModelWriter {
    let model: ManagedObjectModel
    /// Each composite attribute's type name in the file, and the `<composite>` definitions, in first-use order.
    private let compositeTypeNames: [ObjectIdentifier: String]
    private let compositeTypes: [(name: String, composite: CompositeAttributeDescription)]

    init(model: ManagedObjectModel) {
        self.model = model
        // A composite declared in code has no type name: its attribute's name with a capital is used. Two
        // composites wanting one name with different elements get numbered names, so neither is lost.
        var names: [ObjectIdentifier: String] = [:]
        var types: [(name: String, composite: CompositeAttributeDescription)] = []
        func visit(_ composite: CompositeAttributeDescription) {
            for case let nested as CompositeAttributeDescription in composite.elements { visit(nested) }
            let wanted = composite.compositeTypeName ?? composite.name.prefix(1).uppercased() + composite.name.dropFirst()
            var name = wanted, suffix = 1
            while let taken = types.first(where: { $0.name == name }) {
                if XcodeModelWriter.sameElements(taken.composite, composite, names: names) {
                    names[ObjectIdentifier(composite)] = name
                    return
                }
                suffix += 1
                name = wanted + String(suffix)
            }
            names[ObjectIdentifier(composite)] = name
            types.append((name, composite))
        }
        for entity in model.entities {
            for case let composite as CompositeAttributeDescription in entity.properties { visit(composite) }
        }
        compositeTypeNames = names
        compositeTypes = types
    }

    /// Whether two composites would write the same `<composite>` body.
    private static func sameElements(_ a: CompositeAttributeDescription, _ b: CompositeAttributeDescription,
                                     names: [ObjectIdentifier: String]) -> Bool {
        let writer = { (composite: CompositeAttributeDescription) -> [String] in
            composite.elements.map { element in
                "\(element.name)|\(element.attributeType.rawValue)|\(element.isOptional)|"
                    + "\(element.defaultValue.flatMap(modelFileText) ?? "")|"
                    + "\((element as? CompositeAttributeDescription).flatMap { names[ObjectIdentifier($0)] } ?? "")"
            }
        }
        return writer(a) == writer(b)
    }

    func document() -> String {
        var lines = [#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#]
        var root: [(String, String)] = [("type", "com.apple.IDECoreDataModeler.DataModel"), ("documentVersion", "1.0"),
                                        ("minimumToolsVersion", "Automatic"), ("sourceLanguage", "Swift")]
        if let identifier = model.versionIdentifiers.first { root.append(("userDefinedModelVersionIdentifier", identifier)) }
        lines.append("<model\(Self.attributes(root))>")
        for entity in model.entities { lines += self.entity(entity).map { "    " + $0 } }
        let templates = model.fetchRequestTemplatesByName
        for name in templates.keys.sorted() { lines.append("    " + Self.fetchRequestTemplate(templates[name]!, named: name)) }
        for (name, composite) in compositeTypes {
            lines.append("    <composite name=\"\(Self.escaped(name))\">")
            for element in composite.elements { lines += attribute(element).map { "        " + $0 } }
            lines.append("    </composite>")
        }
        lines.append("</model>")
        return lines.joined(separator: "\n") + "\n"
    }

    private func entity(_ entity: EntityDescription) -> [String] {
        var fields: [(String, String)] = [("name", entity.name)]
        if let className = entity.managedObjectClassName { fields.append(("representedClassName", className)) }
        if let parent = entity.superentityName { fields.append(("parentEntity", parent)) }
        if entity.isAbstract { fields.append(("isAbstract", "YES")) }
        if let modifier = entity.versionHashModifier { fields.append(("versionHashModifier", modifier)) }
        if let renaming = entity.renamingIdentifier { fields.append(("renamingIdentifier", renaming)) }
        fields.append(("syncable", "YES"))
        var lines = ["<entity\(Self.attributes(fields))>"]
        for property in entity.properties {
            if let attribute = property as? AttributeDescription {
                lines += self.attribute(attribute).map { "    " + $0 }
            } else if let relationship = property as? RelationshipDescription {
                lines += self.relationship(relationship).map { "    " + $0 }
            }
        }
        for fetched in entity.fetchedProperties {
            lines += self.fetchedProperty(fetched).map { "    " + $0 }
        }
        if !entity.uniquenessConstraints.isEmpty {
            lines.append("    <uniquenessConstraints>")
            for constraint in entity.uniquenessConstraints {
                lines.append("        <uniquenessConstraint>")
                lines += constraint.map { "            <constraint value=\"\(Self.escaped($0))\"/>" }
                lines.append("        </uniquenessConstraint>")
            }
            lines.append("    </uniquenessConstraints>")
        }
        for index in entity.indexes {
            lines.append("    <fetchIndex name=\"\(Self.escaped(index.name))\">")
            lines += index.propertyNames.map {
                "        <fetchIndexElement property=\"\(Self.escaped($0))\" type=\"Binary\" order=\"ascending\"/>"
            }
            lines.append("    </fetchIndex>")
        }
        lines += Self.userInfo(entity.userInfo).map { "    " + $0 }
        lines.append("</entity>")
        return lines
    }

    private func attribute(_ attribute: AttributeDescription) -> [String] {
        let type = attribute.attributeType
        var fields: [(String, String)] = [("name", attribute.name)]
        if attribute.isOptional { fields.append(("optional", "YES")) }
        if attribute.isTransient { fields.append(("transient", "YES")) }
        fields.append(("attributeType", type.rawValue))
        if let composite = attribute as? CompositeAttributeDescription,
           let typeName = compositeTypeNames[ObjectIdentifier(composite)] {
            fields.append(("composite", typeName))
        }
        if let value = attribute.defaultValue, let text = Self.modelFileText(value) {
            fields.append((type == .date ? "defaultDateTimeInterval" : "defaultValueString", text))
        }
        switch type {
        case .string:
            if let minimum = attribute.minLength { fields.append(("minValueString", "\(minimum)")) }
            if let maximum = attribute.maxLength { fields.append(("maxValueString", "\(maximum)")) }
        case .date:
            if let minimum = attribute.minDate { fields.append(("minDateTimeInterval", Self.number(minimum.timeIntervalSinceReferenceDate))) }
            if let maximum = attribute.maxDate { fields.append(("maxDateTimeInterval", Self.number(maximum.timeIntervalSinceReferenceDate))) }
        default:
            if let minimum = attribute.minValue { fields.append(("minValueString", Self.number(minimum))) }
            if let maximum = attribute.maxValue { fields.append(("maxValueString", Self.number(maximum))) }
        }
        if let pattern = attribute.regularExpression { fields.append(("regularExpressionString", pattern)) }
        if attribute.allowsExternalBinaryDataStorage { fields.append(("allowsExternalBinaryDataStorage", "YES")) }
        if attribute.preservesValueInHistoryOnDeletion { fields.append(("preserveAfterDeletion", "YES")) }
        if let transformer = attribute.valueTransformerName { fields.append(("valueTransformerName", transformer)) }
        if let className = attribute.customClassName { fields.append(("customClassName", className)) }
        if let derivation = attribute.derivationExpression {
            fields.append(("derived", "YES"))
            fields.append(("derivationExpression", derivation.expressionFormat))
        }
        if type.isNumeric || type == .boolean { fields.append(("usesScalarValueType", "YES")) }
        fields += Self.common(attribute)
        return Self.element("attribute", fields, children: Self.userInfo(attribute.userInfo))
    }

    private func relationship(_ relationship: RelationshipDescription) -> [String] {
        var fields: [(String, String)] = [("name", relationship.name)]
        if relationship.isOptional { fields.append(("optional", "YES")) }
        if relationship.isTransient { fields.append(("transient", "YES")) }
        if relationship.isToMany { fields.append(("toMany", "YES")) }
        if relationship.isOrdered { fields.append(("ordered", "YES")) }
        fields.append(("minCount", "\(relationship.minCount)"))
        fields.append(("maxCount", "\(relationship.maxCount)"))
        fields.append(("deletionRule", relationship.deleteRule.rawValue))
        fields.append(("destinationEntity", relationship.destinationEntityName))
        if let inverse = relationship.inverseName {
            fields.append(("inverseName", inverse))
            fields.append(("inverseEntity", relationship.destinationEntityName))
        }
        fields += Self.common(relationship)
        return Self.element("relationship", fields, children: Self.userInfo(relationship.userInfo))
    }

    private func fetchedProperty(_ property: FetchedPropertyDescription) -> [String] {
        var fields: [(String, String)] = [("name", property.name)]
        if property.isOptional { fields.append(("optional", "YES")) }
        fields += Self.common(property).filter { $0.0 != "syncable" }
        var request: [(String, String)] = [("name", "fetchedPropertyFetchRequest"), ("entity", property.entityName)]
        if let predicate = property.predicate { request.append(("predicateString", predicate.predicateFormat)) }
        return Self.element("fetchedProperty", fields,
                            children: ["<fetchRequest\(Self.attributes(request))/>"] + Self.userInfo(property.userInfo))
    }

    // MARK: Pieces

    private static func common(_ property: PropertyDescription) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let modifier = property.versionHashModifier { fields.append(("versionHashModifier", modifier)) }
        if let renaming = property.renamingIdentifier { fields.append(("renamingIdentifier", renaming)) }
        fields.append(("syncable", "YES"))
        return fields
    }

    /// A template as a top-level `<fetchRequest>`, the attributes ``XcodeModelLoader`` reads. Its flags are
    /// written whether or not they differ from the defaults, so no reader's guess of a default matters. The
    /// XML form has no place for an order, an offset or properties to fetch or group by: they are not written.
    private static func fetchRequestTemplate(_ request: FetchRequest<ManagedObject>, named name: String) -> String {
        var fields: [(String, String)] = [("name", name), ("entity", request.entityName)]
        if let predicate = request.predicate { fields.append(("predicateString", predicate.predicateFormat)) }
        if request.fetchLimit > 0 { fields.append(("fetchLimit", String(request.fetchLimit))) }
        if request.fetchBatchSize > 0 { fields.append(("fetchBatchSize", String(request.fetchBatchSize))) }
        if request.resultType != .managedObject { fields.append(("resultType", String(request.resultType.coreDataCode))) }
        for (key, value) in [("includeSubentities", request.includesSubentities),
                             ("includePendingChanges", request.includesPendingChanges),
                             ("returnObjectsAsFaults", request.returnsObjectsAsFaults),
                             ("returnDistinctResults", request.returnsDistinctResults)] {
            fields.append((key, value ? "YES" : "NO"))
        }
        return "<fetchRequest\(attributes(fields))/>"
    }

    private static func element(_ name: String, _ fields: [(String, String)], children: [String]) -> [String] {
        guard !children.isEmpty else { return ["<\(name)\(attributes(fields))/>"] }
        return ["<\(name)\(attributes(fields))>"] + children.map { "    " + $0 } + ["</\(name)>"]
    }

    private static func userInfo(_ info: [String: String]) -> [String] {
        guard !info.isEmpty else { return [] }
        return ["<userInfo>"] + info.keys.sorted().map {
            "    <entry key=\"\(escaped($0))\" value=\"\(escaped(info[$0] ?? ""))\"/>"
        } + ["</userInfo>"]
    }

    private static func attributes(_ fields: [(String, String)]) -> String {
        fields.map { " \($0.0)=\"\(escaped($0.1))\"" }.joined()
    }

    /// A default value as the model file writes it (what ``XcodeModelValue`` reads back).
    static func modelFileText(_ value: any Sendable) -> String? {
        switch value {
        case let flag as Bool: return flag ? "YES" : "NO"
        case let number as Int16: return "\(number)"
        case let number as Int32: return "\(number)"
        case let number as Int64: return "\(number)"
        case let number as Int: return "\(number)"
        case let number as Double: return number.isFinite ? "\(number)" : nil
        case let number as Float: return number.isFinite ? "\(number)" : nil
        case let decimal as Decimal: return decimal.isNaN ? nil : "\(decimal)"
        case let date as Date: return number(date.timeIntervalSinceReferenceDate)
        case let uuid as UUID: return uuid.uuidString
        case let url as URL: return url.absoluteString
        case let text as String: return text
        default: return nil
        }
    }

    /// A number without a needless fraction: `5`, not `5.0`, for whole values.
    static func number(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// The first character of `document` (written by ``document()``) that XML 1.0 cannot hold or that
    /// reads back as another (C0 controls but tab and line breaks, noncharacters such as U+FFFE), named
    /// with the entity and element holding it; nil when there is none. Such text would make a file no
    /// XML parser reads back.
    static func unwritableCharacter(in document: String) -> String? {
        var entity: String?, property: String?
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            let element = String(trimmed.dropFirst().prefix { $0.isLetter })
            if element == "entity" { entity = attribute("name", in: trimmed) }
            if ["entity", "attribute", "relationship", "fetchedProperty"].contains(element) { property = nil }
            if ["attribute", "relationship", "fetchedProperty"].contains(element) {
                property = attribute("name", in: trimmed).map { "\(element) '\($0)'" }
            }
            if let bad = line.unicodeScalars.first(where: { !isWritable($0) }) {
                let named = property != nil && element != "entry" ? nil : attribute("name", in: trimmed) ?? attribute("key", in: trimmed)
                let place = [entity.map { "entity '\($0)'" }, property, named.map { "\(element) '\($0)'" }]
                    .compactMap { $0 }.joined(separator: ", ")
                return "\(place.isEmpty ? "<\(element)>" : place) holds U+\(String(format: "%04X", bad.value)), which an XML model file cannot hold"
            }
            // A property written on one line ends there; its user info and the like follow on lines of their own.
            if trimmed.hasSuffix("/>"), element != "entry" { property = nil }
            if trimmed.hasPrefix("</entity") || trimmed.hasPrefix("</attribute") || trimmed.hasPrefix("</relationship")
                || trimmed.hasPrefix("</fetchedProperty") { property = nil }
        }
        return nil
    }

    private static func isWritable(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 { return value == 0x09 || value == 0x0A || value == 0x0D }
        if (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE { return false }
        return true
    }

    /// The escaped value of `name="…"` in an element's line, shown escaped for a terminal.
    private static func attribute(_ name: String, in line: Substring) -> String? {
        guard let start = line.range(of: " \(name)=\"") else { return nil }
        let value = line[start.upperBound...].prefix { $0 != "\"" }
        return String(value.unicodeScalars.map { isWritable($0) ? String($0) : "\\u{\(String($0.value, radix: 16, uppercase: true))}" }.joined())
    }

    /// Text safe inside a double-quoted XML attribute: markup characters and every character XML would
    /// otherwise normalize (line breaks, tabs) written as references.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n", "\r", "\t": out += "&#\(scalar.value);"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
