import Foundation

/// Reads Xcode 3's binary data model, the `elements` file of a `.xcdatamodel` folder: an `NSKeyedArchiver`
/// archive of Xcode's editing objects, root `XDPMModel` (the layout is in docs/INTEROP.md, "Xcode 3's binary
/// models").
///
/// The archive is translated into the element tree the XML form (`contents`) would have, and the XML loader
/// builds the model from that tree: one mapping for both forms, so the same model and version hashes.
///
/// Only what was confirmed against a public sample, or is named alike and read as the XML form reads it, is
/// mapped. Everything else (a class or key not in that layout, a superentity, fetch request templates,
/// indexes, uniqueness constraints, a UML flag that is set) is refused with
/// ``ModelError/xcode3BinaryModel(folder:construct:)`` naming the construct, never guessed at. Damage (not a
/// keyed archive, an out-of-range reference, a value of the wrong kind) is
/// ``ModelError/malformedModelFile(path:reason:)`` naming the object and key.
///
/// The walk follows the model's tree (model, package, entities, properties, stereotypes, slots) and never the
/// back-references (`_owner`), so a cyclic archive cannot make it loop; every collection it reads is one the
/// archive holds, so the work is bounded by the archive's size.
struct Xcode3ModelArchive {
    /// The `elements` file, for error messages.
    let source: String
    /// The `.xcdatamodel` folder, for refusals.
    let folder: String
    private let archive: KeyedArchive

    private typealias Reference = KeyedArchive.Reference

    /// Keys every element of Xcode's UML model may carry that mean nothing for Core Data (owner links,
    /// visibility, identifiers, the bookkeeping flags of its collections).
    private static let bookkeepingKeys: Set<String> = ["_owner", "_visibility", "_uniqueElementID", "_xd_owningModel",
                                                       "_type", "_association"]
    /// UML flags of properties and slots: Core Data has no counterpart, so a set one is refused.
    private static let umlFlags = ["_isReadOnly", "_isStatic", "_isUnique", "_isDerived", "_isOrdered",
                                   "_isComposite", "_isLeaf"]
    private static let bucketFlags = ["wasEncoded", "ordered", "duplicates"]

    /// Reads the archive's outer structure.
    ///
    /// - Throws: ``ModelError/malformedModelFile(path:reason:)`` when `data` is not a keyed archive.
    init(data: Data, source: String, folder: String) throws {
        self.source = source
        self.folder = folder
        do {
            archive = try KeyedArchive(data: data)
        } catch let failure as KeyedArchive.Failure {
            throw ModelError.malformedModelFile(path: source, reason: failure.reason)
        }
    }

    /// The `<model>` element tree the XML form of this model would have.
    ///
    /// - Throws: ``ModelError/xcode3BinaryModel(folder:construct:)`` for a construct the reader does not map,
    ///   ``ModelError/malformedModelFile(path:reason:)`` for a damaged archive.
    func modelNode() throws -> XcodeModelXMLNode {
        do {
            return try readModel()
        } catch let failure as KeyedArchive.Failure {
            throw ModelError.malformedModelFile(path: source, reason: failure.reason)
        }
    }

    // MARK: The model, its package and entities

    private func readModel() throws -> XcodeModelXMLNode {
        let root = try archive.topObject()
        let model = try instance(root, of: "XDPMModel", what: "the archive's root")
        try checkKeys(model, of: root, what: "the model", allowed: [
            "_xd_rootPackage", "_xd_comments", "_xd_modelManager", "_configurationsByName", "_xd_modelName",
            "_modelVersionIdentifier"])
        // Configurations have no storage here and the XML loader passes them by; they must still be a dictionary.
        _ = try archive.entries(try archive.reference("_configurationsByName", of: root))
        var attributes: [String: String] = [:]
        if let identifier = try archive.string(try archive.reference("_modelVersionIdentifier", of: root)) {
            attributes["userDefinedModelVersionIdentifier"] = identifier
        }
        guard let packageReference = try archive.reference("_xd_rootPackage", of: root) else {
            throw damaged("the model (\(root)) has no _xd_rootPackage")
        }
        let package = try instance(packageReference, of: "XDModelPackage", what: "the root package")
        try checkKeys(package, of: packageReference, what: "the root package",
                      allowed: ["_name"], buckets: ["Classes", "Packages", "Interfaces", "DataTypes"])
        for kind in ["Packages", "Interfaces", "DataTypes"] {
            guard isEmptyCollection(try archive.reference("XDBucketFor\(kind)storage", of: packageReference)) else {
                throw unmappable("\(kind.lowercased()) in the root package (\(packageReference))")
            }
        }
        let entityEntries = try namedEntries("XDBucketForClassesstorage", of: packageReference, what: "the root package")
        var entityNames: [Int: String] = [:]
        var propertyOwners: [Int: (entity: String, property: String)] = [:]
        for (name, reference) in entityEntries {
            entityNames[reference.index] = name
            for (propertyName, property) in try namedEntries("XDBucketForOwnedAttributesstorage", of: reference,
                                                              what: "entity '\(name)'") {
                propertyOwners[property.index] = (name, propertyName)
            }
        }
        let context = Names(entities: entityNames, properties: propertyOwners)
        let entities = try entityEntries.map { try entityNode(named: $0.name, at: $0.reference, names: context) }
        return XcodeModelXMLNode(name: "model", attributes: attributes, children: entities, origin: "\(root) of \(source)")
    }

    /// Entity and property names by the index of their archived object, to name destinations and inverses.
    private struct Names {
        let entities: [Int: String]
        let properties: [Int: (entity: String, property: String)]
    }

    private func entityNode(named name: String, at reference: Reference, names: Names) throws -> XcodeModelXMLNode {
        let what = "entity '\(name)'"
        let entity = try instance(reference, of: "XDPMEntity", what: what)
        // Specializations list the sub-entities, whose own Generalizations name this one: read from there.
        try checkKeys(entity, of: reference, what: what, allowed: ["_name", "_isAbstract"],
                      buckets: ["OwnedAttributes", "Stereotypes", "Generalizations", "Specializations"])
        let parent = try superentityName(of: reference, what: what, names: names)
        let slots = try stereotypeSlots(of: reference, what: what, allowed: [
            "XD_PStereotype": ["XD_PSK_entityClassName", "XD_PSK_isAbstract", "XD_PSK_userInfo",
                               "XD_PSK_versionHashModifier", "XD_PSK_fetchRequestsArray", "XD_PSK_classMapping",
                               "XD_PSK_elementID", "XDPMCompoundIndexes", "XDPMUniquenessConstraints"]])
        for (slot, construct) in [("XD_PSK_fetchRequestsArray", "fetch requests"), ("XDPMCompoundIndexes", "indexes"),
                                  ("XDPMUniquenessConstraints", "uniqueness constraints")] {
            guard isEmptyCollection(slots[slot] ?? nil) else { throw unmappable("\(construct) of \(what)") }
        }
        var attributes = ["name": name]
        if let parent { attributes["parentEntity"] = parent }
        let umlAbstract = try inPlaceBool("_isAbstract", of: entity, at: reference, what: what) ?? false
        let isAbstract = try bool(slots["XD_PSK_isAbstract"] ?? nil, what: "\(what) XD_PSK_isAbstract") ?? umlAbstract
        guard isAbstract == umlAbstract else {
            throw unmappable("\(what), abstract in one of its two abstract flags only")
        }
        if isAbstract { attributes["isAbstract"] = "YES" }
        attributes["representedClassName"] = try string(slots["XD_PSK_entityClassName"] ?? nil,
                                                        what: "\(what) XD_PSK_entityClassName")
        attributes["versionHashModifier"] = try string(slots["XD_PSK_versionHashModifier"] ?? nil,
                                                       what: "\(what) XD_PSK_versionHashModifier")
        attributes["elementID"] = try string(slots["XD_PSK_elementID"] ?? nil, what: "\(what) XD_PSK_elementID")
        var children = try userInfoNodes(slots["XD_PSK_userInfo"] ?? nil, what: "\(what) XD_PSK_userInfo")
        let properties = try namedEntries("XDBucketForOwnedAttributesstorage", of: reference, what: what).map {
            try propertyNode(named: $0.name, at: $0.reference, entity: name, names: names)
        }
        // In the order Xcode writes the XML: attributes, relationships, fetched properties, each by name.
        for kind in ["attribute", "relationship", "fetchedProperty"] {
            children += properties.filter { $0.name == kind }
        }
        return XcodeModelXMLNode(name: "entity", attributes: attributes.compactMapValues { $0 }, children: children,
                                 origin: "\(reference) of \(source)")
    }

    /// The superentity named by the entity's one generalization (`XDUMLGeneralizationImp`: `_general` the
    /// superentity, `_specific` the entity itself), as Xcode 3 archived it (Apress's `Shapes 2`); nil when it
    /// has none.
    private func superentityName(of reference: Reference, what: String, names: Names) throws -> String? {
        let generalizations = try archive.elements(try archive.reference("XDBucketForGeneralizationsstorage", of: reference))
        guard let generalization = generalizations.first else { return nil }
        guard generalizations.count == 1 else { throw unmappable("\(what) with \(generalizations.count) superentities") }
        let description = "the generalization of \(what)"
        let object = try instance(generalization, of: "XDUMLGeneralizationImp", what: description)
        try checkKeys(object, of: generalization, what: description, allowed: ["_name", "_general", "_specific"])
        guard try archive.reference("_specific", of: generalization) == reference else {
            throw damaged("\(description) (\(generalization)) _specific is not \(reference)")
        }
        guard let general = try archive.reference("_general", of: generalization),
              let parent = names.entities[general.index] else {
            throw damaged("\(description) (\(generalization)) _general is not an entity of the model")
        }
        return parent
    }

    // MARK: Properties

    private static let propertySlots: Set<String> = [
        "XD_PPSK_isOptional", "XD_PPSK_isTransient", "XD_PPSK_isIndexed", "XD_PPSK_isSpotlightIndexed",
        "XD_PPSK_isStoredInTruthFile", "XD_PPSK_userInfo", "XD_PPSK_versionHashModifier", "XD_PPSK_elementID"]

    private func propertyNode(named name: String, at reference: Reference, entity: String,
                              names: Names) throws -> XcodeModelXMLNode {
        let what = "property '\(entity).\(name)'"
        guard let object = try archive.instance(reference) else { throw damaged("\(what) (\(reference)) is null") }
        let element: String
        let stereotypes: [String: Set<String>]
        switch object.className {
        case "XDPMAttribute":
            element = "attribute"
            stereotypes = ["XD_PPropStereotype": Self.propertySlots, "XD_PAtt_Stereotype": [
                "XD_PAttK_attributeType", "XD_PAttK_defaultValueAsString", "XD_PAttK_minValueString",
                "XD_PAttK_maxValueString", "XD_PAttK_regularExpressionString", "XD_PAttK_valueTransformerName",
                "XD_PAttK_allowsExternalBinaryDataStorage"]]
        case "XDPMRelationship":
            element = "relationship"
            stereotypes = ["XD_PPropStereotype": Self.propertySlots, "XD_PR_Stereotype": [
                "XD_PRK_minCount", "XD_PRK_maxCount", "XD_PRK_deleteRule", "XD_PRK_destination", "XD_PRK_isToMany",
                "XD_PRK_ordered", "XD_PRK_inverseRelationship"]]
        case "XDPMFetchedProperty":
            element = "fetchedProperty"
            stereotypes = ["XD_PPropStereotype": Self.propertySlots, "XD_PFP_Stereotype": ["XD_PFP_fetchRequestKey"]]
        default:
            throw unmappable("\(what), an object of class \(object.className)")
        }
        try checkKeys(object, of: reference, what: what, allowed: ["_name", "_default"], buckets: ["Stereotypes"],
                      flagsMustBeUnset: true)
        guard try archive.reference("_default", of: reference) == nil else {
            throw unmappable("a UML default value on \(what)")
        }
        let slots = try stereotypeSlots(of: reference, what: what, allowed: stereotypes)
        func slot(_ key: String) -> Reference? { slots[key] ?? nil }
        var attributes: [String: String?] = ["name": name]
        // A fetched property has no optional setting in the archive; Xcode writes optional="YES" for it.
        let isOptional = try bool(slot("XD_PPSK_isOptional"), what: "\(what) XD_PPSK_isOptional")
            ?? (element == "fetchedProperty" ? true : nil)
        guard let isOptional else { throw unmappable("\(what) without XD_PPSK_isOptional") }
        attributes["optional"] = isOptional ? "YES" : nil
        if try bool(slot("XD_PPSK_isTransient"), what: "\(what) XD_PPSK_isTransient") == true {
            attributes["transient"] = "YES"
        }
        attributes["versionHashModifier"] = try string(slot("XD_PPSK_versionHashModifier"),
                                                       what: "\(what) XD_PPSK_versionHashModifier")
        attributes["elementID"] = try string(slot("XD_PPSK_elementID"), what: "\(what) XD_PPSK_elementID")
        for key in ["XD_PPSK_isIndexed", "XD_PPSK_isSpotlightIndexed", "XD_PPSK_isStoredInTruthFile"] {
            // Read for their kind only: the XML loader maps none of them (no storage, not in a hash).
            _ = try bool(slot(key), what: "\(what) \(key)")
        }
        var children = try userInfoNodes(slot("XD_PPSK_userInfo"), what: "\(what) XD_PPSK_userInfo")
        switch element {
        case "attribute":
            try attributeSettings(slot, what: what, into: &attributes)
        case "relationship":
            try relationshipSettings(slot, what: what, names: names, into: &attributes)
        default:
            children.append(try fetchRequestNode(slot("XD_PFP_fetchRequestKey"), what: what, names: names))
        }
        return XcodeModelXMLNode(name: element, attributes: attributes.compactMapValues { $0 }, children: children,
                                 origin: "\(reference) of \(source)")
    }

    private func attributeSettings(_ slot: (String) -> Reference?, what: String,
                                   into attributes: inout [String: String?]) throws {
        guard let code = try integer(slot("XD_PAttK_attributeType"), what: "\(what) XD_PAttK_attributeType") else {
            throw unmappable("\(what) without XD_PAttK_attributeType")
        }
        guard let type = AttributeType.allCases.first(where: { Int64($0.typeCode) == code }), type != .composite else {
            throw unmappable("\(what) of attribute type code \(code)")
        }
        attributes["attributeType"] = type.rawValue
        let texts = [("XD_PAttK_defaultValueAsString", "defaultValueString"), ("XD_PAttK_minValueString", "minValueString"),
                     ("XD_PAttK_maxValueString", "maxValueString"),
                     ("XD_PAttK_regularExpressionString", "regularExpressionString"),
                     ("XD_PAttK_valueTransformerName", "valueTransformerName")]
        for (key, xmlName) in texts {
            guard let text = try string(slot(key), what: "\(what) \(key)") else { continue }
            // How Xcode 3 wrote a date as text is not known: refused rather than read as something else.
            if type == .date, xmlName != "regularExpressionString", xmlName != "valueTransformerName" {
                throw unmappable("\(key) of the Date attribute \(what)")
            }
            attributes[xmlName] = text
        }
        if try bool(slot("XD_PAttK_allowsExternalBinaryDataStorage"),
                    what: "\(what) XD_PAttK_allowsExternalBinaryDataStorage") == true {
            attributes["allowsExternalBinaryDataStorage"] = "YES"
        }
    }

    /// Delete rules are stored as Core Data's numbers (no action 0, nullify 1, cascade 2, deny 3).
    private static let deleteRules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]

    private func relationshipSettings(_ slot: (String) -> Reference?, what: String, names: Names,
                                      into attributes: inout [String: String?]) throws {
        guard let destination = slot("XD_PRK_destination") else { throw unmappable("\(what) without a destination") }
        guard let destinationName = names.entities[destination.index] else {
            throw damaged("\(what) XD_PRK_destination (\(destination)) is not an entity of the model")
        }
        attributes["destinationEntity"] = destinationName
        if let inverse = slot("XD_PRK_inverseRelationship") {
            guard let owner = names.properties[inverse.index], owner.entity == destinationName else {
                throw damaged("\(what) XD_PRK_inverseRelationship (\(inverse)) is not a property of '\(destinationName)'")
            }
            attributes["inverseName"] = owner.property
            attributes["inverseEntity"] = destinationName
        }
        guard let isToMany = try bool(slot("XD_PRK_isToMany"), what: "\(what) XD_PRK_isToMany") else {
            throw unmappable("\(what) without XD_PRK_isToMany")
        }
        if isToMany { attributes["toMany"] = "YES" }
        if try bool(slot("XD_PRK_ordered"), what: "\(what) XD_PRK_ordered") == true { attributes["ordered"] = "YES" }
        for (key, xmlName) in [("XD_PRK_minCount", "minCount"), ("XD_PRK_maxCount", "maxCount")] {
            guard let count = try integer(slot(key), what: "\(what) \(key)") else {
                throw unmappable("\(what) without \(key)")
            }
            attributes[xmlName] = String(count)
        }
        guard let code = try integer(slot("XD_PRK_deleteRule"), what: "\(what) XD_PRK_deleteRule") else {
            throw unmappable("\(what) without XD_PRK_deleteRule")
        }
        guard let rule = Self.deleteRules[code] else { throw unmappable("\(what) with delete rule \(code)") }
        attributes["deletionRule"] = rule.rawValue
    }

    private func fetchRequestNode(_ reference: Reference?, what: String, names: Names) throws -> XcodeModelXMLNode {
        guard let reference else { throw unmappable("\(what) without a fetch request") }
        let request = try instance(reference, of: "XDPMFetchRequest", what: "the fetch request of \(what)")
        try checkKeys(request, of: reference, what: "the fetch request of \(what)",
                      allowed: ["_name", "_fetchedProperty", "_predicateString", "_entity"])
        var attributes: [String: String] = [:]
        attributes["name"] = try archive.string(try archive.reference("_name", of: reference))
        attributes["predicateString"] = try archive.string(try archive.reference("_predicateString", of: reference))
        if let entity = try archive.reference("_entity", of: reference) {
            guard let entityName = names.entities[entity.index] else {
                throw damaged("the fetch request of \(what) (\(reference)) _entity is not an entity of the model")
            }
            attributes["entity"] = entityName
        }
        return XcodeModelXMLNode(name: "fetchRequest", attributes: attributes, children: [],
                                 origin: "\(reference) of \(source)")
    }

    // MARK: Stereotypes and their slots

    /// The slots of an element's stereotypes, by slot name: each slot's `_default` (nil when it is `$null`).
    /// `allowed` names the stereotypes the element may have and, for each, its slots.
    private func stereotypeSlots(of reference: Reference, what: String,
                                 allowed: [String: Set<String>]) throws -> [String: Reference?] {
        var slots: [String: Reference?] = [:]
        for (stereotypeName, stereotype) in try namedEntries("XDBucketForStereotypesstorage", of: reference, what: what) {
            guard let slotNames = allowed[stereotypeName] else {
                throw unmappable("the stereotype \(stereotypeName) of \(what)")
            }
            let description = "stereotype \(stereotypeName) of \(what)"
            let object = try instance(stereotype, of: "XDUMLStereotypeImp", what: description)
            try checkKeys(object, of: stereotype, what: description, allowed: ["_name", "_isAbstract"],
                          buckets: ["OwnedAttributes"])
            for (slotName, slot) in try namedEntries("XDBucketForOwnedAttributesstorage", of: stereotype, what: description) {
                guard slotNames.contains(slotName) else { throw unmappable("the key \(slotName) of \(description)") }
                let slotObject = try instance(slot, of: "XDUMLPropertyImp", what: "\(slotName) of \(what)")
                try checkKeys(slotObject, of: slot, what: "\(slotName) of \(what)", allowed: ["_name", "_default"],
                              flagsMustBeUnset: true)
                guard slots.updateValue(try archive.reference("_default", of: slot), forKey: slotName) == nil else {
                    throw damaged("\(what) has the setting \(slotName) twice")
                }
            }
        }
        return slots
    }

    // MARK: Checked reads

    /// The entries of the name-keyed dictionary under `key` (a bucket's storage), in name order, each
    /// object's `_name` checked to be its key.
    private func namedEntries(_ key: String, of owner: Reference,
                              what: String) throws -> [(name: String, reference: Reference)] {
        let entries = try archive.stringKeyedEntries(try archive.reference(key, of: owner))
        return try entries.sorted { $0.key < $1.key }.map { name, reference in
            guard !name.isEmpty else { throw damaged("\(what) (\(owner)) \(key) has an empty name") }
            let ownName = try archive.string(try archive.reference("_name", of: reference))
            guard ownName == name else {
                throw damaged("\(what) (\(owner)) \(key) files \(reference) under '\(name)', but it is named '\(ownName ?? "")'")
            }
            return (name, reference)
        }
    }

    private func instance(_ reference: Reference, of className: String, what: String) throws -> KeyedArchive.Instance {
        guard let object = try archive.instance(reference) else { throw damaged("\(what) (\(reference)) is null") }
        guard object.isKind(of: className) else {
            throw unmappable("\(what) (\(reference)), an object of class \(object.className) rather than \(className)")
        }
        return object
    }

    /// Refuses keys outside the layout: the bookkeeping keys, `allowed`, and the storage and flags of the
    /// named buckets; with `flagsMustBeUnset`, the UML flags are allowed but must be false.
    private func checkKeys(_ object: KeyedArchive.Instance, of reference: Reference, what: String,
                           allowed: Set<String>, buckets: [String] = [], flagsMustBeUnset: Bool = false) throws {
        var known = Self.bookkeepingKeys.union(allowed)
        for bucket in buckets {
            known.insert("XDBucketFor\(bucket)storage")
            for flag in Self.bucketFlags { known.insert("XDBucketFor\(bucket)\(flag)") }
        }
        if flagsMustBeUnset {
            for flag in Self.umlFlags where try inPlaceBool(flag, of: object, at: reference, what: what) == true {
                throw unmappable("\(what) with the UML flag \(flag) set")
            }
            known.formUnion(Self.umlFlags)
        }
        if let unknown = object.fields.keys.filter({ !known.contains($0) }).min() {
            throw unmappable("the key \(unknown) of \(what) (\(reference), class \(object.className))")
        }
    }

    /// A flag encoded in place (`encodeBool:forKey:`), or a reference to a boolean.
    private func inPlaceBool(_ key: String, of object: KeyedArchive.Instance, at reference: Reference,
                             what: String) throws -> Bool? {
        switch object.fields[key] {
        case nil: return nil
        case .boolean(let flag)?: return flag
        case .uid?: return try bool(try archive.reference(key, of: reference), what: "\(what) \(key)")
        default: throw damaged("\(what) (\(reference)) \(key) is not a boolean")
        }
    }

    private func bool(_ reference: Reference?, what: String) throws -> Bool? {
        guard let reference else { return nil }
        guard case .value(.boolean(let flag)) = try archive.object(reference) else {
            throw damaged("\(what) (\(reference)) is not a boolean")
        }
        return flag
    }

    private func integer(_ reference: Reference?, what: String) throws -> Int64? {
        guard let reference else { return nil }
        let object = try archive.object(reference)
        let number: Int64?
        switch object {
        case .value(.integer(let value)): number = value
        // Foundation archives an NSDecimalNumber under the class name NSDecimalNumberPlaceholder.
        case .instance(let instance) where instance.isKind(of: "NSDecimalNumber") || instance.isKind(of: "NSDecimalNumberPlaceholder"):
            number = Self.wholeNumber(instance)
        default: number = nil
        }
        guard let number, (0...Int64(Int32.max)).contains(number) else {
            throw damaged("\(what) (\(reference)) is not a count or code")
        }
        return number
    }

    /// A whole `NSDecimalNumber` as Foundation archives it (`NS.mantissa`: little-endian 16-bit words, `NS.length`
    /// of them, `NS.exponent`, `NS.negative`), as Xcode 3 archived some counts (Apress's `Shapes`: the minimum
    /// count 3 of `Polygon.vertices`); nil when it is not a whole number that fits.
    private static func wholeNumber(_ decimal: KeyedArchive.Instance) -> Int64? {
        guard let mantissa = decimal.fields["NS.mantissa"]?.data, let length = decimal.fields["NS.length"]?.integer,
              let exponent = decimal.fields["NS.exponent"]?.integer, (0...4).contains(length),
              mantissa.count >= 2 * Int(length), (-9...9).contains(exponent) else { return nil }
        guard decimal.fields["NS.mantissa.bo"]?.integer ?? 1 == 1 else { return nil }
        var value: Int64 = 0
        let bytes = [UInt8](mantissa)
        for word in (0..<Int(length)).reversed() {
            let part = Int64(bytes[2 * word]) | Int64(bytes[2 * word + 1]) << 8
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 1 << 16)
            guard !overflow else { return nil }
            value = shifted | part
        }
        for _ in 0..<max(exponent, 0) {
            let (scaled, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = scaled
        }
        for _ in 0..<max(-exponent, 0) {
            guard value % 10 == 0 else { return nil }
            value /= 10
        }
        if case .boolean(true)? = decimal.fields["NS.negative"] { value = -value }
        return value
    }

    private func string(_ reference: Reference?, what: String) throws -> String? {
        do {
            guard let text = try archive.string(reference) else { return nil }
            return text.isEmpty ? nil : text
        } catch let failure as KeyedArchive.Failure {
            throw damaged("\(what): \(failure.reason)")
        }
    }

    /// Whether `reference` is `$null` or an empty array, set or dictionary.
    private func isEmptyCollection(_ reference: Reference?) -> Bool {
        guard let reference else { return true }
        guard let object = try? archive.instance(reference) else { return false }
        for key in ["NS.objects", "NS.keys"] {
            if let items = object.fields[key]?.array, !items.isEmpty { return false }
        }
        return object.fields["NS.objects"] != nil
    }

    /// `<userInfo><entry key value/></userInfo>` from a string-keyed dictionary of strings.
    private func userInfoNodes(_ reference: Reference?, what: String) throws -> [XcodeModelXMLNode] {
        let entries = try archive.stringKeyedEntries(reference)
        guard !entries.isEmpty else { return [] }
        let nodes = try entries.sorted { $0.key < $1.key }.map { key, value in
            guard let text = try userInfoText(value) else { throw damaged("\(what) '\(key)' is null") }
            return XcodeModelXMLNode(name: "entry", attributes: ["key": key, "value": text], children: [],
                                     origin: "\(value) of \(source)")
        }
        return [XcodeModelXMLNode(name: "userInfo", attributes: [:], children: nodes, origin: "\(what) of \(source)")]
    }

    /// A user info value as the XML form's text: a string as it is; an array, dictionary or number (Sync
    /// Services' `com.apple.syncservices.IdentityProperties` in mogenerator's `MyModel` is an array) in the
    /// old-style property list text of its description, `(a, b)` or `{k = v; }` — how Xcode converts such a
    /// value to the XML form is inferred (docs/INTEROP.md); user info is in no version hash.
    private func userInfoText(_ reference: Reference) throws -> String? {
        if case .value(.string(let text)) = try archive.object(reference) { return text }
        if let text = try? archive.string(reference) { return text }
        func text(_ value: KeyedArchive.Value) -> String {
            switch value {
            case .null: return ""
            case .string(let string): return string
            case .integer(let number): return String(number)
            case .real(let number): return String(number)
            case .boolean(let flag): return flag ? "1" : "0"
            case .date(let date): return String(date.timeIntervalSinceReferenceDate)
            case .data(let data): return "<" + data.map { String(format: "%02x", $0) }.joined() + ">"
            case .array(let items): return "(" + items.map(text).joined(separator: ", ") + ")"
            case .dictionary(let entries):
                return "{" + entries.sorted { $0.key < $1.key }.map { "\($0.key) = \(text($0.value)); " }.joined() + "}"
            case .instance(let className, _): return className
            }
        }
        let value = try archive.resolved(reference)
        if case .null = value { return nil }
        return text(value)
    }

    private func damaged(_ reason: String) -> ModelError { .malformedModelFile(path: source, reason: reason) }

    private func unmappable(_ construct: String) -> ModelError { .xcode3BinaryModel(folder: folder, construct: construct) }
}
