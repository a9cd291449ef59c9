import Foundation

/// Reads a compiled mapping model (`.cdm`, what Xcode puts in an app bundle): an `NSKeyedArchiver` archive
/// of an `NSMappingModel`, read with ``KeyedArchive`` (no classes are built).
///
/// The classes and keys are those Core Data's coders write, as published decompilations of
/// `-[NSMappingModel encodeWithCoder:]`, `-[NSEntityMapping encodeWithCoder:]` and
/// `-[NSPropertyMapping encodeWithCoder:]` show them; no `.cdm` made by Xcode has been read here:
///
/// | class | key | read as |
/// |---|---|---|
/// | `NSMappingModel` | `NSEntityMappings` (array) | ``MappingModel/entityMappings``, in order |
/// | | `NSEntityMappingsByName` | not needed: the same mappings by name |
/// | `NSEntityMapping` | `NSMappingName`, `NSMappingType` (the `NSEntityMappingType` number: 0 undefined … 5 transform) | name, type |
/// | | `NSSourceEntityName`, `NSDestinationEntityName` | the entities |
/// | | `NSSourceEntityVersionHash`, `NSDestinationEntityVersionHash` | checked against the models before migrating |
/// | | `NSSourceExpression` (an `NSFetchRequestExpression`) | ``EntityMapping/sourceExpression`` (``ArchivedMappingExpression``) |
/// | | `NSEntityMigrationPolicyClassName`, `NSUserInfo` (strings) | policy, ``EntityMapping/userInfo`` |
/// | | `NSAttributeMappings`, `NSRelationshipMappings` (arrays of `NSPropertyMapping`) | the property mappings |
/// | `NSPropertyMapping` | `NSDestinationPropertyName`, `NSValueExpression`, `NSUserInfo` | name, expression, ``PropertyMapping/userInfo`` |
/// | | `NSPropertyTransforms` | refused unless empty: what it does is not public |
///
/// Any other key holding a value, another class, or a value of another type is refused by name.
/// A compiled mapping model records no model version names: it is matched to models by the entity
/// version hashes it records.
enum CompiledMappingModel {
    /// A binary property list, as keyed archives are: how a `.cdm` is told from `xcmapping.xml`.
    static func isCompiled(_ data: Data) -> Bool { data.starts(with: Array("bplist00".utf8)) }

    static let entityMappingKeys: Set<String> = [
        "NSMappingName", "NSMappingType", "NSSourceEntityName", "NSDestinationEntityName", "NSSourceEntityVersionHash",
        "NSDestinationEntityVersionHash", "NSSourceExpression", "NSUserInfo", "NSEntityMigrationPolicyClassName",
        "NSAttributeMappings", "NSRelationshipMappings",
    ]
    static let propertyMappingKeys: Set<String> = ["NSDestinationPropertyName", "NSValueExpression", "NSUserInfo", "NSPropertyTransforms"]

    /// - Throws: ``MigrationError/invalidMappingModel(path:reason:)`` when the archive is damaged or not of
    ///   an `NSMappingModel` (the object and key named), an entity mapping has no name or an unknown type,
    ///   two share a name; ``MigrationError/unsupportedMapping(entityMapping:reason:)`` for a key, expression
    ///   or value that is not read (named).
    static func read(_ data: Data, path: String) throws -> MappingModel {
        func invalid(_ reason: String) -> MigrationError { .invalidMappingModel(path: path, reason: reason) }
        do {
            let archive = try KeyedArchive(data: data)
            let root = try archive.topObject()
            guard let model = try archive.instance(root), model.isKind(of: "NSMappingModel") else {
                throw invalid("the archive's root is not an NSMappingModel")
            }
            var mappings: [EntityMapping] = []
            for reference in try archive.elements(archive.reference("NSEntityMappings", of: root)) {
                let mapping = try Reader(archive: archive, path: path).entityMapping(reference)
                guard !mappings.contains(where: { $0.name == mapping.name }) else {
                    throw invalid("two entity mappings are named '\(mapping.name)'")
                }
                mappings.append(mapping)
            }
            return MappingModel(entityMappings: mappings)
        } catch let failure as KeyedArchive.Failure {
            throw invalid("the archive cannot be read: \(failure.reason)")
        }
    }

    private struct Reader {
        let archive: KeyedArchive
        let path: String

        func entityMapping(_ reference: KeyedArchive.Reference) throws -> EntityMapping {
            guard let instance = try archive.instance(reference), instance.isKind(of: "NSEntityMapping") else {
                throw MigrationError.invalidMappingModel(path: path, reason: "\(reference) of NSEntityMappings is not an NSEntityMapping")
            }
            guard let name = try archive.string(archive.reference("NSMappingName", of: reference)), !name.isEmpty else {
                throw MigrationError.invalidMappingModel(path: path, reason: "the NSEntityMapping \(reference) has no NSMappingName")
            }
            func unsupported(_ reason: String) -> MigrationError { .unsupportedMapping(entityMapping: name, reason: reason) }
            if let key = try unknownKey(of: reference, instance: instance, known: CompiledMappingModel.entityMappingKeys) {
                throw unsupported("its key \(key) is not read")
            }
            let source = try archive.string(archive.reference("NSSourceEntityName", of: reference))
            let destination = try archive.string(archive.reference("NSDestinationEntityName", of: reference))
            let number: Int64
            switch try archive.field("NSMappingType", of: reference) {
            case nil: number = 0
            case .integer(let value)?: number = value
            default: throw MigrationError.invalidMappingModel(path: path, reason: "the NSMappingType of '\(name)' is not a number")
            }
            // NSEntityMappingType: undefined, custom, add, remove, copy, transform.
            let types: [Int64: EntityMappingType] = [1: .custom, 2: .add, 3: .remove, 4: .copy, 5: .transform]
            let type: EntityMappingType
            if number == 0 {
                type = source == nil ? .add : destination == nil ? .remove : .transform
            } else if let known = types[number] {
                type = known
            } else {
                throw MigrationError.invalidMappingModel(
                    path: path, reason: "entity mapping '\(name)' has the mapping type \(number), which Core Data does not have")
            }
            var fetch: MappingSourceFetch?
            if let expression = try archive.reference("NSSourceExpression", of: reference) {
                let text: String
                do {
                    text = try ArchivedMappingExpression.sourceFetchFormat(in: archive, at: expression)
                } catch let failure as ArchivedMappingExpression.Failure {
                    throw unsupported("its source expression (NSSourceExpression) is not read: \(failure.reason)")
                }
                fetch = try expressionRead("the source expression", in: name) { try MappingSourceFetch(format: text) }
            }
            if type == .add || type == .remove { fetch = nil }
            var mapping = EntityMapping(
                name: name, mappingType: type, sourceEntityName: source, destinationEntityName: destination,
                sourceExpression: fetch,
                attributeMappings: try propertyMappings("NSAttributeMappings", of: reference, in: name),
                relationshipMappings: try propertyMappings("NSRelationshipMappings", of: reference, in: name),
                entityMigrationPolicyClassName: try archive.string(archive.reference("NSEntityMigrationPolicyClassName", of: reference)))
            mapping.sourceEntityVersionHash = try hash("NSSourceEntityVersionHash", of: reference, in: name)
            mapping.destinationEntityVersionHash = try hash("NSDestinationEntityVersionHash", of: reference, in: name)
            mapping.userInfo = try userInfo(of: reference, what: "its NSUserInfo", in: name)
            return mapping
        }

        private func propertyMappings(_ key: String, of owner: KeyedArchive.Reference, in mappingName: String) throws -> [PropertyMapping] {
            try archive.elements(archive.reference(key, of: owner)).map { reference in
                guard let instance = try archive.instance(reference), instance.isKind(of: "NSPropertyMapping") else {
                    throw MigrationError.invalidMappingModel(
                        path: path, reason: "\(reference) of \(key) of '\(mappingName)' is not an NSPropertyMapping")
                }
                guard let name = try archive.string(archive.reference("NSDestinationPropertyName", of: reference)), !name.isEmpty else {
                    throw MigrationError.invalidMappingModel(
                        path: path, reason: "the NSPropertyMapping \(reference) of '\(mappingName)' has no NSDestinationPropertyName")
                }
                func unsupported(_ reason: String) -> MigrationError {
                    .unsupportedMapping(entityMapping: mappingName, reason: "the property mapping '\(name)': \(reason)")
                }
                if let unknown = try unknownKey(of: reference, instance: instance, known: CompiledMappingModel.propertyMappingKeys) {
                    throw unsupported("its key \(unknown) is not read")
                }
                if let transforms = try archive.reference("NSPropertyTransforms", of: reference), try !archive.elements(transforms).isEmpty {
                    throw unsupported("it has NSPropertyTransforms, which are not read")
                }
                var expression: MappingExpression?
                if let archived = try archive.reference("NSValueExpression", of: reference) {
                    let text: String
                    do {
                        text = try ArchivedMappingExpression.format(in: archive, at: archived)
                    } catch let failure as ArchivedMappingExpression.Failure {
                        throw unsupported("its value expression (NSValueExpression) is not read: \(failure.reason)")
                    }
                    expression = try expressionRead("the value expression of '\(name)'", in: mappingName) {
                        try MappingExpression(format: text)
                    }
                }
                var mapping = PropertyMapping(name: name, valueExpression: expression)
                mapping.userInfo = try userInfo(of: reference, what: "the NSUserInfo of '\(name)'", in: mappingName)
                return mapping
            }
        }

        /// A key of `instance` that holds something and is not one of `known` (a `$null` value carries nothing).
        private func unknownKey(of reference: KeyedArchive.Reference, instance: KeyedArchive.Instance, known: Set<String>) throws -> String? {
            for key in instance.fields.keys.sorted() where !known.contains(key) && key != "NSExpressionType" {
                if case .uid? = instance.fields[key], try archive.reference(key, of: reference) == nil { continue }
                return key
            }
            return nil
        }

        private func hash(_ key: String, of reference: KeyedArchive.Reference, in mappingName: String) throws -> Data? {
            guard let value = try archive.reference(key, of: reference) else { return nil }
            switch try archive.object(value) {
            case .value(.data(let data)): return data
            case .instance(let instance) where instance.isKind(of: "NSData") || instance.isKind(of: "NSMutableData"):
                if let data = instance.fields["NS.data"]?.data { return data }
            default: break
            }
            throw MigrationError.invalidMappingModel(path: path, reason: "the \(key) of '\(mappingName)' is not data")
        }

        /// A user info dictionary of strings; values of other types are refused, as nothing would read them.
        private func userInfo(of reference: KeyedArchive.Reference, what: String, in mappingName: String) throws -> [String: String] {
            var result: [String: String] = [:]
            for (key, value) in try archive.stringKeyedEntries(archive.reference("NSUserInfo", of: reference)) {
                let isString: Bool
                switch try archive.object(value) {
                case .value(.string): isString = true
                case .instance(let instance): isString = instance.isKind(of: "NSString") || instance.isKind(of: "NSMutableString")
                default: isString = false
                }
                guard isString, let string = try archive.string(value) else {
                    throw MigrationError.unsupportedMapping(
                        entityMapping: mappingName, reason: "\(what) holds a value for '\(key)' that is not a string")
                }
                result[key] = string
            }
            return result
        }

        /// `body`, its query language failures as an invalid model and its refusals named after the mapping.
        private func expressionRead<T>(_ what: String, in mappingName: String? = nil, _ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch MigrationError.unsupportedMapping(_, let reason) {
                throw MigrationError.unsupportedMapping(entityMapping: mappingName ?? "?", reason: reason)
            } catch let error as QueryLanguageError {
                throw MigrationError.invalidMappingModel(path: path, reason: "\(what) of '\(mappingName ?? "?")' does not parse: \(error)")
            }
        }
    }
}
