import Foundation

/// Finding and inferring mapping models in Core Data's words, as a migrator walking model versions does.
extension MappingModel {
    /// The mapping model in `bundles` (nil: the main bundle) from `sourceModel` to `destinationModel`, or nil
    /// when there is none or one cannot be read (Core Data's `NSMappingModel(from:forSourceModel:destinationModel:)`;
    /// ``find(in:forSourceModel:destinationModel:)`` says why).
    public init?(from bundles: [Bundle]?, forSourceModel sourceModel: ManagedObjectModel?,
                 destinationModel: ManagedObjectModel?) {
        guard let sourceModel, let destinationModel,
              let found = try? Self.find(in: bundles ?? [Bundle.main], forSourceModel: sourceModel, destinationModel: destinationModel) else {
            return nil
        }
        self = found
    }

    /// The mapping model among the resources of `bundles` (their resource folders and everything below them)
    /// that maps `sourceModel` to `destinationModel`: a compiled `.cdm` whose entity version hashes are the
    /// models' (``fits(sourceModel:destinationModel:)``), or a `.xcmappingmodel` whose source and destination
    /// model paths name the models' versions (``ManagedObjectModel/versionName``); nil when none does.
    ///
    /// - Throws: what ``init(contentsOf:)`` throws for a mapping model there that cannot be read: it might
    ///   have been the one wanted.
    public static func find(in bundles: [Bundle], forSourceModel sourceModel: ManagedObjectModel,
                            destinationModel: ManagedObjectModel) throws -> MappingModel? {
        var folders: [URL] = []
        for bundle in bundles {
            for folder in [bundle.resourceURL, bundle.bundleURL].compactMap({ $0?.standardizedFileURL })
            where !folders.contains(folder) {
                folders.append(folder)
            }
        }
        for folder in folders {
            for file in mappingModelFiles(below: folder) {
                let mapping = try MappingModel(contentsOf: file)
                if mapping.fits(sourceModel: sourceModel, destinationModel: destinationModel) { return mapping }
                if let source = sourceModel.versionName, let destination = destinationModel.versionName,
                   mapping.sourceModelVersionName == source, mapping.destinationModelVersionName == destination {
                    return mapping
                }
            }
        }
        return nil
    }

    /// The `.cdm` files and `.xcmappingmodel` folders below `folder`, sorted by path; not looked into.
    private static func mappingModelFiles(below folder: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
        var found: [URL] = []
        for case let url as URL in walker {
            switch url.pathExtension.lowercased() {
            case "cdm", "xcmappingmodel":
                found.append(url)
                walker.skipDescendants()
            case "xcdatamodeld", "xcdatamodel", "momd":
                walker.skipDescendants()
            default:
                continue
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The mapping Core Data would infer from `sourceModel` to `destinationModel`, as a mapping model an app
    /// can look into and run (Core Data's `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)`):
    /// each destination entity made from the source entity of its name or renaming identifier (`Copy` when
    /// the entity is unchanged, `Transform` otherwise), each attribute and relationship read from the source
    /// property of its name or renaming identifier (`$source.name`; a relationship through whichever mapping
    /// made each object), new ones left at their defaults; entities without a source are `Add` mappings,
    /// source entities without a destination `Remove` mappings. Opening a store migrates it in SQL instead
    /// (``StoreMigration``), which also carries what a mapping model cannot say (entity numbers, history).
    ///
    /// - Throws: ``MigrationError/unsupportedTypeChange(entity:attribute:from:to:)`` for an attribute whose
    ///   type changes in a way an inferred mapping does not convert.
    public static func inferredMappingModel(forSourceModel sourceModel: ManagedObjectModel,
                                            destinationModel: ManagedObjectModel) throws -> MappingModel {
        var mappings: [EntityMapping] = []
        var matchedSources: Set<String> = []
        let sourceHashes = sourceModel.entityVersionHashesByName
        let destinationHashes = destinationModel.entityVersionHashesByName
        for destination in destinationModel.entities where !destination.isAbstract {
            guard let source = sourceModel.entitiesByName[destination.renamingIdentifier ?? destination.name]
                    ?? sourceModel.entitiesByName[destination.name] else {
                mappings.append(EntityMapping(name: "Add\(destination.name)", mappingType: .add, sourceEntityName: nil,
                                              destinationEntityName: destination.name))
                continue
            }
            matchedSources.insert(source.name)
            let unchanged = source.name == destination.name && sourceHashes[source.name] == destinationHashes[destination.name]
            var mapping = EntityMapping(name: "\(source.name)To\(destination.name)", mappingType: unchanged ? .copy : .transform,
                                        sourceEntityName: source.name, destinationEntityName: destination.name,
                                        sourceExpression: MappingSourceFetch(entityName: source.name))
            for attribute in destination.attributesByName.values.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
                guard let old = (source.attributesByName[attribute.renamingIdentifier ?? attribute.name]
                                    ?? source.attributesByName[attribute.name]), !old.isTransient else { continue }
                guard InferredMappingPlanner.convert("", from: old.attributeType, to: attribute.attributeType) != nil else {
                    throw MigrationError.unsupportedTypeChange(entity: destination.name, attribute: attribute.name,
                                                               from: old.attributeType, to: attribute.attributeType)
                }
                mapping.attributeMappings.append(PropertyMapping(
                    name: attribute.name, valueExpression: .value(.keyPath(base: .variable("source"), components: [old.name]))))
            }
            for relationship in destination.relationshipsByName.values.sorted(by: { $0.name < $1.name }) where !relationship.isTransient {
                guard let old = source.relationshipsByName[relationship.renamingIdentifier ?? relationship.name]
                        ?? source.relationshipsByName[relationship.name] else { continue }
                mapping.relationshipMappings.append(PropertyMapping(
                    name: relationship.name,
                    valueExpression: .destinationInstances(entityMappingName: "",
                                                           sourceInstances: .keyPath(base: .variable("source"), components: [old.name]))))
            }
            mappings.append(mapping)
        }
        for source in sourceModel.entities where !source.isAbstract && !matchedSources.contains(source.name) {
            mappings.append(EntityMapping(name: "Remove\(source.name)", mappingType: .remove, sourceEntityName: source.name,
                                          destinationEntityName: nil))
        }
        return MappingModel(entityMappings: mappings, sourceModelVersionName: sourceModel.versionName,
                            destinationModelVersionName: destinationModel.versionName)
    }
}
