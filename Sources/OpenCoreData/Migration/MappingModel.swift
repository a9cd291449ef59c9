import Foundation

/// How a store of one model version becomes a store of another, entity by entity (Core Data's
/// `NSMappingModel`): read from an Xcode `.xcmappingmodel` or built in code, and run by
/// ``MappingModelMigration`` (docs/MIGRATION.md, "Mapping models").
///
/// ```swift
/// let mapping = try MappingModel(contentsOf: bundleFolder.appendingPathComponent("Garage1to2.xcmappingmodel"))
/// try MappingModelMigration.migrate(storeAt: old, sourceModel: v1, destinationModel: v2, mapping: mapping, into: new)
/// ```
public struct MappingModel: Sendable, Hashable {
    /// The entity mappings, in the order they run.
    public var entityMappings: [EntityMapping]
    /// The model version the mapping reads from, as the file names it (`Garage` for
    /// `Garage.xcdatamodeld/Garage.xcdatamodel`); nil when unknown.
    public var sourceModelVersionName: String?
    /// The model version the mapping writes to; nil when unknown.
    public var destinationModelVersionName: String?

    /// A mapping model made of `entityMappings`.
    public init(entityMappings: [EntityMapping], sourceModelVersionName: String? = nil,
                destinationModelVersionName: String? = nil) {
        self.entityMappings = entityMappings
        self.sourceModelVersionName = sourceModelVersionName
        self.destinationModelVersionName = destinationModelVersionName
    }

    /// Reads an Xcode mapping model: a `.xcmappingmodel` folder (its `xcmapping.xml`), the XML file itself,
    /// or a compiled mapping model (`.cdm`, a keyed archive, told by its content), which names no model
    /// versions: ``sourceModelVersionName`` and ``destinationModelVersionName`` are nil, and its entity
    /// version hashes say which models it fits (``fits(sourceModel:destinationModel:)``).
    ///
    /// - Throws: ``MigrationError/invalidMappingModel(path:reason:)`` when the file is missing, not XML or a
    ///   keyed archive of an `NSMappingModel`, or its objects do not hold together (a reference to no
    ///   object, a mapping without entities or a property mapping without a name, an expression that does
    ///   not parse), and ``MigrationError/unsupportedMapping(entityMapping:reason:)`` for what is not read or
    ///   never run (an attribute or key the reader does not know, an archived expression of a kind not read,
    ///   a `$manager` function other than the supported ones), named.
    public init(contentsOf url: URL) throws {
        var isFolder: ObjCBool = false
        let file = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) && isFolder.boolValue
            ? url.appendingPathComponent("xcmapping.xml") : url
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw MigrationError.invalidMappingModel(path: file.path, reason: "the file cannot be read")
        }
        self = CompiledMappingModel.isCompiled(data)
            ? try CompiledMappingModel.read(data, path: file.path) : try MappingModelXML.read(data, path: file.path)
    }

    /// Whether the entity version hashes the mapping records (a compiled `.cdm` records them; a mapping
    /// read from `xcmapping.xml` does not) are those of `sourceModel` and `destinationModel`: false when
    /// it records none, or names a version.
    public func fits(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) -> Bool {
        guard sourceModelVersionName == nil, destinationModelVersionName == nil else { return false }
        var recordsAny = false
        for mapping in entityMappings {
            if let hash = mapping.sourceEntityVersionHash {
                guard let name = mapping.sourceEntityName, sourceModel.entityVersionHashesByName[name] == hash else { return false }
                recordsAny = true
            }
            if let hash = mapping.destinationEntityVersionHash {
                guard let name = mapping.destinationEntityName, destinationModel.entityVersionHashesByName[name] == hash else { return false }
                recordsAny = true
            }
        }
        return recordsAny
    }

    /// The entity mapping named `name`.
    public func entityMapping(named name: String) -> EntityMapping? { entityMappings.first { $0.name == name } }

    /// The first mapping model in `folder` (not its subfolders; `.xcmappingmodel` folders in name order)
    /// that maps `sourceVersion` to `destinationVersion`, by the model paths it records; nil when none does.
    ///
    /// - Throws: what ``init(contentsOf:)`` throws for a mapping model in the folder that cannot be read:
    ///   it might have been the one wanted.
    public static func find(in folder: URL, from sourceVersion: String, to destinationVersion: String) throws -> MappingModel? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names.sorted() where name.hasSuffix(".xcmappingmodel") {
            let mapping = try MappingModel(contentsOf: folder.appendingPathComponent(name))
            if mapping.sourceModelVersionName == sourceVersion, mapping.destinationModelVersionName == destinationVersion {
                return mapping
            }
        }
        return nil
    }
}
