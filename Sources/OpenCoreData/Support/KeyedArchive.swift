import Foundation

/// An object graph written by `NSKeyedArchiver`: a binary property list holding `$archiver`
/// (`"NSKeyedArchiver"`), `$version`, `$top` (named roots) and `$objects` (every object, referred to by UID,
/// `$objects[0]` being `"$null"`).
///
/// Read here rather than with `NSKeyedUnarchiver` because the archives read (compiled models, a store's model
/// cache) are outside input, and an unarchiver builds whatever classes the archive names. This reader builds
/// nothing: it hands out references and lets the caller walk the graph one object at a time, so a graph with
/// cycles (an entity and its relationships refer to each other) needs no recursion. ``resolved(_:)`` turns an
/// acyclic part into a tree, with a depth limit and a budget.
///
/// Every damaged or hostile input is a ``Failure`` naming the object and key: an out-of-range UID, a `$class`
/// that is not a class description, a collection element that is not a reference.
///
/// ```swift
/// let archive = try KeyedArchive(data: blob)
/// let root = try archive.topObject()
/// let name = try archive.string(archive.reference("NSEntityName", of: root))
/// ```
struct KeyedArchive: Sendable {
    /// Why an archive was refused; `reason` names the object (by its index in `$objects`) and the key.
    struct Failure: Error, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// A reference to one object of the archive (a UID: its index in `$objects`), checked to be in range.
    struct Reference: Hashable, Sendable, CustomStringConvertible {
        let index: Int
        var description: String { "object \(index)" }
    }

    /// An archived instance: its class and its encoded fields, references among them left as UIDs.
    struct Instance: Sendable, Equatable {
        /// The class the archive names (`$classname`), then the hierarchy it recorded (`$classes`) (never empty).
        let classNames: [String]
        /// The keys the object encoded, `$class` left out.
        let fields: [String: PropertyListValue]
        var className: String { classNames[0] }

        /// Whether the instance's class is `name` or derives from it.
        func isKind(of name: String) -> Bool { classNames.contains(name) }
    }

    /// One entry of `$objects`.
    enum Object: Sendable, Equatable {
        /// `$null`: what a nil reference points at.
        case null
        /// A string, number, boolean, date or data stored in place.
        case value(PropertyListValue)
        /// An object that encoded itself with keys.
        case instance(Instance)
    }

    /// A part of the graph resolved into a tree by ``resolved(_:)``.
    indirect enum Value: Sendable, Equatable {
        case null
        case string(String)
        case data(Data)
        case integer(Int64)
        case real(Double)
        case boolean(Bool)
        case date(Date)
        /// NSArray, NSSet and NSOrderedSet (and their mutable forms): the elements in archive order.
        case array([Value])
        /// NSDictionary with string keys.
        case dictionary([String: Value])
        /// Any other instance: its class name and its resolved fields.
        case instance(className: String, fields: [String: Value])
    }

    /// Archives with more objects than this are refused: a compiled model of a thousand entities has far fewer.
    static let maximumObjectCount = 1_000_000
    /// ``resolved(_:)`` refuses deeper trees than this.
    static let maximumDepth = 64
    /// ``resolved(_:)`` visits at most this many times the archive's objects and references (UIDs written in
    /// it), or ``minimumVisitAllowance``: a value named many times (CoreFoundation archives thousands of equal
    /// numbers as one object) costs a visit per reference written, but shared collections, whose references
    /// multiply, must not expand a small archive into a huge tree.
    static let maximumVisitsPerObject = 4
    static let minimumVisitAllowance = 10_000

    /// Every entry of `$objects`, in order.
    let objects: [PropertyListValue]
    /// The named roots in `$top`.
    let top: [String: Reference]
    /// How many references (UIDs) the objects hold, each collection element counted.
    let referenceCount: Int

    /// Reads an archive's outer structure.
    ///
    /// - Throws: ``Failure`` when `data` is not a binary property list (the reader's own failure reason is
    ///   kept), not a keyed archive (`$archiver`, `$objects`, `$top` missing or of the wrong kind), holds more
    ///   than ``maximumObjectCount`` objects, or a `$top` entry is not an in-range UID.
    init(data: Data) throws {
        let root: PropertyListValue
        do {
            root = try BinaryPropertyListReader.read(data)
        } catch let failure as BinaryPropertyListReader.Failure {
            throw Failure(reason: "not a readable binary property list: \(failure.reason)")
        }
        guard let outer = root.dictionary else { throw Failure(reason: "the archive is not a dictionary") }
        guard outer["$archiver"]?.string == "NSKeyedArchiver" else {
            throw Failure(reason: "$archiver is not \"NSKeyedArchiver\"")
        }
        guard let objects = outer["$objects"]?.array else { throw Failure(reason: "$objects is missing or not an array") }
        guard objects.count <= Self.maximumObjectCount else {
            throw Failure(reason: "$objects holds \(objects.count) objects, more than \(Self.maximumObjectCount)")
        }
        guard let topEntries = outer["$top"]?.dictionary else { throw Failure(reason: "$top is missing or not a dictionary") }
        self.objects = objects
        var top: [String: Reference] = [:]
        for (key, value) in topEntries {
            top[key] = try Self.reference(value, count: objects.count, context: "$top[\(key)]")
        }
        self.top = top
        referenceCount = objects.reduce(0) { count, object in
            count + (object.dictionary?.values.reduce(0) { $0 + Self.uidCount($1) } ?? 0)
        }
    }

    /// The UIDs in one field of an object: itself, or the elements of an array stored in place.
    private static func uidCount(_ value: PropertyListValue) -> Int {
        switch value {
        case .uid: return 1
        case .array(let items): return items.reduce(0) { if case .uid = $1 { $0 + 1 } else { $0 } }
        default: return 0
        }
    }

    /// The root stored under `key` in `$top` (`"root"` is where `archivedData(withRootObject:)` puts it).
    ///
    /// - Throws: ``Failure`` when `$top` has no such key.
    func topObject(_ key: String = "root") throws -> Reference {
        guard let reference = top[key] else { throw Failure(reason: "$top has no \"\(key)\"") }
        return reference
    }

    /// The object `reference` names.
    ///
    /// - Throws: ``Failure`` when it is an instance whose `$class` is not a UID of a class description
    ///   (`$classname` string, optional `$classes` string array).
    func object(_ reference: Reference) throws -> Object {
        let entry = objects[reference.index]
        switch entry {
        case .string("$null"):
            return .null
        case .dictionary(var fields):
            guard let classValue = fields.removeValue(forKey: "$class") else {
                throw Failure(reason: "\(reference) is a dictionary without $class")
            }
            let classReference = try Self.reference(classValue, count: objects.count, context: "\(reference) $class")
            guard let description = objects[classReference.index].dictionary,
                  let className = description["$classname"]?.string else {
                throw Failure(reason: "\(reference) $class (\(classReference)) is not a class description")
            }
            var classNames = [className]
            if let hierarchy = description["$classes"]?.array {
                let names = hierarchy.compactMap(\.string)
                guard names.count == hierarchy.count else {
                    throw Failure(reason: "\(classReference) $classes holds something other than names")
                }
                // `$classname` first: an archiver told to write another name for a class (`setClassName`) may
                // leave the real hierarchy in `$classes`.
                classNames += names.filter { $0 != className }
            }
            return .instance(Instance(classNames: classNames, fields: fields))
        case .array, .uid, .other:
            throw Failure(reason: "\(reference) is neither a value nor an instance")
        default:
            return .value(entry)
        }
    }

    /// The object `reference` names when it is an instance; nil for `$null`.
    ///
    /// - Throws: ``Failure`` when it is a plain value or not readable (see ``object(_:)``).
    func instance(_ reference: Reference) throws -> Instance? {
        switch try object(reference) {
        case .null: return nil
        case .instance(let instance): return instance
        case .value: throw Failure(reason: "\(reference) is a plain value where an object was expected")
        }
    }

    /// The reference stored under `key` in the instance `owner`; nil when the key is absent or points at `$null`.
    ///
    /// - Throws: ``Failure`` when `owner` is not an instance or the field is not an in-range UID.
    func reference(_ key: String, of owner: Reference) throws -> Reference? {
        guard let instance = try instance(owner), let value = instance.fields[key] else { return nil }
        let reference = try Self.reference(value, count: objects.count, context: "\(owner) \(key)")
        if case .null = try object(reference) { return nil }
        return reference
    }

    /// The value stored in place under `key` in the instance `owner` (numbers and booleans are), or nil.
    ///
    /// - Throws: ``Failure`` when `owner` is not an instance.
    func field(_ key: String, of owner: Reference) throws -> PropertyListValue? {
        try instance(owner)?.fields[key]
    }

    /// The string `reference` names: a string stored in place or an NSString instance (`NS.string`, or
    /// `NS.bytes` as UTF-8); nil for `$null` or an absent reference.
    ///
    /// - Throws: ``Failure`` when the object is anything else.
    func string(_ reference: Reference?) throws -> String? {
        guard let reference else { return nil }
        switch try object(reference) {
        case .null: return nil
        case .value(.string(let string)): return string
        case .instance(let instance) where instance.isKind(of: "NSString") || instance.isKind(of: "NSMutableString"):
            if let string = instance.fields["NS.string"]?.string { return string }
            if let bytes = instance.fields["NS.bytes"]?.data { return String(decoding: bytes, as: UTF8.self) }
            throw Failure(reason: "\(reference) is an \(instance.className) without NS.string")
        default:
            throw Failure(reason: "\(reference) is not a string")
        }
    }

    /// The elements of the collection `reference` names (NSArray, NSSet, NSOrderedSet and mutable forms:
    /// `NS.objects`); empty for `$null` or an absent reference.
    ///
    /// - Throws: ``Failure`` when the object is not such a collection or an element is not an in-range UID.
    func elements(_ reference: Reference?) throws -> [Reference] {
        guard let reference, let instance = try instance(reference) else { return [] }
        guard let items = instance.fields["NS.objects"]?.array else {
            throw Failure(reason: "\(reference) (\(instance.className)) is not a collection: it has no NS.objects")
        }
        return try items.enumerated().map { position, item in
            try Self.reference(item, count: objects.count, context: "\(reference) NS.objects[\(position)]")
        }
    }

    /// The entries of the dictionary `reference` names (`NS.keys`, `NS.objects`), in archive order; empty for
    /// `$null` or an absent reference.
    ///
    /// - Throws: ``Failure`` when the object is not a dictionary, its key and value lists differ in length,
    ///   or an entry is not an in-range UID.
    func entries(_ reference: Reference?) throws -> [(key: Reference, value: Reference)] {
        guard let reference, let instance = try instance(reference) else { return [] }
        if instance.isKind(of: "NSKnownKeysDictionary1") { return try knownKeysEntries(reference, instance: instance) }
        guard let keys = instance.fields["NS.keys"]?.array, let values = instance.fields["NS.objects"]?.array else {
            throw Failure(reason: "\(reference) (\(instance.className)) is not a dictionary: it lacks NS.keys or NS.objects")
        }
        guard keys.count == values.count else {
            throw Failure(reason: "\(reference) has \(keys.count) keys but \(values.count) values")
        }
        return try zip(keys, values).enumerated().map { position, pair in
            (try Self.reference(pair.0, count: objects.count, context: "\(reference) NS.keys[\(position)]"),
             try Self.reference(pair.1, count: objects.count, context: "\(reference) NS.objects[\(position)]"))
        }
    }

    /// The entries of an `NSKnownKeysDictionary1` (how Core Data archives a model's entities): its keys are
    /// the `keys` array of the `NSKnownKeysMappingStrategy1` under `searchMapping`, its values the `values`
    /// array in the same order, a slot holding the `emptyToken` string having no value.
    private func knownKeysEntries(_ reference: Reference, instance: Instance) throws -> [(key: Reference, value: Reference)] {
        guard let mapping = try self.reference("searchMapping", of: reference),
              let mappingInstance = try self.instance(mapping), mappingInstance.isKind(of: "NSKnownKeysMappingStrategy1") else {
            throw Failure(reason: "\(reference) (NSKnownKeysDictionary1) has no NSKnownKeysMappingStrategy1 searchMapping")
        }
        let keys = try elements(self.reference("keys", of: mapping))
        let values = try elements(self.reference("values", of: reference))
        guard keys.count == values.count else {
            throw Failure(reason: "\(reference) has \(keys.count) keys but \(values.count) values")
        }
        let emptyToken = try self.reference("emptyToken", of: reference).map { try string($0) } ?? nil
        var result: [(key: Reference, value: Reference)] = []
        for (key, value) in zip(keys, values) {
            if let emptyToken, case .value(.string(emptyToken)) = try object(value) { continue }
            result.append((key, value))
        }
        return result
    }

    /// The dictionary `reference` names, keyed by its string keys.
    ///
    /// - Throws: ``Failure`` as ``entries(_:)`` does, and when a key is not a string or appears twice.
    func stringKeyedEntries(_ reference: Reference?) throws -> [String: Reference] {
        var result: [String: Reference] = [:]
        for (key, value) in try entries(reference) {
            guard let name = try string(key) else { throw Failure(reason: "\(key) is a null dictionary key") }
            guard result.updateValue(value, forKey: name) == nil else {
                throw Failure(reason: "\(reference.map(String.init(describing:)) ?? "?") has the key \"\(name)\" twice")
            }
        }
        return result
    }

    /// The part of the graph below `reference` as a tree.
    ///
    /// - Throws: ``Failure`` when the part contains a cycle, is deeper than ``maximumDepth``, would visit more
    ///   objects than its allowance (shared references), or holds anything ``object(_:)`` refuses.
    func resolved(_ reference: Reference) throws -> Value {
        var walk = Walk(self)
        return try resolve(reference, depth: 0, walk: &walk)
    }

    /// As ``resolved(_:)``, counting the visits in `walk`: reads of many parts of one archive (a compiled
    /// model's predicates) share one allowance, so parts that share a large subgraph cannot each spend a
    /// whole allowance of their own.
    ///
    /// - Throws: as ``resolved(_:)``, also when the walk's allowance was spent by earlier reads.
    func resolved(_ reference: Reference, within walk: inout Walk) throws -> Value {
        try resolve(reference, depth: 0, walk: &walk)
    }

    /// The limits of one walk down the graph: a depth, a visit budget, no object inside itself.
    struct Walk {
        let allowance: Int
        var visits = 0
        var inProgress: Set<Int> = []

        /// A walk of `archive` with its visit allowance.
        init(_ archive: KeyedArchive) {
            allowance = max(KeyedArchive.minimumVisitAllowance,
                            (archive.objects.count + archive.referenceCount) * KeyedArchive.maximumVisitsPerObject)
        }

        /// Counts a visit of `reference` at `depth`; ``leave(_:)`` ends it.
        ///
        /// - Throws: ``Failure`` when `depth` exceeds ``maximumDepth``, the allowance is spent, or
        ///   `reference` is already being visited (a cycle).
        mutating func enter(_ reference: Reference, depth: Int) throws {
            guard depth <= KeyedArchive.maximumDepth else {
                throw Failure(reason: "\(reference) is nested more than \(KeyedArchive.maximumDepth) deep")
            }
            visits += 1
            guard visits <= allowance else { throw Failure(reason: "reading visits more than \(allowance) objects (shared references)") }
            guard inProgress.insert(reference.index).inserted else { throw Failure(reason: "\(reference) contains itself") }
        }

        mutating func leave(_ reference: Reference) { inProgress.remove(reference.index) }
    }

    private func resolve(_ reference: Reference, depth: Int, walk: inout Walk) throws -> Value {
        try walk.enter(reference, depth: depth)
        defer { walk.leave(reference) }
        switch try object(reference) {
        case .null: return .null
        case .value(let value): return try Self.plain(value, at: reference)
        case .instance(let instance):
            let isCollection = ["NSArray", "NSSet", "NSOrderedSet"].contains { instance.isKind(of: $0) }
            if isCollection && instance.fields["NS.objects"] != nil {
                return .array(try elements(reference).map { try resolve($0, depth: depth + 1, walk: &walk) })
            }
            if instance.isKind(of: "NSDictionary") {
                var dictionary: [String: Value] = [:]
                for (key, value) in try stringKeyedEntries(reference) {
                    dictionary[key] = try resolve(value, depth: depth + 1, walk: &walk)
                }
                return .dictionary(dictionary)
            }
            if instance.isKind(of: "NSString") || instance.isKind(of: "NSMutableString") {
                return .string(try string(reference) ?? "")
            }
            if instance.isKind(of: "NSData"), let data = instance.fields["NS.data"]?.data { return .data(data) }
            if instance.isKind(of: "NSDate"), case .real(let seconds)? = instance.fields["NS.time"] {
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            var fields: [String: Value] = [:]
            for (key, value) in instance.fields {
                if case .uid = value {
                    let target = try Self.reference(value, count: objects.count, context: "\(reference) \(key)")
                    fields[key] = try resolve(target, depth: depth + 1, walk: &walk)
                } else {
                    fields[key] = try Self.plain(value, at: reference)
                }
            }
            return .instance(className: instance.className, fields: fields)
        }
    }

    /// A value stored in place, as a tree value.
    private static func plain(_ value: PropertyListValue, at reference: Reference) throws -> Value {
        switch value {
        case .string(let string): return .string(string)
        case .data(let data): return .data(data)
        case .integer(let integer): return .integer(integer)
        case .real(let real): return .real(real)
        case .boolean(let boolean): return .boolean(boolean)
        case .date(let date): return .date(date)
        case .array, .dictionary, .uid, .other:
            throw Failure(reason: "\(reference) holds a property list container where a value was expected")
        }
    }

    /// `value` as a reference into `count` objects.
    private static func reference(_ value: PropertyListValue, count: Int, context: String) throws -> Reference {
        guard case .uid(let index) = value else { throw Failure(reason: "\(context) is not a reference (UID)") }
        guard index < UInt64(count) else {
            throw Failure(reason: "\(context) refers to object \(index), past the \(count) objects")
        }
        return Reference(index: Int(index))
    }
}
