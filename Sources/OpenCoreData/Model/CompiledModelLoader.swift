import Foundation

extension ManagedObjectModel {
    /// Loads a compiled model as an app bundle ships it: a `.momd` folder (the version its `VersionInfo.plist`
    /// names in `NSManagedObjectModel_CurrentVersionName`) or a single `.mom` file (an `NSKeyedArchiver`
    /// archive of the model). The file is only read.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(compiledModelAt: appBundle.appendingPathComponent("Library.momd"))
    /// ```
    ///
    /// - Throws: ``ModelError/malformedModelFile(path:reason:)`` for a file that cannot be read, a damaged or
    ///   hostile archive (the reason names the object and key), a missing or unusable `VersionInfo.plist`, a
    ///   current version present only in the optimized `.omo` form (not read), or an attribute type code we
    ///   do not know; and every check of ``init(entities:versionIdentifiers:entityNumbers:)``.
    public convenience init(compiledModelAt url: URL) throws {
        let file = try CompiledModelLoader.momFile(for: url)
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ModelError.malformedModelFile(path: file.path, reason: "the file cannot be read")
        }
        try self.init(compiledModelData: data, source: file.path)
    }

    /// Loads a compiled model (`.mom` content) from memory; `source` names it in errors.
    ///
    /// - Throws: as ``init(compiledModelAt:)``.
    public convenience init(compiledModelData data: Data, source: String) throws {
        let (entities, versionIdentifiers) = try CompiledModelLoader(source: source).entities(from: data)
        try self.init(entities: entities, versionIdentifiers: versionIdentifiers)
    }
}

/// Maps the objects of a compiled model's keyed archive to entity, attribute and relationship descriptions.
/// The keys read are listed in docs/INTEROP.md, with which are confirmed by public sources.
struct CompiledModelLoader {
    /// Names the file in error messages.
    let source: String

    /// The `.mom` file a compiled model URL stands for: the URL itself, or a `.momd` folder's current version.
    static func momFile(for url: URL) throws -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError.malformedModelFile(path: url.path, reason: "no such file or folder")
        }
        guard isDirectory.boolValue else { return url }
        let infoURL = url.appendingPathComponent("VersionInfo.plist")
        guard let infoData = try? Data(contentsOf: infoURL) else {
            throw ModelError.malformedModelFile(path: infoURL.path, reason: "a .momd folder needs a readable VersionInfo.plist")
        }
        let info: [String: Any]?
        if infoData.starts(with: Array("bplist00".utf8)) {
            // Our bounded reader for binary lists (Foundation's crashes on some damaged ones on Linux).
            let value = try? BinaryPropertyListReader.read(infoData)
            info = value?.dictionary?.compactMapValues { $0.string.map { $0 as Any } }
        } else {
            info = (try? PropertyListSerialization.propertyList(from: infoData, format: nil)) as? [String: Any]
        }
        guard let current = info?["NSManagedObjectModel_CurrentVersionName"] as? String, !current.isEmpty,
              !current.contains("/"), current != ".", current != ".." else {
            throw ModelError.malformedModelFile(path: infoURL.path, reason: "NSManagedObjectModel_CurrentVersionName is missing or not a file name")
        }
        let mom = url.appendingPathComponent(current + ".mom")
        if FileManager.default.fileExists(atPath: mom.path) { return mom }
        let omo = url.appendingPathComponent(current + ".omo")
        if FileManager.default.fileExists(atPath: omo.path) {
            throw ModelError.malformedModelFile(path: omo.path, reason: "the optimized model format (.omo) is not read; the folder has no \(current).mom")
        }
        throw ModelError.malformedModelFile(path: mom.path, reason: "the current version named by VersionInfo.plist is missing")
    }

    private func failure(_ reason: String) -> ModelError { .malformedModelFile(path: source, reason: reason) }

    /// The entities and version identifiers of the archived model in `data`.
    func entities(from data: Data) throws -> ([EntityDescription], [String]) {
        do {
            let archive = try KeyedArchive(data: data)
            let root = try archive.topObject()
            let model = try archive.instance(root)
            guard model?.isKind(of: "NSManagedObjectModel") == true else {
                throw failure("the archive's root is \(model?.className ?? "null"), not an NSManagedObjectModel")
            }
            var entities: [EntityDescription] = []
            for (name, reference) in try archive.stringKeyedEntries(archive.reference("NSEntities", of: root))
                .sorted(by: { $0.key < $1.key }) {
                entities.append(try entity(reference, named: name, in: archive))
            }
            let identifiers = try archive.elements(archive.reference("NSVersionIdentifiers", of: root)).compactMap {
                try archive.string($0)
            }.filter { !$0.isEmpty }
            return (entities, identifiers.sorted())
        } catch let failure as KeyedArchive.Failure {
            throw self.failure("damaged compiled model: \(failure.reason)")
        }
    }

    private func entity(_ reference: KeyedArchive.Reference, named key: String,
                        in archive: KeyedArchive) throws -> EntityDescription {
        guard let instance = try archive.instance(reference), instance.isKind(of: "NSEntityDescription") else {
            throw failure("NSEntities['\(key)'] is not an NSEntityDescription")
        }
        let name = try archive.string(archive.reference("NSEntityName", of: reference)) ?? key
        guard name == key else { throw failure("NSEntities['\(key)'] is named '\(name)'") }
        let parent = try archive.reference("NSSuperentity", of: reference).map {
            try archive.string(archive.reference("NSEntityName", of: $0))
        } ?? nil
        var properties: [PropertyDescription] = []
        for (propertyKey, propertyReference) in try archive.stringKeyedEntries(archive.reference("NSProperties", of: reference))
            .sorted(by: { $0.key < $1.key }) {
            if let property = try property(propertyReference, named: propertyKey, entity: name, in: archive) {
                properties.append(property)
            }
        }
        let entity = EntityDescription(name: name, properties: properties, superentityName: parent,
                                       isAbstract: try bool("NSIsAbstract", of: reference, in: archive))
        entity.managedObjectClassName = try archive.string(archive.reference("NSClassNameForEntity", of: reference))
        entity.versionHashModifier = try archive.string(archive.reference("NSVersionHashModifier", of: reference))
        entity.renamingIdentifier = try archive.string(archive.reference("NSRenamingIdentifier", of: reference))
        entity.userInfo = try userInfo(of: reference, in: archive)
        return entity
    }

    /// An attribute or relationship; nil for the kinds the model has no storage for (fetched properties).
    private func property(_ reference: KeyedArchive.Reference, named key: String, entity: String,
                          in archive: KeyedArchive) throws -> PropertyDescription? {
        guard let instance = try archive.instance(reference) else { throw failure("'\(entity).\(key)' is null") }
        let name = try archive.string(archive.reference("NSPropertyName", of: reference)) ?? key
        guard name == key else { throw failure("NSProperties['\(key)'] of '\(entity)' is named '\(name)'") }
        let isOptional = try bool("NSIsOptional", of: reference, in: archive)
        let property: PropertyDescription
        if instance.isKind(of: "NSAttributeDescription") {
            let code = try archive.field("NSAttributeType", of: reference)?.integer ?? 0
            guard let type = AttributeType.allCases.first(where: { Int64($0.typeCode) == code }) else {
                throw ModelError.unknownType(entity: entity, property: name, type: "attribute type code \(code)")
            }
            if type == .composite {
                // Their elements are archived in a form not read yet: refused rather than stored wrongly.
                throw ModelError.invalidComposite(entity: entity, attribute: name,
                                                  reason: "composite attributes of compiled models are not read yet")
            }
            let attribute = AttributeDescription(name: name, type: type, isOptional: isOptional)
            if let text = try defaultValueText(archive.reference("NSDefaultValue", of: reference), type: type, in: archive) {
                attribute.defaultValue = try XcodeModelValue.defaultValue(text, type: type, entity: entity, attribute: name)
            }
            attribute.valueTransformerName = try archive.string(archive.reference("NSValueTransformerName", of: reference))
            if type == .transformable {
                attribute.customClassName = try archive.string(archive.reference("NSAttributeValueClassName", of: reference))
            }
            property = attribute
        } else if instance.isKind(of: "NSRelationshipDescription") {
            let destination = try archive.reference("NSDestinationEntity", of: reference).map {
                try archive.string(archive.reference("NSEntityName", of: $0))
            } ?? nil
            guard let destinationName = try destination
                    ?? archive.string(archive.reference("_NSDestinationEntityName", of: reference)) else {
                throw ModelError.invalidRelationship(entity: entity, relationship: name, reason: "the compiled model names no destination")
            }
            let inverse = try archive.reference("NSInverseRelationship", of: reference).map {
                try archive.string(archive.reference("NSPropertyName", of: $0))
            } ?? nil
            let inverseName = try inverse ?? archive.string(archive.reference("_NSInverseRelationshipName", of: reference))
            let maxCount = Int(clamping: try archive.field("NSMaxCount", of: reference)?.integer ?? 0)
            let minCount = Int(clamping: try archive.field("NSMinCount", of: reference)?.integer ?? 0)
            // NSDeleteRule values are Core Data's public enum: no action 0, nullify 1, cascade 2, deny 3.
            let rules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
            let ruleCode = try archive.field("NSDeleteRule", of: reference)?.integer ?? 1
            guard let rule = rules[ruleCode] else {
                throw ModelError.invalidRelationship(entity: entity, relationship: name, reason: "delete rule code \(ruleCode) is unknown")
            }
            let relationship = RelationshipDescription(name: name, destination: destinationName, toMany: maxCount != 1,
                                                       inverse: inverseName, deleteRule: rule, isOptional: isOptional,
                                                       isOrdered: try bool("NSIsOrdered", of: reference, in: archive))
            relationship.maxCount = maxCount
            relationship.minCount = minCount
            property = relationship
        } else {
            return nil
        }
        property.isTransient = try bool("NSIsTransient", of: reference, in: archive)
        property.versionHashModifier = try archive.string(archive.reference("NSVersionHashModifier", of: reference))
        property.renamingIdentifier = try archive.string(archive.reference("NSRenamingIdentifier", of: reference))
        property.userInfo = try userInfo(of: reference, in: archive)
        return property
    }

    private func bool(_ key: String, of reference: KeyedArchive.Reference, in archive: KeyedArchive) throws -> Bool {
        switch try archive.field(key, of: reference) {
        case .boolean(let value)?: return value
        case .integer(let value)?: return value != 0
        default: return false
        }
    }

    /// A userInfo dictionary's string entries (others are skipped, as the XML form holds strings only).
    private func userInfo(of reference: KeyedArchive.Reference, in archive: KeyedArchive) throws -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in try archive.stringKeyedEntries(archive.reference("NSUserInfo", of: reference)) {
            if case .value(.string(let text)) = try archive.object(value) { result[key] = text }
        }
        return result
    }

    /// An archived default value as the text the XML form would hold, so both forms convert it alike.
    private func defaultValueText(_ reference: KeyedArchive.Reference?, type: AttributeType,
                                  in archive: KeyedArchive) throws -> String? {
        guard let reference else { return nil }
        switch try archive.resolved(reference) {
        case .null: return nil
        case .string(let text): return text
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        // A number archived as a boolean (0 or 1) is still a number for a numeric attribute.
        case .boolean(let value): return type == .boolean ? (value ? "YES" : "NO") : (value ? "1" : "0")
        case .date(let date): return String(date.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }
}
