import Foundation

extension ManagedObjectModel {
    /// Loads an Xcode data model: a `.xcdatamodeld` bundle (its current version), a `.xcdatamodel`
    /// folder, or the `contents` XML file inside one.
    ///
    /// Compiled models (`.momd`, `.mom`) are read by ``init(compiledModelAt:)`` instead.
    ///
    /// ```swift
    /// let url = Bundle.module.url(forResource: "Library", withExtension: "xcdatamodeld")!
    /// let model = try ManagedObjectModel(contentsOf: url)
    /// print(model.entitiesByName["Book"]?.attributesByName.keys ?? [])
    /// ```
    ///
    /// - Throws: ``ModelError`` for unreadable files, malformed XML (with line and column), unknown types, and
    ///   every inconsistency ``init(entities:versionIdentifiers:entityNumbers:)`` checks:
    ///   ``ModelError/malformedModelFile(path:reason:)`` when the path, the bundle's current version or its
    ///   `contents` file is missing or cannot be read; for a `.xcdatamodel` in Xcode 3's binary form
    ///   (`elements`, no `contents`), ``ModelError/xcode3BinaryModel(folder:construct:)`` naming what the
    ///   reader of that form does not map.
    public convenience init(contentsOf url: URL) throws {
        try self.init(contentsOf: url, version: nil)
    }

    /// Loads one version of a `.xcdatamodeld` bundle by name ("Library 2", with or without the
    /// `.xcdatamodel` extension); nil loads the current version, as ``init(contentsOf:)`` does. For a
    /// `.xcdatamodel` folder or a `contents` file, `version` must be nil.
    ///
    /// A model loaded from a bundle remembers the bundle and its version name (``versionName``), so that
    /// opening a store written by another version of the bundle can migrate it (docs/MIGRATION.md).
    ///
    /// - Throws: ``ModelError/versionNotFound(bundle:version:available:)`` when the bundle has no such
    ///   version, and every ``ModelError`` that ``init(contentsOf:)`` throws.
    ///
    /// ```swift
    /// let v1 = try ManagedObjectModel(contentsOf: bundleURL, version: "Library")
    /// print(v1.versionName ?? "")   // "Library"
    /// ```
    public convenience init(contentsOf url: URL, version: String?) throws {
        var versionURL = url
        var bundleURL: URL?
        if url.pathExtension.lowercased() == "xcdatamodeld" {
            bundleURL = url
            if let version {
                versionURL = try XcodeModelLoader.versionURL(named: version, inBundle: url)
            } else {
                versionURL = try XcodeModelLoader.currentVersionURL(inBundle: url)
            }
        } else if let version {
            throw ModelError.versionNotFound(bundle: url.path, version: version, available: [])
        }
        try self.init(versionFolder: versionURL, bundle: bundleURL)
    }

    /// Loads the model at `versionURL` (a version folder of the bundle `bundleURL`, or a lone model with
    /// nil), without looking the version up in the bundle again: ``ModelVersionBundle`` loads every
    /// version it listed once this way, so a bundle loads in time linear in its versions.
    ///
    /// - Throws: every ``ModelError`` that ``init(contentsOf:)`` throws.
    convenience init(versionFolder versionURL: URL, bundle bundleURL: URL?) throws {
        let contentsURL = try XcodeModelLoader.contentsFileURL(for: versionURL)
        let root = try XcodeModelLoader.modelRoot(at: contentsURL)
        try self.init(compiled: try XcodeModelLoader(source: contentsURL.path).contents(fromModel: root))
        if versionURL.pathExtension.lowercased() == "xcdatamodel" {
            versionName = XcodeModelLoader.versionName(versionURL.lastPathComponent)
        }
        versionBundleURL = bundleURL
    }

    /// Loads the Xcode data model named `name` from a bundle's resources: `<name>.xcdatamodeld` (its current
    /// version) or `<name>.xcdatamodel`, as `NSPersistentContainer(name:)` finds `<name>.momd`. A package ships
    /// the model as a resource (`resources: [.copy("Todo.xcdatamodeld")]`) and passes `Bundle.module`;
    /// `subdirectory` names a folder inside the resources. For `Bundle.main`, the current directory is
    /// searched too, so a tool run from its project folder finds the model beside it.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(named: "Todo", in: .module)
    /// ```
    ///
    /// - Throws: ``ModelError/modelNotFound(name:searched:)`` listing the folders searched when neither
    ///   `<name>.xcdatamodeld` nor `<name>.xcdatamodel` is there; else what ``init(contentsOf:)`` throws for
    ///   the model found.
    public convenience init(named name: String, in bundle: Bundle = .main, subdirectory: String? = nil) throws {
        var folders = [bundle.resourceURL, bundle.bundleURL].compactMap { $0 }
        if bundle === Bundle.main {
            folders.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
        }
        if let subdirectory { folders = folders.map { $0.appendingPathComponent(subdirectory, isDirectory: true) } }
        var searched: [String] = []
        for folder in folders where !searched.contains(folder.path) {
            searched.append(folder.path)
            for suffix in ["xcdatamodeld", "xcdatamodel"] {
                let candidate = folder.appendingPathComponent("\(name).\(suffix)", isDirectory: true)
                if FileManager.default.fileExists(atPath: candidate.path) {
                    try self.init(contentsOf: candidate)
                    return
                }
            }
        }
        throw ModelError.modelNotFound(name: name, searched: searched)
    }

    /// Loads a model from the XML of a `.xcdatamodel`'s `contents` file. `source` names the data in
    /// error messages (usually its path).
    ///
    /// ```swift
    /// let xml = Data(#"<model><entity name="Item"><attribute name="name" attributeType="String"/></entity></model>"#.utf8)
    /// let model = try ManagedObjectModel(xmlData: xml, source: "inline")
    /// ```
    ///
    /// - Throws: ``ModelError/malformedModelFile(path:reason:)`` (with `source` as the path) when the data is
    ///   not UTF-8 XML (with line and column) or an element is not a valid model element,
    ///   ``ModelError/unknownType(entity:property:type:)`` for an unknown attribute type, and every check of
    ///   ``init(entities:versionIdentifiers:entityNumbers:)``.
    public convenience init(xmlData: Data, source: String) throws {
        let root = try XcodeModelXMLNode.parse(xmlData, source: source)
        try self.init(compiled: try XcodeModelLoader(source: source).contents(fromModel: root))
    }
}

/// Maps the elements of an Xcode model file to entity, attribute and relationship descriptions.
struct XcodeModelLoader {
    /// Names the file in error messages.
    let source: String

    // MARK: Finding the contents file

    /// The element tree of a model file: the XML of a `contents` file, or Xcode 3's `elements` archive
    /// translated into the tree its XML would have (``Xcode3ModelArchive``).
    ///
    /// - Throws: ``ModelError/malformedModelFile(path:reason:)`` when the file cannot be read or parsed, and
    ///   what ``Xcode3ModelArchive/modelNode()`` throws.
    static func modelRoot(at file: URL) throws -> XcodeModelXMLNode {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ModelError.malformedModelFile(path: file.path, reason: "the file cannot be read")
        }
        if file.lastPathComponent == "elements" {
            let folder = file.deletingLastPathComponent()
            return try Xcode3ModelArchive(data: data, source: file.path, folder: folder.path).modelNode()
        }
        return try XcodeModelXMLNode.parse(data, source: file.path)
    }

    /// The model file a model URL stands for: a folder's `contents`, or its `elements` when it is in Xcode 3's
    /// binary form (no `contents`).
    static func contentsFileURL(for url: URL) throws -> URL {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError.malformedModelFile(path: url.path, reason: "no such file or folder")
        }
        let fileExtension = url.pathExtension.lowercased()
        if fileExtension == "mom" || fileExtension == "momd" || fileExtension == "omo" {
            throw ModelError.malformedModelFile(
                path: url.path,
                reason: "a compiled model: load it with ManagedObjectModel(compiledModelAt:)")
        }
        guard isDirectory.boolValue else { return url }
        if fileExtension == "xcdatamodeld" {
            return try contentsFileURL(for: currentVersionURL(inBundle: url))
        }
        let contents = url.appendingPathComponent("contents")
        guard fileManager.fileExists(atPath: contents.path) else {
            // Xcode 3 kept the model in `elements` (and the diagram in `layout`).
            let elements = url.appendingPathComponent("elements")
            var elementsIsFolder: ObjCBool = false
            if fileManager.fileExists(atPath: elements.path, isDirectory: &elementsIsFolder), !elementsIsFolder.boolValue {
                return elements
            }
            throw ModelError.malformedModelFile(path: url.path, reason: "the folder has no 'contents' file")
        }
        return contents
    }

    /// The current version of a `.xcdatamodeld` bundle: the one `.xccurrentversion` names, else (no
    /// marker, or one without a name) the last `.xcdatamodel` in numeric name order ("Model 10" after "Model 9").
    ///
    /// - Throws: ``ModelError/malformedModelFile(path:reason:)`` when the marker names something that is not
    ///   a `.xcdatamodel` folder of the bundle (an empty or blank name, `.`, a path, another bundle, a missing
    ///   version): following it could lead back to the bundle itself, without end.
    static func currentVersionURL(inBundle bundle: URL) throws -> URL {
        let fileManager = FileManager.default
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        if let data = try? Data(contentsOf: marker), let name = currentVersionName(inMarker: data) {
            // The name must be a plain child that is a version folder, never a path leading elsewhere.
            let candidate = bundle.appendingPathComponent(name, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard !name.contains("/"), name.hasSuffix(".xcdatamodel"), name != ".xcdatamodel",
                  fileManager.fileExists(atPath: candidate.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ModelError.malformedModelFile(
                    path: marker.path,
                    reason: "_XCCurrentVersionName '\(name)' is not a .xcdatamodel version folder of the bundle")
            }
            return candidate
        }
        let children = (try? fileManager.contentsOfDirectory(atPath: bundle.path)) ?? []
        let versions = children.filter { $0.hasSuffix(".xcdatamodel") }
            .sorted { versionName($0).compare(versionName($1), options: .numeric) == .orderedAscending }
        guard let last = versions.last else {
            throw ModelError.malformedModelFile(path: bundle.path, reason: "the bundle has no .xcdatamodel version")
        }
        return bundle.appendingPathComponent(last)
    }

    /// `_XCCurrentVersionName` from the XML plist in `.xccurrentversion`. Read with the same XML parser
    /// as model files rather than PropertyListSerialization, whose Linux parser is not hardened against
    /// damaged input.
    static func currentVersionName(inMarker data: Data) -> String? {
        guard let root = try? XcodeModelXMLNode.parse(data, source: ".xccurrentversion"),
              let dictionary = root.name == "plist" ? root.children(named: "dict").first : nil else { return nil }
        let entries = dictionary.children
        for (index, entry) in entries.enumerated()
        where entry.name == "key" && entry.text == "_XCCurrentVersionName" && index + 1 < entries.count {
            let value = entries[index + 1]
            return value.name == "string" ? value.text.trimmingCharacters(in: .whitespacesAndNewlines) : nil
        }
        return nil
    }

    /// "Model 2.xcdatamodel" → "Model 2": compared without the extension so that "Model" comes first.
    static func versionName(_ fileName: String) -> String {
        fileName.hasSuffix(".xcdatamodel") ? String(fileName.dropLast(".xcdatamodel".count)) : fileName
    }

    /// The version names of a `.xcdatamodeld` bundle, in version order (numeric name order: "Model",
    /// "Model 2", …, "Model 10").
    static func versionNames(inBundle bundle: URL) -> [String] {
        let children = (try? FileManager.default.contentsOfDirectory(atPath: bundle.path)) ?? []
        return children.filter { $0.hasSuffix(".xcdatamodel") }.map(versionName)
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
    }

    /// The folder of the version named `name` ("Model 2" or "Model 2.xcdatamodel") in a bundle.
    static func versionURL(named name: String, inBundle bundle: URL) throws -> URL {
        let wanted = versionName(name)
        let available = versionNames(inBundle: bundle)
        // Only a plain child of the bundle, never a path leading elsewhere.
        guard !wanted.contains("/"), available.contains(wanted) else {
            throw ModelError.versionNotFound(bundle: bundle.path, version: name, available: available)
        }
        return bundle.appendingPathComponent(wanted + ".xcdatamodel")
    }

    // MARK: Mapping elements

    /// The entities, version identifiers and fetch request templates of a `<model>` element.
    func contents(fromModel root: XcodeModelXMLNode) throws -> CompiledModelContents {
        let (entities, versionIdentifiers) = try self.entities(fromModel: root)
        var templates: [(name: String, request: FetchRequest<ManagedObject>)] = []
        for node in root.children(named: "fetchRequest") { templates.append(try fetchRequestTemplate(from: node)) }
        return CompiledModelContents(entities: entities, versionIdentifiers: versionIdentifiers, unreadKeys: [],
                                     fetchRequestTemplates: templates)
    }

    func entities(fromModel root: XcodeModelXMLNode) throws -> ([EntityDescription], [String]) {
        guard root.name == "model" else {
            throw malformed("the root element is <\(root.name)>, not <model>", at: root)
        }
        var versionIdentifiers: [String] = []
        if let identifier = root["userDefinedModelVersionIdentifier"], !identifier.isEmpty {
            versionIdentifiers = [identifier]
        }
        // Composite types sit beside the entities (`<composite name="…">` with `<attribute>` children); an
        // attribute of type Composite names one with `composite="…"`.
        var composites: [String: XcodeModelXMLNode] = [:]
        for node in root.children(named: "composite") {
            guard let name = nonEmpty(node["name"]) else { throw malformed("a <composite> has no name", at: node) }
            composites[name] = node
        }
        let entities = try root.children(named: "entity").map { try entity(from: $0, composites: composites) }
        return (entities, versionIdentifiers)
    }

    private func entity(from node: XcodeModelXMLNode, composites: [String: XcodeModelXMLNode]) throws -> EntityDescription {
        guard let name = node["name"], !name.isEmpty else { throw malformed("an <entity> has no name", at: node) }
        let entity = EntityDescription(name: name, superentityName: nonEmpty(node["parentEntity"]),
                                       isAbstract: flag(node["isAbstract"]))
        entity.managedObjectClassName = nonEmpty(node["representedClassName"])
        entity.versionHashModifier = nonEmpty(node["versionHashModifier"])
        // Xcode writes the "Renaming ID" field as `elementID`.
        entity.renamingIdentifier = nonEmpty(node["renamingIdentifier"]) ?? nonEmpty(node["elementID"])
        entity.userInfo = userInfo(in: node)

        for child in node.children {
            switch child.name {
            case "attribute": entity.addProperty(try attribute(from: child, entity: name, composites: composites))
            case "relationship": entity.addProperty(try relationship(from: child, entity: name))
            case "fetchedProperty": entity.addFetchedProperty(try fetchedProperty(from: child, entity: name))
            case "uniquenessConstraints":
                entity.uniquenessConstraints += child.children(named: "uniquenessConstraint").map { constraint in
                    constraint.children(named: "constraint").compactMap { nonEmpty($0["value"]) }
                }.filter { !$0.isEmpty }
            case "fetchIndex":
                if let index = fetchIndex(from: child, entity: name) { entity.indexes.append(index) }
            case "compoundIndexes":
                // The pre-2017 form of multi-property indexes; they carry no name, so one is made up.
                for compound in child.children(named: "compoundIndex") {
                    let keys = compound.children(named: "index").compactMap { nonEmpty($0["value"]) }
                    if !keys.isEmpty {
                        entity.indexes.append(IndexDescription(
                            name: "\(name)_compound_\(entity.indexes.count + 1)", propertyNames: keys))
                    }
                }
            default:
                // userInfo (read above) and anything newer: no storage, nothing to map.
                break
            }
        }
        return entity
    }

    private func attribute(from node: XcodeModelXMLNode, entity: String, composites: [String: XcodeModelXMLNode],
                           enclosing: [String] = []) throws -> AttributeDescription {
        guard let name = node["name"], !name.isEmpty else {
            throw malformed("an <attribute> of entity '\(entity)' has no name", at: node)
        }
        let typeName = node["attributeType"] ?? ""
        guard let type = AttributeType(modelFileName: typeName) else {
            throw ModelError.unknownType(entity: entity, property: name, type: typeName)
        }
        if type == .composite {
            return try compositeAttribute(from: node, named: name, entity: entity, composites: composites,
                                          enclosing: enclosing)
        }
        let attribute = AttributeDescription(name: name, type: type, isOptional: flag(node["optional"]))
        try applyCommonProperties(from: node, to: attribute)
        attribute.allowsExternalBinaryDataStorage = flag(node["allowsExternalBinaryDataStorage"])
        attribute.preservesValueInHistoryOnDeletion = flag(node["preserveAfterDeletion"])
        attribute.valueTransformerName = nonEmpty(node["valueTransformerName"])
        if type == .transformable { attribute.customClassName = nonEmpty(node["customClassName"]) }
        attribute.regularExpression = nonEmpty(node["regularExpressionString"])
        if flag(node["derived"]) {
            attribute.derivationExpression = try derivation(nonEmpty(node["derivationExpression"]),
                                                            entity: entity, attribute: name)
        }

        let defaultText = type == .date
            ? nonEmpty(node["defaultDateTimeInterval"]) ?? nonEmpty(node["defaultValueString"])
            : nonEmpty(node["defaultValueString"])
        if let defaultText {
            attribute.defaultValue = try XcodeModelValue.defaultValue(defaultText, type: type, entity: entity,
                                                                      attribute: name)
        }
        try applyLimits(from: node, to: attribute, entity: entity)
        return attribute
    }

    /// A Composite attribute: the `<composite>` its `composite="…"` names, its `<attribute>` children the
    /// elements (one of them may be a composite in turn). `enclosing` lists the composites being read, so a
    /// composite that contains itself is refused rather than read forever.
    private func compositeAttribute(from node: XcodeModelXMLNode, named name: String, entity: String,
                                    composites: [String: XcodeModelXMLNode],
                                    enclosing: [String]) throws -> AttributeDescription {
        guard let typeName = nonEmpty(node["composite"]) else {
            throw ModelError.invalidComposite(entity: entity, attribute: name,
                                              reason: "it names no composite type with composite=\"…\" (\(node.location))")
        }
        guard let definition = composites[typeName] else {
            throw ModelError.invalidComposite(entity: entity, attribute: name,
                                              reason: "the model file has no <composite name=\"\(typeName)\"> (\(node.location))")
        }
        guard !enclosing.contains(typeName) else {
            throw ModelError.invalidComposite(entity: entity, attribute: name,
                                              reason: "composite '\(typeName)' contains itself")
        }
        let elements: [AttributeDescription]
        do {
            elements = try definition.children(named: "attribute").map {
                try attribute(from: $0, entity: entity, composites: composites, enclosing: enclosing + [typeName])
            }
        } catch ModelError.invalidComposite(_, let element, let reason) where enclosing.isEmpty {
            // A nested composite's problem is reported against the entity's attribute, naming the element.
            throw ModelError.invalidComposite(entity: entity, attribute: name, reason: "element '\(element)': \(reason)")
        }
        let composite = CompositeAttributeDescription(name: name, elements: elements, isOptional: flag(node["optional"]))
        composite.compositeTypeName = typeName
        try applyCommonProperties(from: node, to: composite)
        return composite
    }

    /// A derived attribute's expression text, parsed; the model checks what it reads when it is built.
    private func derivation(_ text: String?, entity: String, attribute: String) throws -> QueryExpression {
        guard let text else {
            throw ModelError.invalidDerivation(entity: entity, attribute: attribute, reason: "it has no derivationExpression")
        }
        do {
            return try QueryExpression(format: text)
        } catch let error as QueryLanguageError {
            throw ModelError.invalidDerivation(entity: entity, attribute: attribute,
                                               reason: "'\(text)' does not parse: \(error)")
        }
    }

    /// Validation limits: `minValueString`/`maxValueString` mean a value range for numbers, a length
    /// range for strings, a date range for dates (Xcode writes `min/maxDateTimeInterval` for the latter).
    private func applyLimits(from node: XcodeModelXMLNode, to attribute: AttributeDescription,
                             entity: String) throws {
        func text(_ key: String, dateKey: String) -> String? {
            attribute.attributeType == .date ? nonEmpty(node[dateKey]) ?? nonEmpty(node[key]) : nonEmpty(node[key])
        }
        for (key, dateKey, isMinimum) in [("minValueString", "minDateTimeInterval", true),
                                          ("maxValueString", "maxDateTimeInterval", false)] {
            guard let value = text(key, dateKey: dateKey) else { continue }
            func bad() -> ModelError {
                malformed("attribute '\(entity).\(attribute.name)' has \(key) '\(value)', which is not a number",
                          at: node)
            }
            switch attribute.attributeType {
            case .string:
                guard let length = Int(value) else { throw bad() }
                if isMinimum { attribute.minLength = length } else { attribute.maxLength = length }
            case .date:
                guard let seconds = Double(value), seconds.isFinite else { throw bad() }
                let date = Date(timeIntervalSinceReferenceDate: seconds)
                if isMinimum { attribute.minDate = date } else { attribute.maxDate = date }
            case _ where attribute.attributeType.isNumeric:
                guard let number = Double(value), number.isFinite else { throw bad() }
                if isMinimum { attribute.minValue = number } else { attribute.maxValue = number }
            default:
                // Binary data length limits and the like: validation only, not modelled yet.
                break
            }
        }
    }

    private func relationship(from node: XcodeModelXMLNode, entity: String) throws -> RelationshipDescription {
        guard let name = node["name"], !name.isEmpty else {
            throw malformed("a <relationship> of entity '\(entity)' has no name", at: node)
        }
        guard let destination = nonEmpty(node["destinationEntity"]) else {
            throw ModelError.invalidRelationship(entity: entity, relationship: name,
                                                 reason: "it has no destination entity")
        }
        let deleteRule: DeleteRule
        if let ruleName = nonEmpty(node["deletionRule"]) {
            guard let rule = DeleteRule(rawValue: ruleName) else {
                throw malformed("relationship '\(entity).\(name)' has unknown deletion rule '\(ruleName)'", at: node)
            }
            deleteRule = rule
        } else {
            deleteRule = .nullify
        }
        let relationship = RelationshipDescription(
            name: name, destination: destination, toMany: flag(node["toMany"]),
            inverse: nonEmpty(node["inverseName"]), deleteRule: deleteRule,
            isOptional: flag(node["optional"]), isOrdered: flag(node["ordered"]))
        try applyCommonProperties(from: node, to: relationship)
        // Absent counts keep the initializer's values: 0 for a to-many's maximum (unbounded), 1 for a
        // to-one's, 0 for the minimum; these are what enter the version hash.
        if let text = nonEmpty(node["maxCount"]) { relationship.maxCount = try count(text, "maxCount", node) }
        if let text = nonEmpty(node["minCount"]) { relationship.minCount = try count(text, "minCount", node) }
        return relationship
    }

    /// `<fetchedProperty name><fetchRequest entity predicateString/></fetchedProperty>`.
    private func fetchedProperty(from node: XcodeModelXMLNode, entity: String) throws -> FetchedPropertyDescription {
        guard let name = node["name"], !name.isEmpty else {
            throw malformed("a <fetchedProperty> of entity '\(entity)' has no name", at: node)
        }
        guard let request = node.children(named: "fetchRequest").first, let target = nonEmpty(request["entity"]) else {
            throw ModelError.invalidFetchedProperty(entity: entity, property: name,
                                                    reason: "it has no <fetchRequest> naming an entity")
        }
        var predicate: QueryPredicate?
        if let text = nonEmpty(request["predicateString"]) {
            do {
                predicate = try QueryPredicate(format: text)
            } catch let error as QueryLanguageError {
                throw ModelError.invalidFetchedProperty(entity: entity, property: name,
                                                        reason: "predicate '\(text)' does not parse: \(error)")
            }
        }
        let property = FetchedPropertyDescription(name: name, entityName: target, predicate: predicate)
        property.isOptional = flag(node["optional"])
        property.versionHashModifier = nonEmpty(node["versionHashModifier"])
        property.renamingIdentifier = nonEmpty(node["renamingIdentifier"]) ?? nonEmpty(node["elementID"])
        property.userInfo = userInfo(in: node)
        return property
    }

    /// A template at the model's top level: `<fetchRequest name entity predicateString fetchLimit fetchBatchSize
    /// resultType includeSubentities includePropertyValues includePendingChanges returnObjectsAsFaults
    /// returnDistinctResults/>`. The flags are read in the spelling public model parsers use and in the
    /// `includes…`/`returns…` one some tools write; an absent flag keeps ``FetchRequest``'s default (Core Data's).
    /// `resultType` holds Core Data's number (0 objects, 1 IDs, 2 dictionaries, 4 a count);
    /// `includePropertyValues` has no counterpart here (rows are read whole) and is passed by.
    ///
    /// - Throws: ``ModelError/invalidFetchRequestTemplate(name:reason:)`` for a predicate that does not parse, a
    ///   limit, batch size or result type that is not one; ``ModelError/malformedModelFile(path:reason:)`` for
    ///   a template without a name or an entity.
    private func fetchRequestTemplate(from node: XcodeModelXMLNode) throws -> (name: String, request: FetchRequest<ManagedObject>) {
        guard let name = nonEmpty(node["name"]) else { throw malformed("a <fetchRequest> has no name", at: node) }
        guard let entity = nonEmpty(node["entity"]) else {
            throw malformed("<fetchRequest> '\(name)' names no entity", at: node)
        }
        func refuse(_ reason: String) -> ModelError { .invalidFetchRequestTemplate(name: name, reason: reason) }
        let request = FetchRequest<ManagedObject>(entityName: entity)
        if let text = nonEmpty(node["predicateString"]) {
            do {
                request.predicate = try QueryPredicate(format: text)
            } catch let error as QueryLanguageError {
                throw refuse("predicate '\(text)' does not parse: \(error)")
            }
        }
        for (key, apply) in [("fetchLimit", { request.fetchLimit = $0 }), ("fetchBatchSize", { request.fetchBatchSize = $0 })]
        as [(String, (Int) -> Void)] {
            guard let text = nonEmpty(node[key]) else { continue }
            guard let value = Int(text), value >= 0 else { throw refuse("\(key) '\(text)' is not a count") }
            apply(value)
        }
        if let text = nonEmpty(node["resultType"]) {
            guard let code = Int(text), let type = FetchRequestResultType(coreDataCode: code) else {
                throw refuse("resultType '\(text)' is not 0, 1, 2 or 4")
            }
            request.resultType = type
        }
        func setting(_ names: String...) -> Bool? {
            names.lazy.compactMap { self.nonEmpty(node[$0]) }.first.map { self.flag($0) }
        }
        if let value = setting("includeSubentities", "includesSubentities") { request.includesSubentities = value }
        if let value = setting("includePendingChanges", "includesPendingChanges") { request.includesPendingChanges = value }
        if let value = setting("returnObjectsAsFaults", "returnsObjectsAsFaults") { request.returnsObjectsAsFaults = value }
        if let value = setting("returnDistinctResults", "returnsDistinctResults") { request.returnsDistinctResults = value }
        return (name, request)
    }

    private func applyCommonProperties(from node: XcodeModelXMLNode, to property: PropertyDescription) throws {
        property.isTransient = flag(node["transient"])
        property.versionHashModifier = nonEmpty(node["versionHashModifier"])
        property.renamingIdentifier = nonEmpty(node["renamingIdentifier"]) ?? nonEmpty(node["elementID"])
        property.userInfo = userInfo(in: node)
    }

    private func fetchIndex(from node: XcodeModelXMLNode, entity: String) -> IndexDescription? {
        // Elements given by an expression rather than a property cannot be expressed as an
        // IndexDescription; indexes never enter a version hash, so such an index is left out.
        let elements = node.children(named: "fetchIndexElement")
        let keys = elements.compactMap { nonEmpty($0["property"]) }
        guard !keys.isEmpty, keys.count == elements.count else { return nil }
        return IndexDescription(name: nonEmpty(node["name"]) ?? "\(entity)_\(keys.joined(separator: "_"))",
                                propertyNames: keys)
    }

    private func userInfo(in node: XcodeModelXMLNode) -> [String: String] {
        var info: [String: String] = [:]
        for block in node.children(named: "userInfo") {
            for entry in block.children(named: "entry") {
                if let key = entry["key"] { info[key] = entry["value"] ?? "" }
            }
        }
        return info
    }

    /// A count up to Int32's maximum, or `Int.max`: what a model built in code sets for "no maximum" (a store's
    /// model cache carries it; `ocd model convert` writes it out).
    private func count(_ text: String, _ key: String, _ node: XcodeModelXMLNode) throws -> Int {
        guard let value = Int(text), value >= 0, value <= Int(Int32.max) || value == Int.max else {
            throw malformed("\(key) '\(text)' is not a count", at: node)
        }
        return value
    }

    /// Xcode writes booleans as "YES"; an absent flag is false (including `optional`: Xcode writes
    /// `optional="YES"` for every optional property and nothing for required ones).
    private func flag(_ text: String?) -> Bool {
        guard let text else { return false }
        return ["YES", "yes", "true", "TRUE", "1"].contains(text)
    }

    private func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    private func malformed(_ reason: String, at node: XcodeModelXMLNode) -> ModelError {
        .malformedModelFile(path: source, reason: "\(reason) (\(node.location))")
    }
}
