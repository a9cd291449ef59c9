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
        var loader = CompiledModelLoader(source: source)
        try self.init(compiled: try loader.contents(from: data))
    }

    /// A model of the contents read from a compiled model, with the keys left unread recorded.
    convenience init(compiled contents: CompiledModelContents, entityNumbers: [String: Int]? = nil) throws {
        try self.init(entities: contents.entities, versionIdentifiers: contents.versionIdentifiers,
                      entityNumbers: entityNumbers)
        unreadCompiledModelKeys = contents.unreadKeys
        try addLoadedTemplates(contents.fetchRequestTemplates)
    }
}

/// What a compiled model's archive holds, as descriptions, and what of it was not read.
struct CompiledModelContents {
    var entities: [EntityDescription]
    var versionIdentifiers: [String]
    /// "Entity.property: key" (or "Entity: key", "model: key") for each archived key holding something this
    /// library does not read, sorted.
    var unreadKeys: [String]
    /// The fetch request templates, by name in name order (checked against the entities when the model is built).
    var fetchRequestTemplates: [(name: String, request: FetchRequest<ManagedObject>)] = []
}

/// Maps the objects of a compiled model's keyed archive to entity, attribute and relationship descriptions.
/// The keys read are listed in docs/INTEROP.md, with which are confirmed by public sources. A key that holds
/// something and is not read is recorded, never dropped silently.
struct CompiledModelLoader {
    /// Names the file in error messages.
    let source: String

    init(source: String) { self.source = source }

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
        guard let info else {
            throw ModelError.malformedModelFile(path: infoURL.path, reason: "VersionInfo.plist is not a readable property list dictionary")
        }
        guard let named = info["NSManagedObjectModel_CurrentVersionName"] else { return try onlyModel(in: url, infoURL: infoURL) }
        guard let current = named as? String, !current.isEmpty,
              !current.contains("/"), current != ".", current != ".." else {
            throw ModelError.malformedModelFile(path: infoURL.path, reason: "NSManagedObjectModel_CurrentVersionName is not a file name")
        }
        let mom = url.appendingPathComponent(current + ".mom")
        if FileManager.default.fileExists(atPath: mom.path) { return mom }
        let omo = url.appendingPathComponent(current + ".omo")
        if FileManager.default.fileExists(atPath: omo.path) {
            throw ModelError.malformedModelFile(path: omo.path, reason: "the optimized model format (.omo) is not read; the folder has no \(current).mom")
        }
        throw ModelError.malformedModelFile(path: mom.path, reason: "the current version named by VersionInfo.plist is missing")
    }

    /// The one `.mom` of a `.momd` whose `VersionInfo.plist` names no current version (Xcode wrote such a
    /// folder for drewying's `GameLibrary.momd`, a single-version model): with one model there is nothing to
    /// choose, so it is the one Core Data loads (inferred, docs/INTEROP.md); with several, none is guessed.
    private static func onlyModel(in folder: URL, infoURL: URL) throws -> URL {
        let moms = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.lowercased().hasSuffix(".mom") }.sorted()
        guard moms.count == 1 else {
            throw ModelError.malformedModelFile(path: infoURL.path, reason: "NSManagedObjectModel_CurrentVersionName is missing "
                + "and the folder holds \(moms.count) models (\(moms.joined(separator: ", "))), so none is the current one")
        }
        return folder.appendingPathComponent(moms[0])
    }

    private func failure(_ reason: String) -> ModelError { .malformedModelFile(path: source, reason: reason) }

    /// The keys read from each kind of archived object (back references such as `NSEntity` need nothing).
    /// Any other key holding something is recorded as unread.
    static let modelKeys: Set<String> = ["NSEntities", "NSVersionIdentifiers", "NSFetchRequestTemplates"]
    static let entityKeys: Set<String> = [
        "NSEntityName", "NSClassNameForEntity", "NSManagedObjectModel", "NSSuperentity", "NSSubentities",
        "NSProperties", "NSUserInfo", "NSVersionHashModifier", "NSRenamingIdentifier", "NSIsAbstract",
        "NSUniqueTuples", "NSFetchIndexDescriptions", "NSCompoundIndexes",
    ]
    static let propertyKeys: Set<String> = [
        "NSPropertyName", "NSEntity", "_P", "NSIsOptional", "NSIsTransient", "NSIsReadOnly",
        "NSRenamingIdentifier", "NSUserInfo", "NSVersionHashModifier", "NSValidationPredicates", "NSValidationWarnings",
    ]
    static let attributeKeys = propertyKeys.union([
        "NSAttributeType", "NSAttributeValueClassName", "NSDefaultValue", "NSValueTransformerName",
        "NSFlagsKey", "NSMaxValueName", "NSMinValueName", "NSDerivationExpression", "NSFilteringPredicate",
    ])
    static let relationshipKeys = propertyKeys.union([
        "NSDestinationEntity", "_NSDestinationEntityName", "NSInverseRelationship", "_NSInverseRelationshipName",
        "NSMinCount", "NSMaxCount", "NSDeleteRule", "NSIsOrdered",
    ])
    static let fetchedPropertyKeys = propertyKeys.union(["NSFetchRequest", "_NSFetchRequestEntityName"])
    /// The keys of a fetched property's `NSFetchRequest` read, or holding only what a fetched property does
    /// anyway (`NSFetchRequestFlags` is checked on its own).
    static let fetchRequestKeys: Set<String> = [
        "NSEntity", "NSPredicate", "NSSortDescriptors", "NSHasFetchRequestFlags", "NSFetchRequestFlags", "NSAllocationType",
    ]

    /// What was archived and not read, as "owner: what".
    private var unread: [String] = []
    /// The one walk every archived predicate and expression of the model is read with: they share its visit
    /// allowance, so many of them sharing a large part of the archive are refused rather than read at length.
    private var predicateWalk: KeyedArchive.Walk?

    private mutating func archivedPredicate(in archive: KeyedArchive, at reference: KeyedArchive.Reference) throws -> QueryPredicate {
        var walk = predicateWalk ?? KeyedArchive.Walk(archive)
        defer { predicateWalk = walk }
        return try ArchivedPredicate.predicate(in: archive, at: reference, walk: &walk)
    }

    private mutating func archivedExpressionFormat(in archive: KeyedArchive, at reference: KeyedArchive.Reference) throws -> String {
        var walk = predicateWalk ?? KeyedArchive.Walk(archive)
        defer { predicateWalk = walk }
        return try ArchivedPredicate.expressionFormat(in: archive, at: reference, walk: &walk)
    }

    /// The entities, version identifiers and unread keys of the archived model in `data`.
    mutating func contents(from data: Data) throws -> CompiledModelContents {
        unread = []
        predicateWalk = nil
        do {
            let archive = try KeyedArchive(data: data)
            let root = try archive.topObject()
            let model = try archive.instance(root)
            guard let model, model.isKind(of: "NSManagedObjectModel") else {
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
            var templates: [(name: String, request: FetchRequest<ManagedObject>)] = []
            for (name, reference) in try archive.stringKeyedEntries(archive.reference("NSFetchRequestTemplates", of: root))
                .sorted(by: { $0.key < $1.key }) {
                // Left out and listed, as a fetched property that is not read is: one exotic template must not
                // stop a model from an app bundle loading.
                do {
                    templates.append((name, try fetchRequestTemplate(reference, named: name, in: archive)))
                } catch ModelError.invalidFetchRequestTemplate(_, let reason) {
                    unread.append("model: fetch request template '\(name)' left out: \(reason)")
                }
            }
            try noteUnreadKeys(of: root, instance: model, known: Self.modelKeys, owner: "model", in: archive)
            return CompiledModelContents(entities: entities, versionIdentifiers: identifiers.sorted(),
                                         unreadKeys: unread.sorted(), fetchRequestTemplates: templates)
        } catch let failure as KeyedArchive.Failure {
            throw self.failure("damaged compiled model: \(failure.reason)")
        }
    }

    private mutating func entity(_ reference: KeyedArchive.Reference, named key: String,
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
        let inherited = try inheritedPropertyNames(of: reference, entity: name, in: archive)
        for (propertyKey, propertyReference) in try archive.stringKeyedEntries(archive.reference("NSProperties", of: reference))
            .sorted(by: { $0.key < $1.key }) where !inherited.contains(propertyKey) {
            if let property = try property(propertyReference, named: propertyKey, entity: name, in: archive) {
                properties.append(property)
            }
        }
        let entity = EntityDescription(name: name, properties: properties, superentityName: parent,
                                       isAbstract: try bool("NSIsAbstract", of: reference, in: archive))
        entity.managedObjectClassName = try archive.string(archive.reference("NSClassNameForEntity", of: reference))
        entity.versionHashModifier = try archive.string(archive.reference("NSVersionHashModifier", of: reference))
        entity.renamingIdentifier = try archive.string(archive.reference("NSRenamingIdentifier", of: reference))
        entity.userInfo = try userInfo(of: reference, owner: name, in: archive)
        entity.uniquenessConstraints = try uniquenessConstraints(of: reference, entity: name, in: archive)
        entity.indexes = try indexes(of: reference, entity: name, in: archive)
        try noteUnreadKeys(of: reference, instance: instance, known: Self.entityKeys, owner: name, in: archive)
        return entity
    }

    /// The names of the properties `reference`'s superentities declare. A store's model cache (unlike a `.mom`)
    /// archives a sub-entity with a copy of every inherited property among its own, each naming the sub-entity
    /// as its `NSEntity` (alemar11's `SportCar` repeats `Car`'s `color`): those are the superentity's, read
    /// there once. Core Data allows no property to be declared again below, so a name is enough to tell.
    ///
    /// - Throws: ``ModelError/malformedModelFile(path:reason:)`` when the superentities form a cycle.
    private func inheritedPropertyNames(of reference: KeyedArchive.Reference, entity: String,
                                        in archive: KeyedArchive) throws -> Set<String> {
        var names: Set<String> = []
        var visited: Set<KeyedArchive.Reference> = [reference]
        var next = try archive.reference("NSSuperentity", of: reference)
        while let ancestor = next {
            guard visited.insert(ancestor).inserted else { throw failure("the superentities of '\(entity)' form a cycle") }
            names.formUnion(try archive.stringKeyedEntries(archive.reference("NSProperties", of: ancestor)).keys)
            next = try archive.reference("NSSuperentity", of: ancestor)
        }
        return names
    }

    /// `NSUniqueTuples`: an array of constraints, each an array of property names (or of the properties).
    private func uniquenessConstraints(of reference: KeyedArchive.Reference, entity: String,
                                       in archive: KeyedArchive) throws -> [[String]] {
        try archive.elements(archive.reference("NSUniqueTuples", of: reference)).compactMap { tuple in
            let names = try archive.elements(tuple).map {
                try propertyName($0, what: "a uniqueness constraint of '\(entity)'", in: archive)
            }
            return names.isEmpty ? nil : names
        }
    }

    /// `NSFetchIndexDescriptions` (Xcode 9 and later): `NSFetchIndexDescription`s with `NSIndexName` and
    /// `NSIndexElements`, each element naming its property in `NSPropertyName`. Older models have only
    /// `NSCompoundIndexes`: arrays of property names (or properties).
    private mutating func indexes(of reference: KeyedArchive.Reference, entity: String,
                                  in archive: KeyedArchive) throws -> [IndexDescription] {
        guard let list = try archive.reference("NSFetchIndexDescriptions", of: reference) else {
            // Unnamed, so named as the XML loader names `compoundIndexes`.
            var compound: [IndexDescription] = []
            for tuple in try archive.elements(archive.reference("NSCompoundIndexes", of: reference)) {
                let keys = try archive.elements(tuple).map {
                    try propertyName($0, what: "a compound index of '\(entity)'", in: archive)
                }
                if !keys.isEmpty {
                    compound.append(IndexDescription(name: "\(entity)_compound_\(compound.count + 1)", propertyNames: keys))
                }
            }
            return compound
        }
        var result: [IndexDescription] = []
        for indexReference in try archive.elements(list) {
            guard try archive.instance(indexReference)?.isKind(of: "NSFetchIndexDescription") == true else {
                throw failure("an entry of the NSFetchIndexDescriptions of '\(entity)' is not an NSFetchIndexDescription")
            }
            let givenName = try archive.string(archive.reference("NSIndexName", of: indexReference))
            let label = "\(entity): index '\(givenName ?? "?")'"
            var keys: [String] = []
            var byExpression = false
            for element in try archive.elements(archive.reference("NSIndexElements", of: indexReference)) {
                guard try archive.instance(element)?.isKind(of: "NSFetchIndexElementDescription") == true else {
                    throw failure("an element of \(label) is not an NSFetchIndexElementDescription")
                }
                // An element indexing an expression rather than a property has no IndexDescription form (the
                // XML loader leaves such an index out too); indexes never enter a version hash.
                if try archive.reference("NSIndexedProperty", of: element) != nil {
                    byExpression = true
                    continue
                }
                guard let key = try archive.string(archive.reference("NSPropertyName", of: element)) else {
                    throw failure("an element of \(label) names no property")
                }
                keys.append(key)
                if let type = try archive.field("NSFetchIndexElementType", of: element)?.integer, type != 0 {
                    unread.append("\(label): element '\(key)' has NSFetchIndexElementType \(type) (R-tree), read as a plain index")
                }
                if try !bool("NSAscending", of: element, in: archive) {
                    unread.append("\(label): element '\(key)' is descending (NSAscending), read as ascending")
                }
            }
            if try archive.reference("NSPartialIndexPredicate", of: indexReference) != nil {
                unread.append("\(label): NSPartialIndexPredicate, read as a full index")
            }
            if byExpression || keys.isEmpty {
                unread.append("\(label): an element indexes an expression (NSIndexedProperty); the index is left out")
                continue
            }
            result.append(IndexDescription(name: givenName ?? "\(entity)_\(keys.joined(separator: "_"))", propertyNames: keys))
        }
        return result
    }

    /// A property named by a string or by an archived property description (`NSPropertyName`).
    private func propertyName(_ reference: KeyedArchive.Reference, what: String, in archive: KeyedArchive) throws -> String {
        switch try archive.object(reference) {
        case .instance(let instance) where instance.isKind(of: "NSPropertyDescription")
            || instance.isKind(of: "NSAttributeDescription") || instance.isKind(of: "NSRelationshipDescription"):
            if let name = try archive.string(archive.reference("NSPropertyName", of: reference)) { return name }
        default:
            if let name = try archive.string(reference) { return name }
        }
        throw failure("\(what) names a property by neither a string nor a property description")
    }

    /// An attribute, relationship or fetched property; nil for other kinds, and for a fetched property whose
    /// fetch is not read, which are recorded as unread.
    private mutating func property(_ reference: KeyedArchive.Reference, named key: String, entity: String,
                                   in archive: KeyedArchive) throws -> PropertyDescription? {
        guard let instance = try archive.instance(reference) else { throw failure("'\(entity).\(key)' is null") }
        let name = try archive.string(archive.reference("NSPropertyName", of: reference)) ?? key
        guard name == key else { throw failure("NSProperties['\(key)'] of '\(entity)' is named '\(name)'") }
        let owner = "\(entity).\(name)"
        let flags = try propertyFlags(of: reference, owner: owner, in: archive)
        let property: PropertyDescription
        let known: Set<String>
        if instance.isKind(of: "NSAttributeDescription") {
            property = try attribute(reference, named: name, entity: entity, isOptional: flags.isOptional, in: archive)
            known = Self.attributeKeys
        } else if instance.isKind(of: "NSRelationshipDescription") {
            property = try relationship(reference, named: name, entity: entity, flags: flags, in: archive)
            known = Self.relationshipKeys
        } else if instance.isKind(of: "NSFetchedPropertyDescription") {
            guard let fetched = try fetchedProperty(reference, named: name, entity: entity, in: archive) else { return nil }
            fetched.isOptional = flags.isOptional
            property = fetched
            known = Self.fetchedPropertyKeys
        } else {
            unread.append("\(owner): a \(instance.className), not read")
            return nil
        }
        property.isTransient = flags.isTransient
        property.isReadOnly = flags.isReadOnly
        if !flags.omitsVersionHashModifier {
            property.versionHashModifier = try archive.string(archive.reference("NSVersionHashModifier", of: reference))
        }
        property.renamingIdentifier = try archive.string(archive.reference("NSRenamingIdentifier", of: reference))
        if !flags.omitsUserInfo { property.userInfo = try userInfo(of: reference, owner: owner, in: archive) }
        try validationRules(of: reference, for: property, entity: entity, in: archive)
        try noteUnreadKeys(of: reference, instance: instance, known: known, owner: owner, in: archive)
        return property
    }

    /// `NSValidationPredicates`, each with the `NSValidationWarnings` entry at its position (an error code or
    /// a message). Core Data turns the limit forms into an attribute's limits itself (its decompiled
    /// `_canConvertPredicate:andWarning:`): `length >= n` / `length <= n` on strings,
    /// `timeIntervalSinceReferenceDate >= t` / `<= t` on dates, `SELF >= x` / `SELF <= x` on numbers. They
    /// become the same limits here, and `SELF MATCHES "pattern"` on a string the regular expression (our
    /// reading: the rule it states). Any other rule has no counterpart and is recorded as unread, with its
    /// text; the warnings of rules read are not kept (validation errors here carry their own message).
    private mutating func validationRules(of reference: KeyedArchive.Reference, for property: PropertyDescription,
                                          entity: String, in archive: KeyedArchive) throws {
        let owner = "\(entity).\(property.name)"
        let predicates = try archive.elements(archive.reference("NSValidationPredicates", of: reference))
        let warnings = try archive.elements(archive.reference("NSValidationWarnings", of: reference))
        for (position, predicateReference) in predicates.enumerated() {
            let warning = position < warnings.count ? try warningText(warnings[position], in: archive) : "none"
            let rule: QueryPredicate
            do {
                rule = try archivedPredicate(in: archive, at: predicateReference)
            } catch let failure as ArchivedPredicate.Failure {
                unread.append("\(owner): validation predicate \(position + 1) (warning \(warning)) not read: \(failure.reason)")
                continue
            }
            if let attribute = property as? AttributeDescription, try CompiledValidationRule.apply(rule, to: attribute, entity: entity) {
                continue
            }
            unread.append("\(owner): validation predicate '\(rule.predicateFormat)' (warning \(warning)), not enforced")
        }
        if warnings.count > predicates.count {
            unread.append("\(owner): \(warnings.count - predicates.count) NSValidationWarnings without a predicate")
        }
    }

    /// A validation warning as text: an error code or a message.
    private func warningText(_ reference: KeyedArchive.Reference, in archive: KeyedArchive) throws -> String {
        switch try archive.resolved(reference) {
        case .integer(let code): return String(code)
        case .string(let message): return "'\(message)'"
        case .null: return "none"
        default: return "of another kind"
        }
    }

    /// A fetched property: its `NSFetchRequest` names the entity (`NSEntity`: the entity description, or its
    /// name; else the property's `_NSFetchRequestEntityName`), the predicate (`NSPredicate`, read by
    /// ``ArchivedPredicate``) and the order (`NSSortDescriptors`: `NSKey`, `NSAscending`, `NSSelector`). A
    /// fetch whose predicate or order is not read leaves the property out, recorded as unread; request
    /// settings a fetched property has no counterpart for (limits, offsets, result types) are recorded too.
    ///
    /// - Throws: ``ModelError/invalidFetchedProperty(entity:property:reason:)`` when there is no fetch
    ///   request or it names no entity.
    private mutating func fetchedProperty(_ reference: KeyedArchive.Reference, named name: String, entity: String,
                                          in archive: KeyedArchive) throws -> FetchedPropertyDescription? {
        let owner = "\(entity).\(name)"
        guard let request = try archive.reference("NSFetchRequest", of: reference),
              let requestInstance = try archive.instance(request), requestInstance.isKind(of: "NSFetchRequest") else {
            throw ModelError.invalidFetchedProperty(entity: entity, property: name,
                                                    reason: "the compiled model holds no NSFetchRequest for it")
        }
        guard let entityName = try requestEntityName(request, in: archive)
                ?? archive.string(archive.reference("_NSFetchRequestEntityName", of: reference)),
              !entityName.isEmpty else {
            throw ModelError.invalidFetchedProperty(entity: entity, property: name, reason: "its fetch request names no entity")
        }
        let fetched = FetchedPropertyDescription(name: name, entityName: entityName)
        do {
            if let predicate = try archive.reference("NSPredicate", of: request) {
                fetched.predicate = try archivedPredicate(in: archive, at: predicate)
            }
            fetched.sortDescriptors = try sortDescriptors(archive.reference("NSSortDescriptors", of: request), in: archive)
        } catch let failure as ArchivedPredicate.Failure {
            unread.append("\(owner): a fetched property whose fetch request is not read (\(failure.reason)); left out")
            return nil
        }
        // Bits of NSFetchRequestFlags (Core Data's coder): 0x1 distinct results, 0x2 sub-entities included,
        // 0x10 pending changes included. A fetched property here includes both and is not distinct.
        if try bool("NSHasFetchRequestFlags", of: request, in: archive) {
            let bits = try archive.field("NSFetchRequestFlags", of: request)?.integer ?? 0
            for (bit, set, meaning) in [(Int64(0x1), true, "returns distinct results"), (0x2, false, "leaves out sub-entities"),
                                        (0x10, false, "leaves out pending changes")] where (bits & bit != 0) == set {
                unread.append("\(owner): its fetch request \(meaning) (NSFetchRequestFlags), read as a plain fetch")
            }
        }
        try noteUnreadKeys(of: request, instance: requestInstance, known: Self.fetchRequestKeys,
                           owner: "\(owner): fetch request", in: archive)
        return fetched
    }

    /// The entity an archived `NSFetchRequest` names in `NSEntity`: an entity description, or its name.
    private func requestEntityName(_ request: KeyedArchive.Reference, in archive: KeyedArchive) throws -> String? {
        guard let entityReference = try archive.reference("NSEntity", of: request) else { return nil }
        if case .instance(let described) = try archive.object(entityReference), described.isKind(of: "NSEntityDescription") {
            return try archive.string(archive.reference("NSEntityName", of: entityReference))
        }
        return try archive.string(entityReference)
    }

    /// The keys of a template's `NSFetchRequest` read; others holding something are recorded as unread.
    static let templateRequestKeys = fetchRequestKeys.union(["NSFetchLimit", "NSFetchOffset", "NSBatchSize", "NSResultType"])

    /// A fetch request template (`NSFetchRequestTemplates[name]`): the entity, predicate and order as a fetched
    /// property's request is read, `NSFetchLimit`, `NSFetchOffset`, `NSBatchSize`, `NSResultType` (Core Data's
    /// numbers) and the confirmed bits of `NSFetchRequestFlags` (0x1 distinct results, 0x2 sub-entities, 0x10
    /// pending changes); without `NSHasFetchRequestFlags` the request keeps Core Data's defaults. Other keys
    /// (properties to fetch or group by, prefetching) are recorded as unread.
    ///
    /// - Throws: ``ModelError/invalidFetchRequestTemplate(name:reason:)`` when the entry is not a fetch request,
    ///   names no entity, or holds a predicate, order or result type that is not read: run without it, the
    ///   template would fetch something else (the caller leaves such a template out and lists it as unread).
    private mutating func fetchRequestTemplate(_ request: KeyedArchive.Reference, named name: String,
                                               in archive: KeyedArchive) throws -> FetchRequest<ManagedObject> {
        func refuse(_ reason: String) -> ModelError { .invalidFetchRequestTemplate(name: name, reason: reason) }
        guard let instance = try archive.instance(request), instance.isKind(of: "NSFetchRequest") else {
            throw refuse("the compiled model holds no NSFetchRequest for it")
        }
        guard let entityName = try requestEntityName(request, in: archive), !entityName.isEmpty else {
            throw refuse("its fetch request names no entity")
        }
        let template = FetchRequest<ManagedObject>(entityName: entityName)
        do {
            if let predicate = try archive.reference("NSPredicate", of: request) {
                template.predicate = try archivedPredicate(in: archive, at: predicate)
            }
            template.sortDescriptors = try sortDescriptors(archive.reference("NSSortDescriptors", of: request), in: archive)
        } catch let failure as ArchivedPredicate.Failure {
            throw refuse("its fetch request is not read (\(failure.reason))")
        }
        for (key, apply) in [("NSFetchLimit", { template.fetchLimit = $0 }), ("NSFetchOffset", { template.fetchOffset = $0 }),
                             ("NSBatchSize", { template.fetchBatchSize = $0 })] as [(String, (Int) -> Void)] {
            guard let value = try archive.field(key, of: request)?.integer else { continue }
            guard let count = Int(exactly: value), count >= 0 else { throw refuse("its \(key) \(value) is not a count") }
            apply(count)
        }
        if let code = try archive.field("NSResultType", of: request)?.integer {
            guard let type = Int(exactly: code).flatMap(FetchRequestResultType.init(coreDataCode:)) else {
                throw refuse("its NSResultType \(code) is not 0, 1, 2 or 4")
            }
            template.resultType = type
        }
        if try bool("NSHasFetchRequestFlags", of: request, in: archive) {
            let bits = try archive.field("NSFetchRequestFlags", of: request)?.integer ?? 0
            template.returnsDistinctResults = bits & 0x1 != 0
            template.includesSubentities = bits & 0x2 != 0
            template.includesPendingChanges = bits & 0x10 != 0
        }
        try noteUnreadKeys(of: request, instance: instance, known: Self.templateRequestKeys,
                           owner: "model: fetch request template '\(name)'", in: archive)
        return template
    }

    /// Archived `NSSortDescriptor`s.
    private func sortDescriptors(_ reference: KeyedArchive.Reference?, in archive: KeyedArchive) throws -> [QuerySortDescriptor] {
        try archive.elements(reference).map { descriptor in
            guard try archive.instance(descriptor)?.isKind(of: "NSSortDescriptor") == true,
                  let key = try archive.string(archive.reference("NSKey", of: descriptor)), !key.isEmpty else {
                throw ArchivedPredicate.Failure(reason: "a sort descriptor (\(descriptor)) is not an NSSortDescriptor with an NSKey")
            }
            let ascending = try bool("NSAscending", of: descriptor, in: archive)
            guard let selector = try archive.string(archive.reference("NSSelector", of: descriptor)) else {
                return QuerySortDescriptor(key: key, ascending: ascending)
            }
            do {
                return try QuerySortDescriptor(key: key, ascending: ascending, selector: selector)
            } catch {
                throw ArchivedPredicate.Failure(reason: "the sort descriptor on '\(key)' compares with \(selector), which is not read")
            }
        }
    }

    /// The property's flags: from `_P` when it is set (Core Data then ignores the boolean keys), else from
    /// `NSIsOptional`, `NSIsReadOnly`, `NSIsTransient` and `NSIsOrdered`.
    private mutating func propertyFlags(of reference: KeyedArchive.Reference, owner: String,
                                        in archive: KeyedArchive) throws -> CompiledPropertyFlags {
        let packed = try archive.field("_P", of: reference)?.integer ?? 0
        guard packed == 0 else {
            for (bit, meaning) in CompiledPropertyFlags.unreadBits where packed & bit != 0 {
                unread.append("\(owner): _P bit 0x\(String(bit, radix: 16)) (\(meaning))")
            }
            return CompiledPropertyFlags(packed: packed)
        }
        var flags = CompiledPropertyFlags()
        flags.isOptional = try bool("NSIsOptional", of: reference, in: archive)
        flags.isReadOnly = try bool("NSIsReadOnly", of: reference, in: archive)
        flags.isTransient = try bool("NSIsTransient", of: reference, in: archive)
        flags.isOrdered = try bool("NSIsOrdered", of: reference, in: archive)
        return flags
    }

    private mutating func attribute(_ reference: KeyedArchive.Reference, named name: String, entity: String,
                                    isOptional: Bool, in archive: KeyedArchive) throws -> AttributeDescription {
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
        if let archived = try archive.reference("NSDefaultValue", of: reference) {
            if let text = try defaultValueText(archived, type: type, in: archive) {
                attribute.defaultValue = try XcodeModelValue.defaultValue(text, type: type, entity: entity, attribute: name)
            } else {
                unread.append("\(entity).\(name): NSDefaultValue (\(try archive.instance(archived)?.className ?? "a value") not read)")
            }
        }
        attribute.valueTransformerName = try archive.string(archive.reference("NSValueTransformerName", of: reference))
        if type == .transformable {
            attribute.customClassName = try archive.string(archive.reference("NSAttributeValueClassName", of: reference))
        }
        let flags = CompiledAttributeFlags(packed: try archive.field("NSFlagsKey", of: reference)?.integer ?? 0)
        attribute.allowsExternalBinaryDataStorage = flags.allowsExternalBinaryDataStorage
        attribute.preservesValueInHistoryOnDeletion = flags.preservesValueInHistoryOnDeletion
        if flags.unreadBits != 0 {
            unread.append("\(entity).\(name): NSFlagsKey bits 0x\(String(flags.unreadBits, radix: 16))")
        }
        let owner = "\(entity).\(name)"
        try derivation(of: reference, for: attribute, owner: owner, in: archive)
        if flags.hasMinimum { try applyLimit("NSMinValueName", isMinimum: true, to: attribute, owner: owner, of: reference, in: archive) }
        if flags.hasMaximum { try applyLimit("NSMaxValueName", isMinimum: false, to: attribute, owner: owner, of: reference, in: archive) }
        return attribute
    }

    /// A derived attribute (`NSDerivedAttributeDescription`): `NSDerivationExpression`, read by
    /// ``ArchivedPredicate/expressionFormat(in:at:walk:)`` and parsed as the XML loader parses `derivationExpression`,
    /// so its version hash takes the expression as the XML form's does. An expression not read leaves a plain
    /// attribute, recorded as unread (its hash then differs); so does a filtering predicate (`NSFilteringPredicate`)
    /// other than TRUEPREDICATE, which the model has no place for.
    private mutating func derivation(of reference: KeyedArchive.Reference, for attribute: AttributeDescription,
                                     owner: String, in archive: KeyedArchive) throws {
        guard let expression = try archive.reference("NSDerivationExpression", of: reference) else { return }
        do {
            let text = try archivedExpressionFormat(in: archive, at: expression)
            do {
                attribute.derivationExpression = Self.countAsKeyPath(try QueryExpression(format: text))
            } catch {
                throw ArchivedPredicate.Failure(reason: "'\(text)' does not parse: \(error)")
            }
        } catch let failure as ArchivedPredicate.Failure {
            unread.append("\(owner): NSDerivationExpression not read (\(failure.reason)); read as a plain attribute")
            return
        }
        guard let filter = try archive.reference("NSFilteringPredicate", of: reference) else { return }
        do {
            let predicate = try archivedPredicate(in: archive, at: filter)
            if predicate != .truePredicate {
                unread.append("\(owner): NSFilteringPredicate '\(predicate.predicateFormat)' of the derivation, not applied")
            }
        } catch let failure as ArchivedPredicate.Failure {
            unread.append("\(owner): NSFilteringPredicate of the derivation not read (\(failure.reason))")
        }
    }

    /// Core Data archives a derivation written `pages.@count` as the function `count:(pages)` (alemar11's
    /// `SampleModel2` caches): read back as the key path it was written as, which the XML form holds.
    static func countAsKeyPath(_ expression: QueryExpression) -> QueryExpression {
        guard case .function(.count, let arguments) = expression, arguments.count == 1,
              case .keyPath(let base, let components) = arguments[0], !components.isEmpty,
              components.last?.hasPrefix("@") == false else { return expression }
        return .keyPath(base: base, components: components + ["@count"])
    }

    /// A limit archived beside `NSFlagsKey`: an Int64 for integer types (a value) and strings (a length), a
    /// double otherwise (a value, or a date's seconds since 2001). An absent key reads as 0, as Core Data's
    /// coder reads it.
    private mutating func applyLimit(_ key: String, isMinimum: Bool, to attribute: AttributeDescription, owner: String,
                                     of reference: KeyedArchive.Reference, in archive: KeyedArchive) throws {
        let stored = try archive.field(key, of: reference)
        let number: Double
        switch stored {
        case .integer(let value)?: number = Double(value)
        case .real(let value)?: number = value
        case nil: number = 0
        default: throw failure("the \(key) of '\(owner)' is not a number")
        }
        guard number.isFinite else { throw failure("the \(key) of '\(owner)' is not finite") }
        switch attribute.attributeType {
        case .string:
            guard let length = stored?.integer ?? (stored == nil ? 0 : nil), let value = Int(exactly: length) else {
                throw failure("the \(key) of '\(owner)' is not a length")
            }
            if isMinimum { attribute.minLength = value } else { attribute.maxLength = value }
        case .date:
            let date = Date(timeIntervalSinceReferenceDate: number)
            if isMinimum { attribute.minDate = date } else { attribute.maxDate = date }
        case _ where attribute.attributeType.isNumeric:
            if isMinimum { attribute.minValue = number } else { attribute.maxValue = number }
        default:
            // As in the XML loader: limits on other types (binary data lengths) are not modelled.
            unread.append("\(owner): \(key) on a \(attribute.attributeType) attribute")
        }
    }

    private func relationship(_ reference: KeyedArchive.Reference, named name: String, entity: String,
                              flags: CompiledPropertyFlags, in archive: KeyedArchive) throws -> RelationshipDescription {
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
        // A negative maximum is Int.max cut to 32 bits (a model built in code with `maxCount = .max`): no maximum.
        let archivedMaxCount = try archive.field("NSMaxCount", of: reference)?.integer ?? 0
        let maxCount = archivedMaxCount < 0 ? Int.max : Int(clamping: archivedMaxCount)
        let minCount = Int(clamping: try archive.field("NSMinCount", of: reference)?.integer ?? 0)
        // NSDeleteRule values are Core Data's public enum: no action 0, nullify 1, cascade 2, deny 3.
        let rules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
        let ruleCode = try archive.field("NSDeleteRule", of: reference)?.integer ?? 1
        guard let rule = rules[ruleCode] else {
            throw ModelError.invalidRelationship(entity: entity, relationship: name, reason: "delete rule code \(ruleCode) is unknown")
        }
        let relationship = RelationshipDescription(name: name, destination: destinationName, toMany: maxCount != 1,
                                                   inverse: inverseName, deleteRule: rule, isOptional: flags.isOptional,
                                                   isOrdered: flags.isOrdered)
        relationship.maxCount = maxCount
        relationship.minCount = minCount
        return relationship
    }

    /// Records each key of `instance` outside `known` that holds something (not `$null`, false, 0 or an
    /// empty collection).
    private mutating func noteUnreadKeys(of reference: KeyedArchive.Reference, instance: KeyedArchive.Instance,
                                         known: Set<String>, owner: String, in archive: KeyedArchive) throws {
        for key in instance.fields.keys.sorted() where !known.contains(key) {
            switch instance.fields[key] {
            case .boolean(false)?, .integer(0)?, nil: continue
            case .uid?:
                guard let value = try archive.reference(key, of: reference) else { continue }
                if case .instance(let held) = try archive.object(value),
                   let items = held.fields["NS.objects"]?.array, items.isEmpty { continue }
            default: break
            }
            unread.append("\(owner): \(key)")
        }
    }

    private func bool(_ key: String, of reference: KeyedArchive.Reference, in archive: KeyedArchive) throws -> Bool {
        switch try archive.field(key, of: reference) {
        case .boolean(let value)?: return value
        case .integer(let value)?: return value != 0
        default: return false
        }
    }

    /// A userInfo dictionary's string entries (the XML form holds strings only; other entries are recorded
    /// as unread).
    private mutating func userInfo(of reference: KeyedArchive.Reference, owner: String,
                                   in archive: KeyedArchive) throws -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in try archive.stringKeyedEntries(archive.reference("NSUserInfo", of: reference)) {
            if let text = try? archive.string(value) {
                result[key] = text
            } else {
                unread.append("\(owner): NSUserInfo['\(key)'], not a string")
            }
        }
        return result
    }

    /// An archived default value as the text the XML form would hold, so both forms convert it alike.
    private func defaultValueText(_ reference: KeyedArchive.Reference, type: AttributeType,
                                  in archive: KeyedArchive) throws -> String? {
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
