import Foundation
@testable import OpenCoreData

/// Writes a model given as XML (`contents`) in Xcode 3's binary form: an `elements` keyed archive of Xcode's
/// editing objects with the classes and keys docs/INTEROP.md lists ("Xcode 3's binary models"), every
/// back-reference (`_owner`, inverses, destinations) in place. The naive writer the reader is checked against.
struct Xcode3ElementsFixture {
    private(set) var objects: [PropertyListValue] = [.string("$null")]
    private var classReferences: [String: UInt64] = [:]

    static let entityClasses = ["XDPMEntity", "XDUMLClassImp", "XDUMLClassifierImp", "XDUMLNamespaceImp",
                                "XDUMLNamedElementImp", "XDUMLElementImp"]
    static let attributeClasses = ["XDPMAttribute", "XDPMProperty", "XDUMLPropertyImp", "XDUMLNamedElementImp", "XDUMLElementImp"]
    static let relationshipClasses = ["XDPMRelationship", "XDPMProperty", "XDUMLPropertyImp", "XDUMLNamedElementImp",
                                      "XDUMLElementImp"]
    static let fetchedPropertyClasses = ["XDPMFetchedProperty", "XDPMProperty", "XDUMLPropertyImp",
                                         "XDUMLNamedElementImp", "XDUMLElementImp"]
    static let deleteRuleCodes = ["No Action": 0, "Nullify": 1, "Cascade": 2, "Deny": 3]

    /// The `elements` archive of the model in `xml`.
    static func elements(fromXML xml: String) throws -> Data {
        var fixture = Xcode3ElementsFixture()
        return fixture.archive(try XcodeModelXMLNode.parse(Data(xml.utf8), source: "fixture"))
    }

    /// A `.xcdatamodel` folder named `name` in `directory` holding `elements` (and a `layout`), no `contents`.
    static func folder(named name: String, in directory: URL, elements: Data) throws -> URL {
        let folder = directory.appendingPathComponent("\(name).xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try elements.write(to: folder.appendingPathComponent("elements"))
        try KeyedArchiveWriter.archive(["diagram": "boxes"]).write(to: folder.appendingPathComponent("layout"))
        return folder
    }

    // MARK: Objects

    mutating func append(_ value: PropertyListValue) -> UInt64 {
        objects.append(value)
        return UInt64(objects.count - 1)
    }

    /// A place for an object written later (so others can refer to it first).
    mutating func reserve() -> UInt64 { append(.string("$null")) }

    mutating func classReference(_ names: [String]) -> UInt64 {
        if let known = classReferences[names[0]] { return known }
        let reference = append(.dictionary(["$classname": .string(names[0]),
                                            "$classes": .array((names + ["NSObject"]).map { .string($0) })]))
        classReferences[names[0]] = reference
        return reference
    }

    mutating func fill(_ slot: UInt64, classes: [String], _ fields: [String: PropertyListValue]) {
        var fields = fields
        fields["$class"] = .uid(classReference(classes))
        objects[Int(slot)] = .dictionary(fields)
    }

    mutating func instance(_ classes: [String], _ fields: [String: PropertyListValue]) -> UInt64 {
        let slot = reserve()
        fill(slot, classes: classes, fields)
        return slot
    }

    mutating func string(_ text: String?) -> PropertyListValue {
        guard let text else { return .uid(0) }
        return .uid(append(.string(text)))
    }

    mutating func array(_ elements: [UInt64]) -> UInt64 {
        instance(["NSMutableArray", "NSArray"], ["NS.objects": .array(elements.map { .uid($0) })])
    }

    mutating func dictionary(_ entries: [(String, UInt64)]) -> UInt64 {
        let keys = entries.map { append(.string($0.0)) }
        return instance(["NSMutableDictionary", "NSDictionary"], ["NS.keys": .array(keys.map { .uid($0) }),
                                                                  "NS.objects": .array(entries.map { .uid($0.1) })])
    }

    func data(root: UInt64) -> Data {
        BinaryPropertyListWriter.write(.dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000),
            "$top": .dictionary(["root": .uid(root)]), "$objects": .array(objects)]))
    }

    // MARK: The model

    private mutating func archive(_ model: XcodeModelXMLNode) -> Data {
        let root = reserve()
        let package = reserve()
        let entityNodes = model.children(named: "entity")
        var entities: [String: UInt64] = [:]
        var properties: [String: UInt64] = [:]
        for entity in entityNodes {
            let name = entity["name"] ?? ""
            entities[name] = reserve()
            for property in entity.children where ["attribute", "relationship", "fetchedProperty"].contains(property.name) {
                properties["\(name).\(property["name"] ?? "")"] = reserve()
            }
        }
        for entity in entityNodes {
            writeEntity(entity, entities: entities, properties: properties, package: package)
        }
        fill(package, classes: ["XDModelPackage", "XDUMLPackageImp", "XDUMLNamespaceImp", "XDUMLNamedElementImp",
                                "XDUMLElementImp"], [
            "_name": string(""), "_owner": .uid(0), "_xd_owningModel": .uid(root), "_visibility": .integer(0),
            "_uniqueElementID": .uid(append(.integer(4_511_383_638))),
            "XDBucketForClassesstorage": .uid(dictionary(entities.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })),
            "XDBucketForClasseswasEncoded": string("YES"),
            "XDBucketForPackagesstorage": .uid(dictionary([])), "XDBucketForPackageswasEncoded": string("YES"),
            "XDBucketForInterfacesstorage": .uid(dictionary([])), "XDBucketForInterfaceswasEncoded": string("YES"),
            "XDBucketForDataTypesstorage": .uid(dictionary([])), "XDBucketForDataTypeswasEncoded": string("YES")])
        fill(root, classes: ["XDPMModel", "XDModel"], [
            "_xd_rootPackage": .uid(package), "_xd_comments": .uid(array([])), "_xd_modelManager": .uid(0),
            "_configurationsByName": .uid(dictionary([])), "_xd_modelName": .uid(0),
            "_modelVersionIdentifier": string(model["userDefinedModelVersionIdentifier"] ?? "")])
        return data(root: root)
    }

    /// A stereotype named `name` on `owner`, its slots holding the given values (nil: `$null`).
    mutating func stereotype(_ name: String, owner: UInt64, slots: [(String, UInt64?)]) -> UInt64 {
        let stereotype = reserve()
        var storage: [(String, UInt64)] = []
        for (slotName, value) in slots {
            var fields: [String: PropertyListValue] = [
                "_name": string(slotName), "_default": .uid(value ?? 0), "_owner": .uid(stereotype),
                "_type": .uid(0), "_association": .uid(0), "_visibility": .integer(0), "_uniqueElementID": .uid(0)]
            for flag in ["_isReadOnly", "_isStatic", "_isUnique", "_isDerived", "_isOrdered", "_isComposite", "_isLeaf"] {
                fields[flag] = .boolean(false)
            }
            storage.append((slotName, instance(["XDUMLPropertyImp", "XDUMLNamedElementImp", "XDUMLElementImp"], fields)))
        }
        fill(stereotype, classes: ["XDUMLStereotypeImp", "XDUMLClassImp", "XDUMLClassifierImp", "XDUMLNamespaceImp",
                                   "XDUMLNamedElementImp", "XDUMLElementImp"], [
            "_name": string(name), "_owner": .uid(owner), "_visibility": .integer(0), "_uniqueElementID": .uid(0),
            "_isAbstract": .boolean(false), "XDBucketForOwnedAttributesstorage": .uid(dictionary(storage)),
            "XDBucketForOwnedAttributesordered": string("ordered"), "XDBucketForOwnedAttributeswasEncoded": string("YES")])
        return stereotype
    }

    mutating func value(_ flag: Bool) -> UInt64 { append(.boolean(flag)) }
    mutating func value(_ number: Int) -> UInt64 { append(.integer(Int64(number))) }
    mutating func value(_ text: String?) -> UInt64? { text.map { append(.string($0)) } }

    mutating func userInfo(_ node: XcodeModelXMLNode) -> UInt64 {
        let entries = node.children(named: "userInfo").flatMap { $0.children(named: "entry") }
        return dictionary(entries.map { ($0["key"] ?? "", append(.string($0["value"] ?? ""))) })
    }

    private mutating func writeEntity(_ node: XcodeModelXMLNode, entities: [String: UInt64], properties: [String: UInt64],
                                      package: UInt64) {
        let name = node["name"] ?? ""
        let entity = entities[name]!
        let isAbstract = node["isAbstract"] == "YES"
        let classMapping = instance(["XDUMLClassImp", "XDUMLClassifierImp", "XDUMLNamespaceImp", "XDUMLNamedElementImp",
                                     "XDUMLElementImp"], ["_name": string("XDGenericRecordClass"), "_owner": .uid(0),
                                                          "_visibility": .integer(0), "_uniqueElementID": .uid(0),
                                                          "_isAbstract": .boolean(false)])
        let stereotype = stereotype("XD_PStereotype", owner: entity, slots: [
            ("XD_PSK_entityClassName", value(node["representedClassName"])), ("XD_PSK_isAbstract", value(isAbstract)),
            ("XD_PSK_userInfo", userInfo(node)), ("XD_PSK_versionHashModifier", value(node["versionHashModifier"])),
            ("XD_PSK_fetchRequestsArray", array([])), ("XD_PSK_classMapping", classMapping),
            ("XD_PSK_elementID", value(node["elementID"])), ("XDPMCompoundIndexes", array([])),
            ("XDPMUniquenessConstraints", array([]))])
        var owned: [(String, UInt64)] = []
        for child in node.children where properties["\(name).\(child["name"] ?? "")"] != nil {
            let reference = properties["\(name).\(child["name"] ?? "")"]!
            writeProperty(child, at: reference, entity: entity, entities: entities, properties: properties)
            owned.append((child["name"] ?? "", reference))
        }
        fill(entity, classes: Self.entityClasses, [
            "_name": string(name), "_owner": .uid(package), "_visibility": .integer(0),
            "_uniqueElementID": .uid(append(.integer(Int64(entity)))), "_isAbstract": .boolean(isAbstract),
            "XDBucketForOwnedAttributesstorage": .uid(dictionary(owned)),
            "XDBucketForOwnedAttributesordered": string("ordered"), "XDBucketForOwnedAttributeswasEncoded": string("YES"),
            "XDBucketForStereotypesstorage": .uid(dictionary([("XD_PStereotype", stereotype)])),
            "XDBucketForStereotypesordered": string("ordered"), "XDBucketForStereotypeswasEncoded": string("YES"),
            "XDBucketForGeneralizationsstorage": .uid(array([])), "XDBucketForGeneralizationsordered": string("ordered"),
            "XDBucketForGeneralizationswasEncoded": string("YES"), "XDBucketForGeneralizationsduplicates": .uid(array([]))])
    }

    private mutating func writeProperty(_ node: XcodeModelXMLNode, at property: UInt64, entity: UInt64,
                                        entities: [String: UInt64], properties: [String: UInt64]) {
        let flag = { (key: String) in node[key] == "YES" }
        var common: [(String, UInt64?)] = [
            ("XD_PPSK_isTransient", value(flag("transient"))), ("XD_PPSK_isIndexed", value(flag("indexed"))),
            ("XD_PPSK_isSpotlightIndexed", value(false)), ("XD_PPSK_isStoredInTruthFile", value(false)),
            ("XD_PPSK_userInfo", userInfo(node)), ("XD_PPSK_versionHashModifier", value(node["versionHashModifier"])),
            ("XD_PPSK_elementID", value(node["elementID"]))]
        let classes: [String]
        var stereotypes: [(String, UInt64)] = []
        switch node.name {
        case "attribute":
            classes = Self.attributeClasses
            common.append(("XD_PPSK_isOptional", value(flag("optional"))))
            let type = AttributeType(modelFileName: node["attributeType"] ?? "")!
            stereotypes.append(("XD_PAtt_Stereotype", stereotype("XD_PAtt_Stereotype", owner: property, slots: [
                ("XD_PAttK_attributeType", value(Int(type.typeCode))),
                ("XD_PAttK_defaultValueAsString", value(node["defaultValueString"])),
                ("XD_PAttK_minValueString", value(node["minValueString"])),
                ("XD_PAttK_maxValueString", value(node["maxValueString"])),
                ("XD_PAttK_regularExpressionString", value(node["regularExpressionString"])),
                ("XD_PAttK_valueTransformerName", value(node["valueTransformerName"])),
                ("XD_PAttK_allowsExternalBinaryDataStorage", value(flag("allowsExternalBinaryDataStorage")))])))
        case "relationship":
            classes = Self.relationshipClasses
            common.append(("XD_PPSK_isOptional", value(flag("optional"))))
            let destinationName = node["destinationEntity"] ?? ""
            let toMany = flag("toMany")
            let inverse = node["inverseName"].flatMap { properties["\(destinationName).\($0)"] }
            stereotypes.append(("XD_PR_Stereotype", stereotype("XD_PR_Stereotype", owner: property, slots: [
                ("XD_PRK_minCount", value(Int(node["minCount"] ?? "0")!)),
                ("XD_PRK_maxCount", value(Int(node["maxCount"] ?? (toMany ? "0" : "1"))!)),
                ("XD_PRK_deleteRule", value(Self.deleteRuleCodes[node["deletionRule"] ?? "Nullify"]!)),
                ("XD_PRK_destination", entities[destinationName]), ("XD_PRK_isToMany", value(toMany)),
                ("XD_PRK_ordered", value(flag("ordered"))), ("XD_PRK_inverseRelationship", inverse)])))
        default:
            classes = Self.fetchedPropertyClasses
            let requestNode = node.children(named: "fetchRequest").first
            let request = instance(["XDPMFetchRequest"], [
                "_name": string(requestNode?["name"]), "_predicateString": string(requestNode?["predicateString"]),
                "_entity": .uid(requestNode?["entity"].flatMap { entities[$0] } ?? 0), "_fetchedProperty": .uid(property)])
            stereotypes.append(("XD_PFP_Stereotype", stereotype("XD_PFP_Stereotype", owner: property,
                                                                slots: [("XD_PFP_fetchRequestKey", request)])))
        }
        stereotypes.insert(("XD_PPropStereotype", stereotype("XD_PPropStereotype", owner: property, slots: common)), at: 0)
        var fields: [String: PropertyListValue] = [
            "_name": string(node["name"]), "_owner": .uid(entity), "_default": .uid(0), "_type": .uid(0),
            "_association": .uid(0), "_visibility": .integer(0), "_uniqueElementID": .uid(0),
            "XDBucketForStereotypesstorage": .uid(dictionary(stereotypes)), "XDBucketForStereotypesordered": string("ordered"),
            "XDBucketForStereotypeswasEncoded": string("YES")]
        for umlFlag in ["_isReadOnly", "_isStatic", "_isUnique", "_isDerived", "_isOrdered", "_isComposite", "_isLeaf"] {
            fields[umlFlag] = .boolean(false)
        }
        fill(property, classes: classes, fields)
    }
}
