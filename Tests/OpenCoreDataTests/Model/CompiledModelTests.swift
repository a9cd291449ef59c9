import Foundation
import GRDB
import Testing
@testable import OpenCoreData

// Foundation on Linux archives only top-level classes, so the fixture's classes are not nested.
final class MomFixtureModel: NSObject, NSCoding {
    var entities: [String: MomFixtureEntity] = [:]
    var versionIdentifiers: [String] = []
    func encode(with coder: NSCoder) {
        coder.encode(NSDictionary(dictionary: entities), forKey: "NSEntities")
        coder.encode(NSSet(array: versionIdentifiers), forKey: "NSVersionIdentifiers")
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

final class MomFixtureEntity: NSObject, NSCoding {
    var name = "", className: String?, superentity: MomFixtureEntity?, isAbstract = false
    var properties: [String: NSObject] = [:], userInfo: [String: String] = [:]
    weak var model: MomFixtureModel?
    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "NSEntityName")
        if let className { coder.encode(className, forKey: "NSClassNameForEntity") }
        coder.encode(model, forKey: "NSManagedObjectModel")
        coder.encode(superentity, forKey: "NSSuperentity")
        if isAbstract { coder.encode(true, forKey: "NSIsAbstract") }
        coder.encode(NSDictionary(dictionary: properties), forKey: "NSProperties")
        coder.encode(NSDictionary(dictionary: userInfo), forKey: "NSUserInfo")
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

final class MomFixtureAttribute: NSObject, NSCoding {
    var name = "", entity: MomFixtureEntity?, isOptional = true, isTransient = false, typeCode: Int32 = 0
    var defaultValue: NSObject?, transformer: String?
    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "NSPropertyName")
        coder.encode(entity, forKey: "NSEntity")
        coder.encode(isOptional, forKey: "NSIsOptional")
        coder.encode(isTransient, forKey: "NSIsTransient")
        coder.encode(typeCode, forKey: "NSAttributeType")
        coder.encode(defaultValue, forKey: "NSDefaultValue")
        if let transformer { coder.encode(transformer, forKey: "NSValueTransformerName") }
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}

final class MomFixtureRelationship: NSObject, NSCoding {
    var name = "", entity: MomFixtureEntity?, destination: MomFixtureEntity?, inverse: MomFixtureRelationship?
    var isOptional = true, isTransient = false, isOrdered = false, minCount = 0, maxCount = 0, deleteRule = 1
    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "NSPropertyName")
        coder.encode(entity, forKey: "NSEntity")
        coder.encode(isOptional, forKey: "NSIsOptional")
        coder.encode(isTransient, forKey: "NSIsTransient")
        coder.encode(destination, forKey: "NSDestinationEntity")
        coder.encode(inverse, forKey: "NSInverseRelationship")
        coder.encode(Int32(minCount), forKey: "NSMinCount")
        coder.encode(Int32(maxCount), forKey: "NSMaxCount")
        coder.encode(Int32(deleteRule), forKey: "NSDeleteRule")
        if isOrdered { coder.encode(true, forKey: "NSIsOrdered") }
    }
    override init() {}
    required init?(coder: NSCoder) { nil }
}


/// Writes a model as a compiled `.mom`: an NSKeyedArchiver archive with Core Data's class names and keys
/// (docs/INTEROP.md), made with Foundation's archiver from a model loaded from XML.
enum CompiledModelFixture {
    /// `model` archived as a compiled model.
    static func momData(_ model: ManagedObjectModel) -> Data {
        let archived = MomFixtureModel()
        archived.versionIdentifiers = model.versionIdentifiers
        for source in model.entities {
            let entity = MomFixtureEntity()
            entity.name = source.name
            entity.className = source.managedObjectClassName
            entity.isAbstract = source.isAbstract
            entity.userInfo = source.userInfo
            entity.model = archived
            archived.entities[source.name] = entity
        }
        var relationships: [String: MomFixtureRelationship] = [:]
        for source in model.entities {
            let entity = archived.entities[source.name]!
            entity.superentity = source.superentity.map { archived.entities[$0.name]! }
            for property in source.properties {
                if let attribute = property as? AttributeDescription {
                    let archivedAttribute = MomFixtureAttribute()
                    archivedAttribute.name = attribute.name
                    archivedAttribute.entity = entity
                    archivedAttribute.isOptional = attribute.isOptional
                    archivedAttribute.isTransient = attribute.isTransient
                    archivedAttribute.typeCode = attribute.attributeType.typeCode
                    archivedAttribute.transformer = attribute.valueTransformerName
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
                    archivedRelationship.name = relationship.name
                    archivedRelationship.entity = entity
                    archivedRelationship.isOptional = relationship.isOptional
                    archivedRelationship.isTransient = relationship.isTransient
                    archivedRelationship.isOrdered = relationship.isOrdered
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
        }
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.outputFormat = .binary
        archiver.encode(archived, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        // Foundation on Linux writes the Swift class names whatever `setClassName` says, so the names are put
        // in place in the binary list: each name is one string object found by its offset, and a shorter
        // string written over a longer one leaves only unreferenced bytes behind.
        var bytes = [UInt8](archiver.encodedData)
        for (type, name) in [(MomFixtureModel.self as AnyClass, "NSManagedObjectModel"),
                             (MomFixtureEntity.self, "NSEntityDescription"),
                             (MomFixtureAttribute.self, "NSAttributeDescription"),
                             (MomFixtureRelationship.self, "NSRelationshipDescription")] {
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
        return Data(bytes)
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
            sameModel(try ManagedObjectModel(compiledModelAt: file), original)
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

    /// Damaged compiled models are a ModelError (or read), never a crash; reading changes nothing.
    @Test func damagedCompiledModelsNeverCrash() throws {
        let original = CompiledModelFixture.momData(
            try ManagedObjectModel(contentsOf: InteropFixtures.url("FailedBanks.xcdatamodeld")))
        var generator = InteropFixtures.SeededGenerator(seed: 2024)
        var refused = 0
        for round in 0..<1000 {
            let damaged = InteropFixtures.damaged(original, round: round, using: &generator)
            do {
                _ = try ManagedObjectModel(compiledModelData: damaged, source: "damaged \(round)")
            } catch is ModelError {
                refused += 1
            }
        }
        #expect(refused > 0)
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

    @Test func aDamagedCacheIsATypedError() throws {
        let directory = TemporaryDirectory()
        let garbage = try storeWithCache(in: directory, content: Data([0xFF, 0x00, 0x12, 0x34]))
        #expect(throws: StoreError.self) { try ManagedObjectModel.cachedModel(ofStoreAt: garbage) }
        let other = TemporaryDirectory()
        let notAnArchive = try storeWithCache(in: other, content: StoredDeflate.compress(Data("not an archive".utf8)))
        #expect(throws: ModelError.self) { try ManagedObjectModel.cachedModel(ofStoreAt: notAnArchive) }
    }
}
