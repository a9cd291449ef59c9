import Foundation

/// Models made of other models, in Core Data's words.
extension ManagedObjectModel {
    /// One model holding the entities (and fetch request templates) of every model in `models` (Core Data's
    /// `NSManagedObjectModel.merged(from:)`); nil when two of them have an entity of the same name or the
    /// entities do not hold together (a relationship to an entity none of them has). The entities are copies:
    /// each model keeps its own.
    public static func merged(from models: [ManagedObjectModel]) -> ManagedObjectModel? {
        var children: [XcodeModelXMLNode] = []
        var entityNames: Set<String> = []
        for model in models {
            // Each model's entities go through the Xcode form, which says everything a model holds.
            guard let root = try? XcodeModelXMLNode.parse(model.xcodeModelXML(), source: "merged model") else { return nil }
            for child in root.children where child.name != "elements" {
                if child.name == "entity", !entityNames.insert(child["name"] ?? "").inserted { return nil }
                children.append(child)
            }
        }
        guard !entityNames.isEmpty else { return ManagedObjectModel() }
        let root = XcodeModelXMLNode(name: "model", attributes: [:], children: children, origin: "merged model")
        return try? ManagedObjectModel(compiled: XcodeModelLoader(source: "merged model").contents(fromModel: root))
    }

    /// The version of an Xcode model bundle among the resources of `bundles` (nil: the main bundle) that
    /// wrote the store whose metadata is `metadata` (Core Data's `mergedModel(from:forStoreMetadata:)`, for
    /// the one model an app ships): each `.xcdatamodeld` directly in a bundle's resource folder is looked
    /// into, each of its versions compared through ``isConfiguration(withName:compatibleWithStoreMetadata:)``.
    /// Nil when none fits or a bundle cannot be read.
    public static func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any]) -> ManagedObjectModel? {
        for bundle in bundles ?? [Bundle.main] {
            for folder in [bundle.resourceURL, bundle.bundleURL].compactMap({ $0 }) {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
                for name in names.sorted() where name.hasSuffix(".xcdatamodeld") {
                    guard let versions = try? ModelVersionBundle(contentsOf: folder.appendingPathComponent(name)) else { continue }
                    if let found = versions.versions.first(where: {
                        $0.model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
                    }) {
                        return found.model
                    }
                }
            }
        }
        return nil
    }
}
