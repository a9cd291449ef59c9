import Foundation

/// The order a results controller keeps: its sort descriptors resolved against the model, comparing
/// stored values (`StoreValue`) through the descriptors' own `compare`, with the row handle as the
/// final tiebreak (the SQL adds `t0.Z_PK` last for the same reason), so the order is total.
struct ResultsOrdering {
    /// One sort key: its descriptor, the attribute it ends at, and the relationships it goes through.
    struct Key {
        var descriptor: QuerySortDescriptor
        var attribute: AttributeDescription
        /// The to-one relationships walked, in order (empty for a key of the entity itself).
        var relationships: [RelationshipDescription]
    }

    let entity: EntityDescription
    let keys: [Key]

    init(entity: EntityDescription, sortDescriptors: [QuerySortDescriptor]) throws {
        self.entity = entity
        keys = try sortDescriptors.map { descriptor in
            let (relationships, attribute) = try Self.resolve(descriptor.key, from: entity)
            return Key(descriptor: descriptor, attribute: attribute, relationships: relationships)
        }
    }

    /// Walks a dotted key path through to-one relationships to a stored attribute.
    static func resolve(_ keyPath: String, from entity: EntityDescription) throws
        -> (relationships: [RelationshipDescription], attribute: AttributeDescription) {
        var current = entity
        var relationships: [RelationshipDescription] = []
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (index, part) in parts.enumerated() {
            // A composite's element, stored as an attribute keyed by its path (`magnitude.richter`).
            if let element = current.compositeElementKey(in: parts, at: index), element.last == parts.count - 1,
               let attribute = current.attributesByName[element.key] {
                return (relationships, attribute)
            }
            guard let slot = current.slotByName[part] else {
                throw FetchedResultsError.unknownKeyPath(entity: entity.name, keyPath: keyPath)
            }
            let property = current.allProperties[slot]
            if index == parts.count - 1 {
                guard let attribute = property as? AttributeDescription, !attribute.isTransient else {
                    throw FetchedResultsError.unsupportedKeyPath(entity: entity.name, keyPath: keyPath,
                        reason: "'\(part)' is not a stored attribute")
                }
                return (relationships, attribute)
            }
            guard let relationship = property as? RelationshipDescription, !relationship.isToMany,
                  let destination = relationship.destinationEntity else {
                throw FetchedResultsError.unsupportedKeyPath(entity: entity.name, keyPath: keyPath,
                    reason: "'\(part)' is not a to-one relationship")
            }
            relationships.append(relationship)
            current = destination
        }
        throw FetchedResultsError.unknownKeyPath(entity: entity.name, keyPath: keyPath)
    }

    /// The Swift value of a stored key value.
    func swiftValue(_ value: StoreValue, key index: Int) -> Any? {
        ValueConversion.swiftValue(value, for: keys[index].attribute.attributeType)
    }

    /// An object's current sort-key values, as stored values.
    func keyValues(of object: ManagedObject) throws -> [StoreValue] {
        try keys.map { key in
            let value = try object.value(forKeyPath: key.descriptor.key)
            if value == nil || value is NSNull { return .null }
            return try ValueConversion.storeValue(value, for: key.attribute)
        }
    }

    /// What SQLite's `ORDER BY` and ``less(_:_:_:_:)`` agree on for one key: numbers (numbers, dates and
    /// booleans compare numerically on both sides, nulls first) or strings under plain `compare` (no
    /// collation in SQL: byte order, which is code-point order, on both sides).
    enum ExactOrder {
        case numbers
        case strings
    }

    /// Per key, the values whose SQLite order is the in-memory order; nil when some key needs the
    /// descriptor's own comparison (localized, case- or diacritic-insensitive, or another type).
    var exactOrders: [ExactOrder]? {
        var orders: [ExactOrder] = []
        for key in keys {
            switch key.attribute.attributeType {
            case .integer16, .integer32, .integer64, .double, .float, .date, .boolean: orders.append(.numbers)
            case .string where key.descriptor.comparator == .compare: orders.append(.strings)
            default: return nil
            }
        }
        return orders
    }

    /// Whether rows whose keys are `columns` (one per key, in `orders`' order) can be kept in SQLite's order:
    /// every value is of the kind its key's order covers (a store written by another program may hold text
    /// in a number column, which SQLite orders after every number). Typed number columns hold by their form.
    static func sqlOrderHolds(for columns: [KeyColumn], orders: [ExactOrder]) -> Bool {
        guard columns.count == orders.count else { return false }
        for (column, order) in zip(columns, orders) {
            switch (column, order) {
            case (.integers, .numbers), (.reals, .numbers): continue
            case (.same(let value, _), _):
                if !covers(value, order) { return false }
            case (.values(let values), _):
                if values.contains(where: { !covers($0, order) }) { return false }
            case (.integers, .strings), (.reals, .strings): return false
            }
        }
        return true
    }

    private static func covers(_ value: StoreValue, _ order: ExactOrder) -> Bool {
        switch (value.storage, order) {
        case (.null, _), (.int64, .numbers), (.double, .numbers), (.string, .strings): return true
        default: return false
        }
    }

    /// Compares two rows' stored keys, then their handles.
    func less<Left: RandomAccessCollection<StoreValue>, Right: RandomAccessCollection<StoreValue>>(
        _ lhs: Left, _ lhsHandle: Int64, _ rhs: Right, _ rhsHandle: Int64) throws -> Bool {
        var left = lhs.startIndex, right = rhs.startIndex
        for index in keys.indices {
            let a = lhs[left], b = rhs[right]
            lhs.formIndex(after: &left)
            rhs.formIndex(after: &right)
            if a.isStoreEqual(to: b) { continue }
            let order = try Self.storedOrder(a, b, descriptor: keys[index].descriptor)
                ?? keys[index].descriptor.compareValues(swiftValue(a, key: index), swiftValue(b, key: index))
            if order != .orderedSame { return order == .orderedAscending }
        }
        return lhsHandle < rhsHandle
    }

    /// Whether two first-key values fall in the same section.
    func sameSection(_ lhs: StoreValue, _ rhs: StoreValue) throws -> Bool {
        if lhs.isStoreEqual(to: rhs) { return true }
        return try (Self.storedOrder(lhs, rhs, descriptor: keys[0].descriptor)
            ?? keys[0].descriptor.compareValues(swiftValue(lhs, key: 0), swiftValue(rhs, key: 0))) == .orderedSame
    }

    /// Orders two first-key values (for finding a section).
    func sectionOrder(_ lhs: StoreValue, _ rhs: StoreValue) throws -> ComparisonResult {
        if lhs.isStoreEqual(to: rhs) { return .orderedSame }
        return try Self.storedOrder(lhs, rhs, descriptor: keys[0].descriptor)
            ?? keys[0].descriptor.compareValues(swiftValue(lhs, key: 0), swiftValue(rhs, key: 0))
    }

    /// The order of two stored values when it can be read off them directly — numbers, nulls, and strings
    /// under plain `compare` (code-point order, which is UTF-8 byte order) — without converting to Swift
    /// values. Nil when the descriptor's own comparison is needed.
    static func storedOrder(_ a: StoreValue, _ b: StoreValue, descriptor: QuerySortDescriptor) -> ComparisonResult? {
        func ordered<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
            x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        }
        let order: ComparisonResult
        switch (a.storage, b.storage) {
        case (.null, .null): order = .orderedSame
        case (.null, _): order = .orderedAscending
        case (_, .null): order = .orderedDescending
        case let (.int64(x), .int64(y)): order = ordered(x, y)
        case let (.double(x), .double(y)): order = ordered(x, y)
        case let (.int64(x), .double(y)): order = ordered(Double(x), y)
        case let (.double(x), .int64(y)): order = ordered(x, Double(y))
        case let (.string(x), .string(y)) where descriptor.comparator == .compare:
            order = x.utf8.lexicographicallyPrecedes(y.utf8) ? .orderedAscending
                : (y.utf8.lexicographicallyPrecedes(x.utf8) ? .orderedDescending : .orderedSame)
        default: return nil
        }
        guard !descriptor.ascending else { return order }
        switch order {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// The section name for a first-key value: the string itself, "" for nil, else its description.
    func sectionName(for value: StoreValue) -> String {
        switch swiftValue(value, key: 0) {
        case nil: return ""
        case let string as String: return string
        case let other?: return String(describing: other)
        }
    }
}
