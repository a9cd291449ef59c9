import Foundation

extension KeyedArchive {
    /// The classes ``foundationValue(_:)`` turns into Swift values; any other class in an archive is refused,
    /// as `NSSecureUnarchiveFromDataTransformer` refuses classes outside its allowed list.
    static let foundationClassNames: Set<String> = [
        "NSArray", "NSMutableArray", "NSOrderedSet", "NSMutableOrderedSet", "NSSet", "NSMutableSet",
        "NSDictionary", "NSMutableDictionary", "NSString", "NSMutableString", "NSData", "NSMutableData",
        "NSDate", "NSURL", "NSUUID", "NSNull", "NSNumber",
    ]

    /// The root object as a Swift value: `String`, `Int` (`Int64` beyond `Int`), `Double`, `Bool`, `Date`,
    /// `Data`, `URL`, `UUID`, `NSNull`, `[Any]` (NSArray, NSOrderedSet), `Set<AnyHashable>` (NSSet) and
    /// `[String: Any]` (NSDictionary), nested; nil when the root is `$null`.
    ///
    /// Builds no class the archive names: each object is checked against ``foundationClassNames`` and read
    /// field by field.
    ///
    /// - Throws: ``Failure`` for a class outside that list, a damaged field (an NSDate without a time, an
    ///   NSUUID of other than 16 bytes, an NSURL that does not parse), a set element that is not hashable, a
    ///   non-string dictionary key, a cycle, nesting deeper than ``maximumDepth``, more visits than the
    ///   archive's allowance, or anything ``object(_:)`` refuses.
    func foundationValue(_ key: String = "root") throws -> Any? {
        var walk = Walk(self)
        let value = try foundationValue(topObject(key), depth: 0, walk: &walk)
        return value is NSNull ? nil : value
    }

    private func foundationValue(_ reference: Reference, depth: Int, walk: inout Walk) throws -> Any {
        try walk.enter(reference, depth: depth)
        defer { walk.leave(reference) }
        let instance: Instance
        switch try object(reference) {
        case .null: return NSNull()
        case .value(let value):
            switch value {
            case .string(let string): return string
            case .data(let data): return data
            case .integer(let number): return Int(exactly: number) ?? number
            case .real(let number): return number
            case .boolean(let flag): return flag
            case .date(let date): return date
            case .array, .dictionary, .uid, .other:
                throw Failure(reason: "\(reference) holds a property list container where a value was expected")
            }
        case .instance(let found): instance = found
        }
        guard Self.foundationClassNames.contains(instance.className) else {
            throw Failure(reason: "\(reference) is of class \(instance.className), which is not a Foundation value class")
        }
        func child(_ target: Reference) throws -> Any { try foundationValue(target, depth: depth + 1, walk: &walk) }
        switch instance.className {
        case "NSArray", "NSMutableArray", "NSOrderedSet", "NSMutableOrderedSet":
            return try elements(reference).map(child)
        case "NSSet", "NSMutableSet":
            var set = Set<AnyHashable>()
            for (position, element) in try elements(reference).enumerated() {
                guard let hashable = try child(element) as? AnyHashable else {
                    throw Failure(reason: "\(reference) NS.objects[\(position)] is not hashable, so it cannot be in a set")
                }
                set.insert(hashable)
            }
            return set
        case "NSDictionary", "NSMutableDictionary":
            var dictionary: [String: Any] = [:]
            for (key, value) in try stringKeyedEntries(reference) { dictionary[key] = try child(value) }
            return dictionary
        case "NSString", "NSMutableString":
            return try string(reference) ?? ""
        case "NSData", "NSMutableData":
            guard let data = instance.fields["NS.data"]?.data else { throw Failure(reason: "\(reference) is an NSData without NS.data") }
            return data
        case "NSDate":
            guard case .real(let seconds)? = instance.fields["NS.time"] else {
                throw Failure(reason: "\(reference) is an NSDate without a real NS.time")
            }
            return Date(timeIntervalSinceReferenceDate: seconds)
        case "NSUUID":
            guard let bytes = instance.fields["NS.uuidbytes"]?.data, bytes.count == 16 else {
                throw Failure(reason: "\(reference) is an NSUUID without 16 bytes of NS.uuidbytes")
            }
            return ValueConversion.uuid(from: bytes)
        case "NSURL":
            guard let relative = try string(self.reference("NS.relative", of: reference)) else {
                throw Failure(reason: "\(reference) is an NSURL without NS.relative")
            }
            var base: URL?
            if let baseReference = try self.reference("NS.base", of: reference) {
                guard let baseURL = try child(baseReference) as? URL else {
                    throw Failure(reason: "\(reference) NS.base is not an NSURL")
                }
                base = baseURL
            }
            guard let url = URL(string: relative, relativeTo: base) else {
                throw Failure(reason: "\(reference) is an NSURL whose string does not parse")
            }
            return base == nil ? url : url.absoluteURL
        case "NSNumber":
            // Apple's archiver writes numbers in place; an NSNumber instance is read from its NS.intval,
            // NS.dblval or NS.boolval if present.
            if case .integer(let number)? = instance.fields["NS.intval"] { return Int(exactly: number) ?? number }
            if case .real(let number)? = instance.fields["NS.dblval"] { return number }
            if case .boolean(let flag)? = instance.fields["NS.boolval"] { return flag }
            throw Failure(reason: "\(reference) is an NSNumber without a readable value")
        default:
            return NSNull()
        }
    }
}
