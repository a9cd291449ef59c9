import Foundation

/// Reads Xcode's `xcmapping.xml`: a Core Data XML store of Xcode's own editing objects. A `<database>`
/// holds `<object type="…" id="…">` elements, each with `<attribute name="…" type="…">value</attribute>`
/// and `<relationship name="…" idrefs="id id …">` children:
///
/// - one `XDDEVMAPPINGMODEL`: `sourcemodelpath`, `destinationmodelpath`, and `entitymappings`;
/// - an `XDDEVENTITYMAPPING` per entity mapping: `name`, `sourcename`, `destinationname`, `mappingnumber`
///   (the order), `mappingtypename`, `sourcefilterpredicatestring`, `sourceexpressionstring`,
///   `migrationpolicyclassname`, `autogenerateexpression`, and `attributemappings`/`relationshipmappings`;
/// - an `XDDEVATTRIBUTEMAPPING` or `XDDEVRELATIONSHIPMAPPING` per property mapping: `name`,
///   `valueexpressionstring`, `autogenerateexpression`, `sourcekeypath`, `sourcemappingname`.
///
/// Element and attribute names are matched without regard to case, as Core Data's XML store does.
/// A value expression archived as data (`valueexpressiondata`, what Xcode writes for most custom value
/// expressions) is read by ``ArchivedMappingExpression``, and so is an archived source expression
/// (`sourceexpressiondata`, a fetch).
enum MappingModelXML {
    /// One `<object>` of the file.
    private struct FileObject {
        let id: String
        let type: String
        let location: String
        var attributes: [String: String] = [:]
        var references: [String: [String]] = [:]

        /// The first attribute holding a value, or relationship referring to something, that is not in
        /// `known`: what the reader would otherwise skip.
        func unknownContent(known: Set<String>) -> String? {
            let attribute = attributes.filter { !known.contains($0.key) && !$0.value.isEmpty }.keys.min()
            let relationship = references.filter { !known.contains($0.key) && !$0.value.isEmpty }.keys.min()
            return attribute.map { "the attribute '\($0)'" } ?? relationship.map { "the relationship '\($0)'" }
        }

        func flag(_ name: String) -> Bool? {
            guard let text = attributes[name]?.trimmingCharacters(in: .whitespaces).lowercased() else { return nil }
            return text == "1" || text == "yes" || text == "true"
        }

        func string(_ name: String) -> String? {
            guard let text = attributes[name], !text.isEmpty else { return nil }
            return text
        }
    }

    static let modelType = "XDDEVMAPPINGMODEL"
    static let entityMappingType = "XDDEVENTITYMAPPING"
    static let attributeMappingType = "XDDEVATTRIBUTEMAPPING"
    static let relationshipMappingType = "XDDEVRELATIONSHIPMAPPING"

    /// What an entity mapping may hold: everything here is honoured (docs/MIGRATION.md lists how), but
    /// `mappingmodel`, the inverse of the model's `entitymappings`. Anything else is refused by name.
    static let entityMappingContent: Set<String> = [
        "name", "sourcename", "destinationname", "mappingnumber", "mappingtypename", "sourcefilterpredicatestring",
        "sourceexpressionstring", "sourceexpressiondata", "migrationpolicyclassname", "autogenerateexpression",
        "attributemappings", "relationshipmappings", "mappingmodel",
    ]
    /// What a property mapping may hold; `entitymapping` is the inverse of its entity mapping's list.
    static let propertyMappingContent: Set<String> = [
        "name", "valueexpressionstring", "valueexpressiondata", "autogenerateexpression", "sourcekeypath",
        "sourcemappingname", "entitymapping",
    ]

    /// - Throws: see ``MappingModel/init(contentsOf:)``.
    static func read(_ data: Data, path: String) throws -> MappingModel {
        func invalid(_ reason: String) -> MigrationError { .invalidMappingModel(path: path, reason: reason) }
        // The file is a Core Data XML store: its layout is read (and checked) as one.
        let document: XMLStoreDocument
        do {
            document = try XMLStoreDocument.parse(data, path: path)
        } catch let error as XMLStoreError {
            switch error {
            case .malformed(_, let location, let reason): throw invalid("\(reason) (\(location))")
            case .invalidObject(_, _, _, let reason): throw invalid(reason)
            default: throw invalid(error.description)
            }
        }
        var objects: [String: FileObject] = [:]
        var order: [String] = []
        for node in document.objects {
            var object = FileObject(id: node.id, type: node.type.uppercased(), location: node.location)
            for attribute in node.attributes {
                object.attributes[attribute.name.lowercased()] = attribute.text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            for relationship in node.relationships { object.references[relationship.name.lowercased()] = relationship.idrefs }
            objects[node.id] = object
            order.append(node.id)
        }
        let models = order.compactMap { objects[$0] }.filter { $0.type == modelType }
        guard let model = models.first else { throw invalid("no object of type \(modelType)") }
        guard models.count == 1 else { throw invalid("\(models.count) objects of type \(modelType); a file holds one") }

        /// The objects a relationship refers to, each checked to exist and to be of `type`.
        func referenced(_ name: String, of object: FileObject, type: String) throws -> [FileObject] {
            try (object.references[name] ?? []).map { id in
                guard let found = objects[id] else {
                    throw invalid("\(object.type) '\(object.id)' refers in '\(name)' to '\(id)', which is no object of the file")
                }
                guard found.type == type else {
                    throw invalid("\(object.type) '\(object.id)' refers in '\(name)' to '\(id)', a \(found.type), not a \(type)")
                }
                return found
            }
        }

        var entityObjects = try referenced("entitymappings", of: model, type: entityMappingType)
        if model.references["entitymappings"] == nil {
            entityObjects = order.compactMap { objects[$0] }.filter { $0.type == entityMappingType }
        }
        // The order the author gave (`mappingnumber`), then the file's.
        let numbered = try entityObjects.enumerated().map { position, object -> (Int, Int, FileObject) in
            guard let text = object.string("mappingnumber") else { return (Int.max, position, object) }
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw invalid("\(object.type) '\(object.id)' has the mappingnumber '\(text)', which is not a number")
            }
            return (number, position, object)
        }
        entityObjects = numbered.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)

        var mappings: [EntityMapping] = []
        for object in entityObjects {
            let source = object.string("sourcename")
            let destination = object.string("destinationname")
            guard source != nil || destination != nil else {
                throw invalid("\(object.type) '\(object.id)' (\(object.location)) names neither a source nor a destination entity")
            }
            let name = object.string("name") ?? "\(source ?? "")To\(destination ?? "")"
            guard !mappings.contains(where: { $0.name == name }) else { throw invalid("two entity mappings are named '\(name)'") }
            func expressionFailure(_ error: Error, _ what: String) -> Error {
                switch error {
                case MigrationError.unsupportedMapping(_, let reason): return MigrationError.unsupportedMapping(entityMapping: name, reason: reason)
                case let error as QueryLanguageError: return invalid("entity mapping '\(name)', \(what): \(error)")
                default: return error
                }
            }
            if let unknown = object.unknownContent(known: entityMappingContent) {
                throw MigrationError.unsupportedMapping(entityMapping: name, reason: "\(unknown) of the entity mapping is not read")
            }
            var type: EntityMappingType
            if let typeName = object.string("mappingtypename"), typeName.lowercased() != "undefined" {
                guard let named = EntityMappingType(fileName: typeName) else {
                    throw invalid("entity mapping '\(name)' has the mapping type '\(typeName)', which Core Data does not have")
                }
                type = named
            } else {
                type = source == nil ? .add : destination == nil ? .remove : .transform
            }
            var fetch: MappingSourceFetch?
            do {
                // With `autogenerateexpression`, the written or archived source expression is one Xcode made
                // from the source entity and the filter, which are read instead.
                let writtenSource = object.flag("autogenerateexpression") != true
                if writtenSource, let text = object.string("sourceexpressionstring") {
                    fetch = try MappingSourceFetch(format: text)
                } else if writtenSource, let archived = object.string("sourceexpressiondata") {
                    let text: String
                    do {
                        text = try ArchivedMappingExpression.sourceFetchFormat(ofBase64: archived)
                    } catch let failure as ArchivedMappingExpression.Failure {
                        throw MigrationError.unsupportedMapping(
                            entityMapping: name, reason: "its archived source expression (sourceexpressiondata) is not read: \(failure.reason)")
                    }
                    fetch = try MappingSourceFetch(format: text)
                } else if let source {
                    fetch = MappingSourceFetch(entityName: source,
                                               predicate: try MappingSourceFetch.predicate(object.string("sourcefilterpredicatestring")))
                }
            } catch {
                throw expressionFailure(error, "source filter")
            }
            if type == .add || type == .remove { fetch = nil }

            func propertyMappings(_ relationship: String, type: String) throws -> [PropertyMapping] {
                try referenced(relationship, of: object, type: type).map { property in
                    guard let propertyName = property.string("name") else {
                        throw invalid("\(property.type) '\(property.id)' (\(property.location)) of entity mapping '\(name)' has no name")
                    }
                    let kind = type == relationshipMappingType ? "relationship mapping" : "attribute mapping"
                    if let unknown = property.unknownContent(known: propertyMappingContent) {
                        throw MigrationError.unsupportedMapping(entityMapping: name, reason: "\(unknown) of the \(kind) '\(propertyName)' is not read")
                    }
                    // Only a relationship is filled through another entity mapping.
                    if type == attributeMappingType, let through = property.string("sourcemappingname") {
                        throw MigrationError.unsupportedMapping(
                            entityMapping: name, reason: "the attribute mapping '\(propertyName)' names the entity mapping '\(through)' (sourcemappingname), which only a relationship mapping can")
                    }
                    var expression: MappingExpression?
                    var generated = false
                    do {
                        if let text = property.string("valueexpressionstring") {
                            expression = try MappingExpression(format: text)
                        } else if let archived = property.string("valueexpressiondata") {
                            let text: String
                            do {
                                text = try ArchivedMappingExpression.format(ofBase64: archived)
                            } catch let failure as ArchivedMappingExpression.Failure {
                                throw MigrationError.unsupportedMapping(
                                    entityMapping: name,
                                    reason: "the archived value expression of '\(propertyName)' (valueexpressiondata) is not read: \(failure.reason)")
                            }
                            expression = try MappingExpression(format: text)
                        } else if property.flag("autogenerateexpression") != false {
                            generated = true
                            expression = try generatedExpression(for: propertyName, keyPath: property.string("sourcekeypath"),
                                                                 through: property.string("sourcemappingname"),
                                                                 isRelationship: type == relationshipMappingType)
                        }
                    } catch {
                        throw expressionFailure(error, "'\(propertyName)'")
                    }
                    var mapping = PropertyMapping(name: propertyName, valueExpression: expression)
                    mapping.isGenerated = generated
                    return mapping
                }
            }
            mappings.append(EntityMapping(
                name: name, mappingType: type, sourceEntityName: source, destinationEntityName: destination,
                sourceExpression: fetch,
                attributeMappings: try propertyMappings("attributemappings", type: attributeMappingType),
                relationshipMappings: try propertyMappings("relationshipmappings", type: relationshipMappingType),
                entityMigrationPolicyClassName: object.string("migrationpolicyclassname")))
        }
        func versionName(_ attribute: String) -> String? {
            model.string(attribute).map { XcodeModelLoader.versionName(URL(fileURLWithPath: $0).lastPathComponent) }
        }
        return MappingModel(entityMappings: mappings, sourceModelVersionName: versionName("sourcemodelpath"),
                            destinationModelVersionName: versionName("destinationmodelpath"))
    }

    /// The expression Xcode generates for a property mapping without one: the source property of the same
    /// name (or `sourcekeypath`), and for a relationship the destination instances of the mapping named by
    /// `sourcemappingname` (without one: an empty name, which the migrator reads as "whichever mapping
    /// made each source object").
    private static func generatedExpression(for name: String, keyPath: String?, through mappingName: String?,
                                            isRelationship: Bool) throws -> MappingExpression {
        // Xcode writes a relationship's source key path from `$source` (`$source.country.continent`).
        var written = keyPath ?? name
        if written.hasPrefix("$source.") { written.removeFirst("$source.".count) }
        let path = QueryExpression.key(written)
        let source: QueryExpression
        if case .keyPath(_, let components) = path {
            source = .keyPath(base: .variable("source"), components: components)
        } else {
            source = .variable("source")
        }
        if isRelationship {
            return .destinationInstances(entityMappingName: mappingName ?? "", sourceInstances: source)
        }
        return .value(source)
    }
}
