import Foundation
import GRDB
import Testing
@testable import OpenCoreData

// Foundation on Linux archives only top-level classes, so the fixture's classes are not nested.
final class MomFixtureModel: NSObject, NSCoding {
    var entities: [String: MomFixtureEntity] = [:]
    var versionIdentifiers: [String] = []
    /// Archived `NSFetchRequest`s by name (`NSFetchRequestTemplates`).
    var fetchRequestTemplates: [String: NSObject] = [:]
    func encode(with coder: NSCoder) {
        coder.encode(NSDictionary(dictionary: entities), forKey: "NSEntities")
        coder.encode(NSSet(array: versionIdentifiers), forKey: "NSVersionIdentifiers")
        if !fetchRequestTemplates.isEmpty {
            coder.encode(NSDictionary(dictionary: fetchRequestTemplates), forKey: "NSFetchRequestTemplates")
        }
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

final class MomFixtureEntity: NSObject, NSCoding {
    var name = "", className: String?, superentity: MomFixtureEntity?, isAbstract = false
    var properties: [String: NSObject] = [:], userInfo: [String: String] = [:]
    var uniqueTuples: [[String]] = [], indexes: [MomFixtureIndex] = []
    /// Keys written as they are (for keys the loader does not read).
    var extraKeys: [String: NSObject] = [:]
    weak var model: MomFixtureModel?
    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "NSEntityName")
        if let className { coder.encode(className, forKey: "NSClassNameForEntity") }
        coder.encode(model, forKey: "NSManagedObjectModel")
        coder.encode(superentity, forKey: "NSSuperentity")
        if isAbstract { coder.encode(true, forKey: "NSIsAbstract") }
        coder.encode(NSDictionary(dictionary: properties), forKey: "NSProperties")
        coder.encode(NSDictionary(dictionary: userInfo), forKey: "NSUserInfo")
        if !uniqueTuples.isEmpty {
            coder.encode(NSArray(array: uniqueTuples.map { NSArray(array: $0.map { NSString(string: $0) }) }), forKey: "NSUniqueTuples")
        }
        if !indexes.isEmpty {
            coder.encode(NSArray(array: indexes), forKey: "NSFetchIndexDescriptions")
            // Core Data writes the older form beside it.
            coder.encode(NSArray(array: indexes.map { NSArray(array: $0.elements.map { NSString(string: $0.propertyName) }) }),
                         forKey: "NSCompoundIndexes")
        }
        for (key, value) in extraKeys { coder.encode(value, forKey: key) }
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

final class MomFixtureIndex: NSObject, NSCoding {
    var name = "", elements: [MomFixtureIndexElement] = []
    weak var entity: MomFixtureEntity?
    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "NSIndexName")
        coder.encode(NSArray(array: elements), forKey: "NSIndexElements")
        coder.encode(entity, forKey: "NSEntity")
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

final class MomFixtureIndexElement: NSObject, NSCoding {
    var propertyName = "", type = 0, isAscending = true
    weak var index: MomFixtureIndex?
    func encode(with coder: NSCoder) {
        coder.encode(propertyName, forKey: "NSPropertyName")
        coder.encode(type, forKey: "NSFetchIndexElementType")
        coder.encode(index, forKey: "NSFetchIndexDescription")
        coder.encode(isAscending, forKey: "NSAscending")
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

/// What every archived property writes: its name, entity and flags, both as Core Data's boolean keys and
/// packed into `_P` (either may be left out, to check each alone), user info, hash modifier, renaming id.
final class MomFixturePropertyBase {
    var name = "", isOptional = true, isTransient = false, isReadOnly = false, isOrdered = false
    var userInfo: [String: String] = [:], versionHashModifier: String?, renamingIdentifier: String?
    var writesBooleans = true, writesPacked = true
    var extraKeys: [String: NSObject] = [:]

    func encode(with coder: NSCoder, entity: MomFixtureEntity?) {
        coder.encode(name, forKey: "NSPropertyName")
        coder.encode(entity, forKey: "NSEntity")
        if writesBooleans {
            if isOptional { coder.encode(true, forKey: "NSIsOptional") }
            if isReadOnly { coder.encode(true, forKey: "NSIsReadOnly") }
            if isTransient { coder.encode(true, forKey: "NSIsTransient") }
            if isOrdered { coder.encode(true, forKey: "NSIsOrdered") }
        }
        if !userInfo.isEmpty { coder.encode(NSDictionary(dictionary: userInfo), forKey: "NSUserInfo") }
        if let versionHashModifier { coder.encode(versionHashModifier, forKey: "NSVersionHashModifier") }
        if let renamingIdentifier { coder.encode(renamingIdentifier, forKey: "NSRenamingIdentifier") }
        if writesPacked {
            var flags = CompiledPropertyFlags()
            flags.isOptional = isOptional
            flags.isReadOnly = isReadOnly
            flags.isTransient = isTransient
            flags.isOrdered = isOrdered
            flags.omitsValidationPredicates = extraKeys["NSValidationPredicates"] == nil
            flags.omitsValidationWarnings = extraKeys["NSValidationWarnings"] == nil
            flags.omitsUserInfo = userInfo.isEmpty
            flags.omitsVersionHashModifier = versionHashModifier == nil
            coder.encode(flags.packed, forKey: "_P")
        }
        for (key, value) in extraKeys { coder.encode(value, forKey: key) }
    }
}

final class MomFixtureAttribute: NSObject, NSCoding {
    let base = MomFixturePropertyBase()
    var entity: MomFixtureEntity?, typeCode: Int32 = 0
    var defaultValue: NSObject?, transformer: String?
    var flags = CompiledAttributeFlags()
    /// `NSMinValueName`/`NSMaxValueName`, as Int64 or Double by the attribute's type.
    var minimum: NSNumber?, maximum: NSNumber?
    /// Further `NSFlagsKey` bits (ones the loader does not read).
    var extraFlagBits: Int32 = 0
    /// Another class than `NSAttributeDescription` (`NSDerivedAttributeDescription`), put in place by
    /// ``ArchivedObjectFixture/retagged(_:)``.
    var archivedClassNames: [String]?
    func encode(with coder: NSCoder) {
        if let archivedClassNames {
            coder.encode(archivedClassNames.joined(separator: ","), forKey: ArchivedObjectFixture.classKey)
        }
        base.encode(with: coder, entity: entity)
        coder.encode(typeCode, forKey: "NSAttributeType")
        coder.encode(defaultValue, forKey: "NSDefaultValue")
        if let transformer { coder.encode(transformer, forKey: "NSValueTransformerName") }
        var flags = self.flags
        flags.hasMinimum = minimum != nil
        flags.hasMaximum = maximum != nil
        if flags.packed | extraFlagBits != 0 { coder.encode(flags.packed | extraFlagBits, forKey: "NSFlagsKey") }
        for (key, limit) in [("NSMinValueName", minimum), ("NSMaxValueName", maximum)] {
            guard let limit else { continue }
            if [100, 200, 300, 700].contains(typeCode) {
                coder.encode(limit.int64Value, forKey: key)
            } else {
                coder.encode(limit.doubleValue, forKey: key)
            }
        }
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

final class MomFixtureRelationship: NSObject, NSCoding {
    let base = MomFixturePropertyBase()
    var entity: MomFixtureEntity?, destination: MomFixtureEntity?, inverse: MomFixtureRelationship?
    var minCount = 0, maxCount = 0, deleteRule = 1
    func encode(with coder: NSCoder) {
        base.encode(with: coder, entity: entity)
        coder.encode(destination, forKey: "NSDestinationEntity")
        coder.encode(inverse, forKey: "NSInverseRelationship")
        coder.encode(Int32(minCount), forKey: "NSMinCount")
        coder.encode(Int32(maxCount), forKey: "NSMaxCount")
        coder.encode(Int32(deleteRule), forKey: "NSDeleteRule")
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

/// Core Data's fetched property: an archived `NSFetchRequest` (``ArchivedObjectFixture/fetchRequest(entity:predicate:sort:integers:)``).
final class MomFixtureFetchedProperty: NSObject, NSCoding {
    let base = MomFixturePropertyBase()
    var entity: MomFixtureEntity?
    var request: NSObject?
    func encode(with coder: NSCoder) {
        base.encode(with: coder, entity: entity)
        coder.encode(request, forKey: "NSFetchRequest")
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}


/// Writes a model as a compiled `.mom`: an NSKeyedArchiver archive with Core Data's class names and keys
/// (docs/INTEROP.md), made with Foundation's archiver from a model loaded from XML.
enum CompiledModelFixture {
    /// How an attribute's limits and pattern are archived: in `NSFlagsKey` with `NSMinValueName`/`NSMaxValueName`
    /// (Core Data's coder), as validation predicates with warnings (Xcode's model compiler, and Core Data's
    /// coder for rules it keeps as predicates), or both.
    enum Limits { case flags, predicates, both }

    /// `model` archived as a compiled model.
    static func momData(_ model: ManagedObjectModel) -> Data { momData(model, limits: .flags, adjust: { _ in }) }

    /// `model` archived as a compiled model, its limits as `limits` says.
    static func momData(_ model: ManagedObjectModel, limits: Limits) -> Data {
        momData(model, limits: limits, adjust: { _ in })
    }

    /// The validation predicates and warnings (error codes) Xcode's model compiler writes for `attribute`'s
    /// limits and pattern.
    static func validationRules(_ attribute: AttributeDescription) -> [(QueryPredicate, Int)] {
        var rules: [(String, Double?, Int)] = []
        switch attribute.attributeType {
        case .string:
            rules = [("length >= %@", attribute.minLength.map(Double.init), 1670), ("length <= %@", attribute.maxLength.map(Double.init), 1660)]
        case .date:
            rules = [("timeIntervalSinceReferenceDate >= %@", attribute.minDate?.timeIntervalSinceReferenceDate, 1640),
                     ("timeIntervalSinceReferenceDate <= %@", attribute.maxDate?.timeIntervalSinceReferenceDate, 1630)]
        case _ where attribute.attributeType.isNumeric:
            rules = [("SELF >= %@", attribute.minValue, 1620), ("SELF <= %@", attribute.maxValue, 1610)]
        default: break
        }
        var result = rules.compactMap { format, limit, code -> (QueryPredicate, Int)? in
            guard let limit else { return nil }
            let value: Any = [.integer16, .integer32, .integer64, .string].contains(attribute.attributeType) ? Int64(limit) : limit
            return (try! QueryPredicate(format: format, value), code)
        }
        if let pattern = attribute.regularExpression {
            result.append((try! QueryPredicate(format: "SELF MATCHES %@", pattern), 1680))
        }
        return result
    }

    /// How many of `rounds` damaged copies of `data` are refused with a ModelError; any other error fails,
    /// and a crash ends the run.
    ///
    /// - Throws: any error but a ModelError that loading a copy throws.
    static func refusedDamagedCopies(of data: Data, rounds: Int, seed: UInt64) throws -> Int {
        var generator = InteropFixtures.SeededGenerator(seed: seed)
        var refused = 0
        for round in 0..<rounds {
            let damaged = InteropFixtures.damaged(data, round: round, using: &generator)
            do {
                _ = try ManagedObjectModel(compiledModelData: damaged, source: "damaged \(round)")
            } catch is ModelError {
                refused += 1
            }
        }
        return refused
    }

    /// `model` archived as a compiled model; `adjust` may change the archived objects first (to write keys
    /// the model cannot express).
    static func momData(_ model: ManagedObjectModel, limits: Limits = .flags, adjust: (MomFixtureModel) -> Void) -> Data {
        let archived = MomFixtureModel()
        archived.versionIdentifiers = model.versionIdentifiers
        for source in model.entities {
            let entity = MomFixtureEntity()
            entity.name = source.name
            entity.className = source.managedObjectClassName
            entity.isAbstract = source.isAbstract
            entity.userInfo = source.userInfo
            entity.uniqueTuples = source.uniquenessConstraints
            entity.indexes = source.indexes.map { description in
                let index = MomFixtureIndex()
                index.name = description.name
                index.entity = entity
                index.elements = description.propertyNames.map { name in
                    let element = MomFixtureIndexElement()
                    element.propertyName = name
                    element.index = index
                    return element
                }
                return index
            }
            entity.model = archived
            archived.entities[source.name] = entity
        }
        func fill(_ base: MomFixturePropertyBase, from property: PropertyDescription) {
            base.name = property.name
            base.isOptional = property.isOptional
            base.isTransient = property.isTransient
            base.isReadOnly = property.isReadOnly
            base.userInfo = property.userInfo
            base.versionHashModifier = property.versionHashModifier
            base.renamingIdentifier = property.renamingIdentifier
        }
        var relationships: [String: MomFixtureRelationship] = [:]
        for source in model.entities {
            let entity = archived.entities[source.name]!
            entity.superentity = source.superentity.map { archived.entities[$0.name]! }
            for property in source.properties {
                if let attribute = property as? AttributeDescription {
                    let archivedAttribute = MomFixtureAttribute()
                    fill(archivedAttribute.base, from: attribute)
                    archivedAttribute.entity = entity
                    archivedAttribute.typeCode = attribute.attributeType.typeCode
                    archivedAttribute.transformer = attribute.valueTransformerName
                    archivedAttribute.flags.allowsExternalBinaryDataStorage = attribute.allowsExternalBinaryDataStorage
                    archivedAttribute.flags.preservesValueInHistoryOnDeletion = attribute.preservesValueInHistoryOnDeletion
                    if limits != .predicates {
                        let minimum = attribute.minValue ?? attribute.minLength.map(Double.init) ?? attribute.minDate?.timeIntervalSinceReferenceDate
                        let maximum = attribute.maxValue ?? attribute.maxLength.map(Double.init) ?? attribute.maxDate?.timeIntervalSinceReferenceDate
                        archivedAttribute.minimum = minimum.map { NSNumber(value: $0) }
                        archivedAttribute.maximum = maximum.map { NSNumber(value: $0) }
                    }
                    let rules = validationRules(attribute).filter { limits != .flags || $0.1 == 1680 }
                    if !rules.isEmpty {
                        archivedAttribute.base.extraKeys["NSValidationPredicates"] = NSArray(array: rules.map { ArchivedObjectFixture.object($0.0)! })
                        archivedAttribute.base.extraKeys["NSValidationWarnings"] = NSArray(array: rules.map { NSNumber(value: $0.1) })
                    }
                    if let derivation = attribute.derivationExpression {
                        archivedAttribute.archivedClassNames = ["NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription"]
                        archivedAttribute.base.extraKeys["NSDerivationExpression"] = ArchivedObjectFixture.expression(derivation)!
                    }
                    switch attribute.defaultValue {
                    case let value as Int16: archivedAttribute.defaultValue = NSNumber(value: value)
                    case let value as Int32: archivedAttribute.defaultValue = NSNumber(value: value)
                    case let value as Int64: archivedAttribute.defaultValue = NSNumber(value: value)
                    case let value as Double: archivedAttribute.defaultValue = NSNumber(value: value)
                    case let value as Float: archivedAttribute.defaultValue = NSNumber(value: Double(value))
                    case let value as Bool: archivedAttribute.defaultValue = NSNumber(value: value)
                    case let value as String: archivedAttribute.defaultValue = NSString(string: value)
                    case let value as Date: archivedAttribute.defaultValue = NSDate(timeIntervalSinceReferenceDate: value.timeIntervalSinceReferenceDate)
                    default: break
                    }
                    entity.properties[attribute.name] = archivedAttribute
                } else if let relationship = property as? RelationshipDescription {
                    let archivedRelationship = relationships["\(source.name).\(relationship.name)"] ?? MomFixtureRelationship()
                    relationships["\(source.name).\(relationship.name)"] = archivedRelationship
                    fill(archivedRelationship.base, from: relationship)
                    archivedRelationship.base.isOrdered = relationship.isOrdered
                    archivedRelationship.entity = entity
                    archivedRelationship.minCount = relationship.minCount
                    archivedRelationship.maxCount = relationship.maxCount
                    archivedRelationship.deleteRule = [.noAction: 0, .nullify: 1, .cascade: 2, .deny: 3][relationship.deleteRule]!
                    archivedRelationship.destination = archived.entities[relationship.destinationEntityName]
                    if let inverse = relationship.inverseRelationship {
                        let key = "\(relationship.destinationEntityName).\(inverse.name)"
                        let archivedInverse = relationships[key] ?? MomFixtureRelationship()
                        relationships[key] = archivedInverse
                        archivedRelationship.inverse = archivedInverse
                    }
                    entity.properties[relationship.name] = archivedRelationship
                }
            }
            for fetched in source.fetchedProperties {
                let archivedFetched = MomFixtureFetchedProperty()
                fill(archivedFetched.base, from: fetched)
                archivedFetched.entity = entity
                archivedFetched.request = ArchivedObjectFixture.fetchRequest(
                    entity: archived.entities[fetched.entityName]!, predicate: fetched.predicate, sort: fetched.sortDescriptors)
                entity.properties[fetched.name] = archivedFetched
            }
        }
        for (name, template) in model.fetchRequestTemplatesByName {
            // The flags as Core Data's coder packs them: 0x1 distinct, 0x2 sub-entities, 0x4 property values,
            // 0x8 faults, 0x10 pending changes.
            var flags = 0x4
            if template.returnsDistinctResults { flags |= 0x1 }
            if template.includesSubentities { flags |= 0x2 }
            if template.returnsObjectsAsFaults { flags |= 0x8 }
            if template.includesPendingChanges { flags |= 0x10 }
            var integers = ["NSFetchRequestFlags": flags, "NSResultType": template.resultType.coreDataCode]
            for (key, value) in [("NSFetchLimit", template.fetchLimit), ("NSFetchOffset", template.fetchOffset),
                                 ("NSBatchSize", template.fetchBatchSize)] where value != 0 {
                integers[key] = value
            }
            archived.fetchRequestTemplates[name] = ArchivedObjectFixture.fetchRequest(
                entity: archived.entities[template.entityName]!, predicate: template.predicate,
                sort: template.sortDescriptors, integers: integers)
        }
        adjust(archived)
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.outputFormat = .binary
        archiver.encode(archived, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        // Foundation on Linux writes the Swift class names whatever `setClassName` says, so the names are put
        // in place in the binary list: each name is one string object found by its offset, and a shorter
        // string written over a longer one leaves only unreferenced bytes behind.
        var bytes = [UInt8](archiver.encodedData)
        let renames: [(AnyClass, String)] = [(MomFixtureModel.self, "NSManagedObjectModel"),
                             (MomFixtureEntity.self, "NSEntityDescription"),
                             (MomFixtureAttribute.self, "NSAttributeDescription"),
                             (MomFixtureRelationship.self, "NSRelationshipDescription"),
                             (MomFixtureIndex.self, "NSFetchIndexDescription"),
                             (MomFixtureIndexElement.self, "NSFetchIndexElementDescription"),
                             (MomFixtureFetchedProperty.self, "NSFetchedPropertyDescription")]
        for rename in renames {
            let type: AnyClass = rename.0, name = rename.1
            let written = Array(NSStringFromClass(type).utf8), wanted = Array(name.utf8)
            precondition(written.count < 256 && wanted.count >= 15 && wanted.count <= written.count)
            for marker: UInt8 in [0x5F, 0x7F] {
                let pattern = [marker, 0x10, UInt8(written.count)] + written
                var index = 0
                while index + pattern.count <= bytes.count {
                    if Array(bytes[index..<index + pattern.count]) == pattern {
                        bytes.replaceSubrange(index..<index + 3 + wanted.count, with: [marker, 0x10, UInt8(wanted.count)] + wanted)
                        index += pattern.count
                    } else {
                        index += 1
                    }
                }
            }
        }
        return ArchivedObjectFixture.retagged(Data(bytes))
    }
}

@Suite struct CompiledModelTests {
    private func sameModel(_ loaded: ManagedObjectModel, _ original: ManagedObjectModel) {
        #expect(loaded.entityVersionHashesByName == original.entityVersionHashesByName)
        #expect(loaded.versionIdentifiers == original.versionIdentifiers)
        for entity in original.entities {
            let other = loaded.entitiesByName[entity.name]
            #expect(other?.superentity?.name == entity.superentity?.name)
            #expect(other?.managedObjectClassName == entity.managedObjectClassName)
            #expect(other?.userInfo == entity.userInfo)
            for property in entity.properties {
                let copy = other?.propertiesByName[property.name]
                #expect(copy?.isOptional == property.isOptional, "\(entity.name).\(property.name)")
                if let attribute = property as? AttributeDescription {
                    let copied = copy as? AttributeDescription
                    #expect(copied?.attributeType == attribute.attributeType)
                    #expect(String(describing: copied?.defaultValue) == String(describing: attribute.defaultValue),
                            "\(entity.name).\(property.name)")
                } else if let relationship = property as? RelationshipDescription {
                    let copied = copy as? RelationshipDescription
                    #expect(copied?.destinationEntityName == relationship.destinationEntityName)
                    #expect(copied?.inverseRelationship?.name == relationship.inverseRelationship?.name)
                    #expect(copied?.deleteRule == relationship.deleteRule && copied?.isToMany == relationship.isToMany)
                    #expect(copied?.minCount == relationship.minCount && copied?.maxCount == relationship.maxCount)
                }
            }
        }
    }

    @Test func aCompiledModelReadsBackToTheSameModelAndHashes() throws {
        let sources = [
            try ManagedObjectModel(contentsOf: InteropFixtures.url("FailedBanks.xcdatamodeld")),
            try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld/Library.xcdatamodel")),
            try ManagedObjectModel(xmlData: RenumberedStoreFixture.xml, source: "inheritance"),
        ]
        let directory = TemporaryDirectory()
        for (index, original) in sources.enumerated() {
            let file = directory.file("Model\(index).mom")
            try CompiledModelFixture.momData(original).write(to: file)
            let loaded = try ManagedObjectModel(compiledModelAt: file)
            sameModel(loaded, original)
            #expect(loaded.unreadCompiledModelKeys == [], "\(index)")
        }
    }

    @Test func aMomdFolderLoadsItsCurrentVersion() throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("Library.momd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let banks = try ManagedObjectModel(contentsOf: InteropFixtures.url("FailedBanks.xcdatamodeld"))
        let library = try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld/Library.xcdatamodel"))
        try CompiledModelFixture.momData(banks).write(to: folder.appendingPathComponent("Old.mom"))
        try CompiledModelFixture.momData(library).write(to: folder.appendingPathComponent("Library 1.mom"))
        func writeInfo(_ current: String, format: PropertyListSerialization.PropertyListFormat) throws {
            let info: [String: Any] = ["NSManagedObjectModel_CurrentVersionName": current,
                                       "NSManagedObjectModel_VersionHashes": ["Library 1": [String: Any](), "Old": [String: Any]()]]
            try PropertyListSerialization.data(fromPropertyList: info, format: format, options: 0)
                .write(to: folder.appendingPathComponent("VersionInfo.plist"))
        }
        try writeInfo("Library 1", format: .xml)
        sameModel(try ManagedObjectModel(compiledModelAt: folder), library)
        try writeInfo("Old", format: .binary)
        sameModel(try ManagedObjectModel(compiledModelAt: folder), banks)

        // Only the optimized form of the current version: refused, naming it.
        try Data([0x01, 0x02]).write(to: folder.appendingPathComponent("Next.omo"))
        try writeInfo("Next", format: .xml)
        let error = try #require(throws: ModelError.self) { try ManagedObjectModel(compiledModelAt: folder) }
        #expect("\(error)".contains("Next.omo") && "\(error)".contains(".omo"))
        try writeInfo("../Old", format: .xml)
        #expect(throws: ModelError.self) { try ManagedObjectModel(compiledModelAt: folder) }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("VersionInfo.plist"))
        #expect(throws: ModelError.self) { try ManagedObjectModel(compiledModelAt: folder) }
    }

    /// A model using the features Core Data packs into flags or keeps beside the properties.
    static let flaggedFeaturesXML = #"""
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="Photo" representedClassName="Photo">
            <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
            <attribute name="caption" attributeType="String" minValueString="1" maxValueString="80" preserveAfterDeletion="YES"/>
            <attribute name="rating" optional="YES" attributeType="Integer 16" defaultValueString="3" minValueString="0" maxValueString="5"/>
            <attribute name="exposure" optional="YES" attributeType="Double" minValueString="-1.5" maxValueString="1e20"/>
            <attribute name="taken" optional="YES" attributeType="Date" minDateTimeInterval="0" maxDateTimeInterval="900000000.5"/>
            <attribute name="thumbnail" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES" preserveAfterDeletion="YES"/>
            <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
            <attribute name="tagged" optional="YES" attributeType="String" renamingIdentifier="label" versionHashModifier="v2">
                <userInfo><entry key="why" value="renamed"/></userInfo>
            </attribute>
            <relationship name="album" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Album" inverseName="photos" inverseEntity="Album"/>
            <uniquenessConstraints>
                <uniquenessConstraint><constraint value="caption"/></uniquenessConstraint>
                <uniquenessConstraint><constraint value="rating"/><constraint value="taken"/></uniquenessConstraint>
            </uniquenessConstraints>
            <fetchIndex name="byCaption"><fetchIndexElement property="caption" type="Binary" order="ascending"/></fetchIndex>
            <fetchIndex name="byTakenAndRating">
                <fetchIndexElement property="taken" type="Binary" order="ascending"/>
                <fetchIndexElement property="rating" type="Binary" order="ascending"/>
            </fetchIndex>
        </entity>
        <entity name="Album" representedClassName="Album">
            <attribute name="title" attributeType="String" preserveAfterDeletion="YES"/>
            <relationship name="photos" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Photo" inverseName="album" inverseEntity="Photo"/>
            <uniquenessConstraints><uniquenessConstraint><constraint value="title"/></uniquenessConstraint></uniquenessConstraints>
        </entity>
    </model>
    """#

    /// External storage, preserve-after-deletion, limits, uniqueness constraints and indexes read from a
    /// compiled model give the model and the entity version hashes its XML gives.
    @Test func flagsConstraintsAndIndexesGiveTheXMLHashes() throws {
        let original = try ManagedObjectModel(xmlData: Data(Self.flaggedFeaturesXML.utf8), source: "flagged")
        let loaded = try ManagedObjectModel(compiledModelData: CompiledModelFixture.momData(original), source: "flagged.mom")
        // Every field alike (properties in any order: the archive keeps them in a dictionary).
        func lines(_ model: ManagedObjectModel) -> [Substring] { XcodeModelWriterTests.canonical(model).split(separator: "\n").sorted() }
        #expect(lines(loaded) == lines(original))
        #expect(loaded.entityVersionHashesByName == original.entityVersionHashesByName)
        #expect(loaded.unreadCompiledModelKeys == [])
        // The features are there and move the hashes: without them the compiled form would differ.
        let photo = try #require(loaded.entitiesByName["Photo"])
        #expect(photo.uniquenessConstraints == [["caption"], ["rating", "taken"]])
        #expect(photo.indexes == [IndexDescription(name: "byCaption", propertyNames: ["caption"]),
                                  IndexDescription(name: "byTakenAndRating", propertyNames: ["taken", "rating"])])
        let thumbnail = try #require(photo.attributesByName["thumbnail"])
        #expect(thumbnail.allowsExternalBinaryDataStorage && thumbnail.preservesValueInHistoryOnDeletion)
        let stripped = try ManagedObjectModel(compiledModelData: CompiledModelFixture.momData(original) { model in
            for entity in model.entities.values {
                entity.uniqueTuples = []
                for case let attribute as MomFixtureAttribute in entity.properties.values {
                    attribute.flags = CompiledAttributeFlags()
                }
            }
        }, source: "stripped.mom")
        for name in ["Photo", "Album"] {
            #expect(stripped.entityVersionHashesByName[name] != original.entityVersionHashesByName[name], "\(name)")
        }
    }

    /// `_P` carries a property's flags (Core Data then ignores the boolean keys); archives with only the
    /// booleans read the same. Read-only enters the version hash.
    @Test func thePackedPropertyFlagsGovern() throws {
        let original = try ManagedObjectModel {
            EntityDescription("Note") {
                Attribute("text", .string, optional: false)
                Attribute("cache", .string, transient: true)
            }
        }
        let readOnly = try ManagedObjectModel {
            EntityDescription("Note") {
                Attribute("text", .string, optional: false) { $0.isReadOnly = true }
                Attribute("cache", .string, transient: true)
            }
        }
        #expect(readOnly.entityVersionHashesByName != original.entityVersionHashesByName)
        for source in [original, readOnly] {
            for (booleans, packed) in [(true, true), (false, true), (true, false)] {
                let data = CompiledModelFixture.momData(source) { model in
                    for property in model.entities["Note"]!.properties.values {
                        (property as! MomFixtureAttribute).base.writesBooleans = booleans
                        (property as! MomFixtureAttribute).base.writesPacked = packed
                    }
                }
                let loaded = try ManagedObjectModel(compiledModelData: data, source: "note.mom")
                #expect(loaded.entityVersionHashesByName == source.entityVersionHashesByName, "booleans \(booleans) packed \(packed)")
                let text = try #require(loaded.entitiesByName["Note"]?.attributesByName["text"])
                #expect(text.isReadOnly == (source === readOnly) && !text.isOptional)
            }
        }
        // The booleans say optional and not read-only; _P says otherwise, and wins.
        let contradicting = CompiledModelFixture.momData(readOnly) { model in
            let text = model.entities["Note"]!.properties["text"] as! MomFixtureAttribute
            text.base.extraKeys = ["NSIsOptional": NSNumber(value: true)]
        }
        let loaded = try ManagedObjectModel(compiledModelData: contradicting, source: "contradicting.mom")
        let text = try #require(loaded.entitiesByName["Note"]?.attributesByName["text"])
        #expect(text.isReadOnly && !text.isOptional)
    }

    /// What an archive holds and the loader does not read is listed on the model, never dropped silently;
    /// the model still loads.
    @Test func keysNotReadAreListed() throws {
        let original = try ManagedObjectModel(xmlData: Data(Self.flaggedFeaturesXML.utf8), source: "flagged")
        let rule = try QueryPredicate(format: "SELF != 'x'")
        let data = CompiledModelFixture.momData(original) { model in
            let photo = model.entities["Photo"]!
            photo.extraKeys["NSCoreSpotlightDisplayName"] = NSString(string: "caption")
            let caption = photo.properties["caption"] as! MomFixtureAttribute
            // A rule with no counterpart in the model: not a limit or pattern.
            caption.base.extraKeys["NSValidationPredicates"] = NSArray(array: [ArchivedObjectFixture.object(rule)!])
            caption.base.extraKeys["NSValidationWarnings"] = NSArray(array: [NSString(string: "no match")])
            caption.extraFlagBits = 0x20
            let fetched = MomFixtureFetchedProperty()
            fetched.base.name = "sameAlbum"
            fetched.entity = photo
            fetched.request = ArchivedObjectFixture.fetchRequest(
                entity: photo, predicate: try! QueryPredicate(format: "album == $FETCH_SOURCE.album"), integers: ["NSFetchLimit": 5])
            photo.properties["sameAlbum"] = fetched
            photo.indexes[1].elements[0].isAscending = false
            photo.indexes[0].elements[0].type = 1
            model.fetchRequestTemplates["recent"] = ArchivedObjectFixture.fetchRequest(entity: NSString(string: "Photo"), predicate: nil)
        }
        let loaded = try ManagedObjectModel(compiledModelData: data, source: "extra.mom")
        #expect(loaded.unreadCompiledModelKeys == [
            "Photo.caption: NSFlagsKey bits 0x20",
            "Photo.caption: validation predicate '\(rule.predicateFormat)' (warning 'no match'), not enforced",
            "Photo.sameAlbum: fetch request: NSFetchLimit",
            "Photo: NSCoreSpotlightDisplayName",
            "Photo: index 'byCaption': element 'caption' has NSFetchIndexElementType 1 (R-tree), read as a plain index",
            "Photo: index 'byTakenAndRating': element 'taken' is descending (NSAscending), read as ascending",
        ])
        // The template is read (by the entity's name here).
        #expect(loaded.fetchRequestTemplate(forName: "recent")?.entityName == "Photo")
        #expect(loaded.entityVersionHashesByName == original.entityVersionHashesByName)
        // The fetched property itself is read.
        #expect(loaded.entitiesByName["Photo"]?.fetchedProperty(named: "sameAlbum")?.predicate
                == (try QueryPredicate(format: "album == $FETCH_SOURCE.album")))

        // An archive from before fetch index descriptions: NSCompoundIndexes alone, named as the XML loader names them.
        let older = try ManagedObjectModel(compiledModelData: CompiledModelFixture.momData(original) { model in
            let photo = model.entities["Photo"]!
            photo.extraKeys["NSCompoundIndexes"] = NSArray(array: photo.indexes.map {
                NSArray(array: $0.elements.map { NSString(string: $0.propertyName) })
            })
            photo.indexes = []
        }, source: "older.mom")
        #expect(older.entitiesByName["Photo"]?.indexes == [IndexDescription(name: "Photo_compound_1", propertyNames: ["caption"]),
                                                           IndexDescription(name: "Photo_compound_2", propertyNames: ["taken", "rating"])])
    }

    /// Damaged compiled models are a ModelError (or read), never a crash; reading changes nothing.
    @Test func damagedCompiledModelsNeverCrash() throws {
        let original = CompiledModelFixture.momData(
            try ManagedObjectModel(contentsOf: InteropFixtures.url("FailedBanks.xcdatamodeld")))
        #expect(try CompiledModelFixture.refusedDamagedCopies(of: original, rounds: 1000, seed: 2024) > 0)
        #expect(throws: ModelError.self) { try ManagedObjectModel(compiledModelData: Data("plain".utf8), source: "text") }
    }
}

/// The model a store carries in Z_MODELCACHE, used when no model is given.
@Suite struct StoreModelCacheTests {
    /// The renumbered fixture store with its model compiled and compressed into Z_MODELCACHE.
    private func storeWithCache(in directory: TemporaryDirectory, content: Data? = nil) throws -> URL {
        let modelURL = try RenumberedStoreFixture.modelFolder(in: directory)
        let store = directory.file("Library.sqlite")
        let model = try ManagedObjectModel(contentsOf: modelURL)
        try RenumberedStoreFixture.renumberedStore(model: model, at: store)
        let blob = content ?? StoredDeflate.compress(CompiledModelFixture.momData(model))
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS Z_MODELCACHE (Z_CONTENT BLOB)")
            try db.execute(sql: "DELETE FROM Z_MODELCACHE")
            try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [blob])
        }
        try queue.close()
        try FileManager.default.removeItem(at: modelURL)
        return store
    }

    @Test func aStoreOpensWithTheModelItCarries() throws {
        let directory = TemporaryDirectory()
        let store = try storeWithCache(in: directory)
        let before = try Data(contentsOf: store)
        let model = try #require(try ManagedObjectModel.cachedModel(ofStoreAt: store))
        #expect(try Data(contentsOf: store) == before, "reading the cache changes nothing")
        #expect(model.entitiesByName.mapValues(\.entityNumber) == RenumberedStoreFixture.storeNumbers)
        let context = try RenumberedStoreFixture.context(model, store)
        #expect(try RenumberedStoreFixture.titles("Book", in: context) == ["Bits", "Paper"])

        if let binary = OcdBinary.url {
            let copy = directory.file("Copy.sqlite")
            let freshDirectory = TemporaryDirectory()
            try FileManager.default.copyItem(at: try storeWithCache(in: freshDirectory), to: copy)
            let copyBefore = try Data(contentsOf: copy)
            let inspect = try OcdBinary.run(["inspect", copy.path], binary: binary)
            #expect(inspect.status == 0, "\(inspect.stderr)")
            #expect(inspect.stdout.contains("model cache") && inspect.stdout.contains("Ebook : Book — 1 row"), "\(inspect.stdout)")
            let fetch = try OcdBinary.run(["fetch", copy.path, "--entity", "Book", "--count"], binary: binary)
            #expect(fetch.stdout == "2\n", "\(fetch.stderr)")
            #expect(try Data(contentsOf: copy) == copyBefore, "read-only commands leave the file alone")
        }
    }

    /// A compiled model passed for a store numbered differently is numbered like the store, in the library
    /// and in ocd's --model.
    @Test func aCompiledModelIsNumberedLikeTheStore() throws {
        let directory = TemporaryDirectory()
        let store = try storeWithCache(in: directory)
        let mom = directory.file("Library.mom")
        try CompiledModelFixture.momData(ManagedObjectModel(xmlData: RenumberedStoreFixture.xml, source: "xml")).write(to: mom)
        let model = try ManagedObjectModel(contentsOf: mom, numberedLikeStoreAt: store)
        #expect(model.entitiesByName.mapValues(\.entityNumber) == RenumberedStoreFixture.storeNumbers)
        if let binary = OcdBinary.url {
            let fetch = try OcdBinary.run(["fetch", store.path, "--model", mom.path, "--entity", "Ebook", "--count"], binary: binary)
            #expect(fetch.stdout == "1\n", "\(fetch.stderr)")
        }
    }

    /// `ocd inspect` and `ocd model convert` list what the cached model holds and was not read.
    @Test func theToolSaysWhatWasNotRead() throws {
        guard let binary = OcdBinary.url else { return }
        let directory = TemporaryDirectory()
        let model = try ManagedObjectModel(xmlData: RenumberedStoreFixture.xml, source: "xml")
        let store = try storeWithCache(in: directory, content: StoredDeflate.compress(CompiledModelFixture.momData(model) { archived in
            archived.entities["Book"]!.extraKeys["NSCoreSpotlightDisplayName"] = NSString(string: "title")
        }))
        let expected = ["Not read from the compiled model", "  Book: NSCoreSpotlightDisplayName"]
        let inspect = try OcdBinary.run(["inspect", store.path], binary: binary)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        for line in expected { #expect(inspect.stdout.contains(line), "\(inspect.stdout)") }
        let convert = try OcdBinary.run(["model", "convert", store.path, "--output", directory.file("Out.xcdatamodeld").path], binary: binary)
        #expect(convert.status == 0, "\(convert.stderr)")
        for line in expected { #expect(convert.stdout.contains(line), "\(convert.stdout)") }
    }

    @Test func aDamagedCacheIsATypedError() throws {
        let directory = TemporaryDirectory()
        let garbage = try storeWithCache(in: directory, content: Data([0xFF, 0x00, 0x12, 0x34]))
        #expect(throws: StoreError.self) { try ManagedObjectModel.cachedModel(ofStoreAt: garbage) }
        let other = TemporaryDirectory()
        let notAnArchive = try storeWithCache(in: other, content: StoredDeflate.compress(Data("not an archive".utf8)))
        #expect(throws: ModelError.self) { try ManagedObjectModel.cachedModel(ofStoreAt: notAnArchive) }
    }
}
