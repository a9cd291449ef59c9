import Foundation

// Core Data's version hashes: per-property and per-entity SHA-256 digests of the persisted shape.
// The byte layout follows /work/shared/design/core-data-interop.md exactly (see docs/INTEROP.md); a store
// keeps one entity digest per entity, and a model whose digests differ is "another model".

/// Builds the byte string a digest is taken over, in Core Data's encoding: strings as bare UTF-8,
/// integers little-endian.
struct VersionHashInput {
    private(set) var bytes: [UInt8] = []

    mutating func append(_ string: String) { bytes.append(contentsOf: string.utf8) }
    mutating func append(_ data: Data) { bytes.append(contentsOf: data) }
    mutating func append(byte: UInt8) { bytes.append(byte) }
    mutating func append(u16 value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func append(i32 value: Int32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }

    var digest: Data { SHA256.hash(bytes) }
}

/// Orders strings by Unicode code point, as the hash rules require (Swift's `<` on `String` compares
/// canonically equivalent forms, which is not the same order). UTF-8 byte order is code-point order.
func codePointPrecedes(_ lhs: String, _ rhs: String) -> Bool {
    lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
}

extension PropertyDescription {
    /// `SHA256(name · u16(flags) · [versionHashModifier])`, flags = 1 optional + 2 transient + 4 read-only.
    var baseVersionHash: Data {
        var input = VersionHashInput()
        input.append(name)
        var flags: UInt16 = 0
        if isOptional { flags |= 1 }
        if isTransient { flags |= 2 }
        if isReadOnly { flags |= 4 }
        input.append(u16: flags)
        if let versionHashModifier { input.append(versionHashModifier) }
        return input.digest
    }
}

extension AttributeDescription {
    /// The attribute's 32-byte version hash, as Core Data computes it.
    ///
    /// Changes with the name, optionality, transience, read-only flag, hash modifier, type and the
    /// external-storage and preserve-after-deletion flags; not with default values or validation rules.
    ///
    /// ```swift
    /// let hash = AttributeDescription(name: "title", type: .string).versionHash  // 32 bytes
    /// ```
    public var versionHash: Data {
        var input = VersionHashInput()
        input.append(baseVersionHash)
        input.append(i32: attributeType.typeCode)
        if allowsExternalBinaryDataStorage { input.append(byte: 0x01) }
        if preservesValueInHistoryOnDeletion { input.append(byte: 0x01) }
        // A derived attribute's digest also takes its expression's text (docs/INTEROP.md).
        if let derivationExpression { input.append(derivationExpression.expressionFormat) }
        // A composite's digest also takes its elements' hashes in declaration order (our reading; Core
        // Data's rule for composites is not public, docs/INTEROP.md), so changing an element changes it.
        if let composite = self as? CompositeAttributeDescription {
            for element in composite.elements { input.append(element.versionHash) }
        }
        return input.digest
    }
}

extension RelationshipDescription {
    /// The relationship's 32-byte version hash, as Core Data computes it.
    ///
    /// Changes with the name, optionality, transience, hash modifier, destination entity name, inverse
    /// name, min/max counts and ordering; not with the delete rule.
    ///
    /// ```swift
    /// let hash = RelationshipDescription(name: "items", destination: "Item", toMany: true).versionHash
    /// ```
    public var versionHash: Data {
        var input = VersionHashInput()
        input.append(baseVersionHash)
        input.append(destinationEntityName)
        if let inverseName, !isOwnInverse { input.append(inverseName) }
        // Core Data keeps the counts as 32 bits, cut rather than clamped: a maximum of Int.max (a model built in
        // code for "no maximum") archives as -1 (alemar11's SampleModel2 caches).
        input.append(i32: Int32(truncatingIfNeeded: maxCount))
        input.append(i32: Int32(truncatingIfNeeded: minCount))
        if isOrdered { input.append(u16: 1) }
        return input.digest
    }

    /// Whether the inverse is this very relationship (e.g. `Person.spouse` inverse `spouse`), which the
    /// hash leaves out. Uses the resolved inverse once the model is built, the names before.
    private var isOwnInverse: Bool {
        if let inverseRelationship { return inverseRelationship === self }
        return inverseName == name && destinationEntityName == entity?.name
    }
}

extension EntityDescription {
    /// The entity's 32-byte version hash: what a Core Data store keeps in `NSStoreModelVersionHashes`.
    ///
    /// Takes the name, the abstract flag, the parent's hash, the hashes of every persistent property
    /// (inherited ones included) in code-point order of their names, the hash modifier and the entity's
    /// own uniqueness constraints. Meaningful once the entity belongs to a built model (before that its
    /// parent is not resolved). Prefer ``ManagedObjectModel/entityVersionHashesByName``, computed once.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel { EntityDescription("Item") { Attribute("name", .string) } }
    /// let hash = model.entitiesByName["Item"]?.versionHash   // 32 bytes
    /// ```
    public var versionHash: Data {
        var calculator = VersionHashCalculator()
        return calculator.entityHash(self)
    }
}

/// Computes entity version hashes with each digest taken once: an entity's hash takes its parent's hash
/// and the hashes of all its inherited properties, so computing each entity on its own recomputes the
/// whole chain above it (cubic in the depth of the inheritance chain). Here each entity and each property
/// is digested exactly once, and each entity's sorted persistent properties are its parent's merged with
/// its own.
struct VersionHashCalculator {
    private var entityHashes: [ObjectIdentifier: Data] = [:]
    private var propertyHashes: [ObjectIdentifier: Data] = [:]
    /// Each entity's persistent properties (inherited included), in code-point order of their names.
    private var sortedPersistent: [ObjectIdentifier: [PropertyDescription]] = [:]
    /// How many digests were taken: one per entity and one per persistent property, however deep the
    /// inheritance (the tests count them).
    private(set) var digestCount = 0

    /// The entity's hash, computing its ancestors' first (top down, without recursion).
    mutating func entityHash(_ entity: EntityDescription) -> Data {
        if let known = entityHashes[ObjectIdentifier(entity)] { return known }
        var pending: [EntityDescription] = []
        var next: EntityDescription? = entity
        while let current = next, entityHashes[ObjectIdentifier(current)] == nil {
            pending.append(current)
            next = current.superentity
        }
        for current in pending.reversed() { computeHash(current) }
        return entityHashes[ObjectIdentifier(entity)] ?? Data()
    }

    /// Hashes one entity whose parent (if any) is already hashed.
    private mutating func computeHash(_ entity: EntityDescription) {
        var input = VersionHashInput()
        input.append(entity.name)
        input.append(byte: entity.isAbstract ? 1 : 0)
        var inherited: [PropertyDescription] = []
        if let parent = entity.superentity {
            input.append(entityHashes[ObjectIdentifier(parent)] ?? Data())
            inherited = sortedPersistent[ObjectIdentifier(parent)] ?? []
        }
        let own = entity.properties.filter { !$0.isTransient }.sorted { codePointPrecedes($0.name, $1.name) }
        let persistent = Self.merged(inherited, own)
        sortedPersistent[ObjectIdentifier(entity)] = persistent
        for property in persistent {
            if let hash = propertyHash(property) { input.append(hash) }
        }
        if let versionHashModifier = entity.versionHashModifier { input.append(versionHashModifier) }
        let constraints = entity.uniquenessConstraints.map { $0.joined(separator: ".") }.sorted(by: codePointPrecedes)
        for constraint in constraints where !constraint.isEmpty { input.append(constraint) }
        entityHashes[ObjectIdentifier(entity)] = input.digest
        digestCount += 1
    }

    private mutating func propertyHash(_ property: PropertyDescription) -> Data? {
        if let known = propertyHashes[ObjectIdentifier(property)] { return known }
        let hash: Data
        switch property {
        case let attribute as AttributeDescription: hash = attribute.versionHash
        case let relationship as RelationshipDescription: hash = relationship.versionHash
        default: return nil
        }
        digestCount += 1
        propertyHashes[ObjectIdentifier(property)] = hash
        return hash
    }

    /// Two lists sorted by name, merged in order (names are unique along an inheritance chain: the model
    /// refuses a property declared again below a parent).
    private static func merged(_ first: [PropertyDescription], _ second: [PropertyDescription]) -> [PropertyDescription] {
        var result: [PropertyDescription] = []
        result.reserveCapacity(first.count + second.count)
        var i = 0, j = 0
        while i < first.count, j < second.count {
            if codePointPrecedes(second[j].name, first[i].name) {
                result.append(second[j]); j += 1
            } else {
                result.append(first[i]); i += 1
            }
        }
        result.append(contentsOf: first[i...])
        result.append(contentsOf: second[j...])
        return result
    }
}

extension ManagedObjectModel {
    /// Computes every entity's version hash; the model stores the result at init.
    static func computeEntityVersionHashes(_ entities: [EntityDescription]) -> [String: Data] {
        var calculator = VersionHashCalculator()
        var hashes: [String: Data] = [:]
        for entity in entities { hashes[entity.name] = calculator.entityHash(entity) }
        return hashes
    }
}
