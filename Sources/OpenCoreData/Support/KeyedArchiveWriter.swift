import Foundation

/// Writes Foundation values as an `NSKeyedArchiver` archive with the class names and keys Apple's archiver
/// uses (`NSArray`, `NSDictionary`, `NSSet`, `NSDate`, `NSURL`, `NSUUID`, `NSNull`; strings, numbers,
/// booleans and data in place), so Core Data on Apple's systems, and `NSKeyedUnarchiver`, read the bytes.
///
/// Written here rather than with Foundation's `NSKeyedArchiver`, which needs nested Swift values bridged to
/// `NSObject`s first (and that bridging differs between platforms): the output is fixed by this file alone.
///
/// Accepted: `String`, `Bool`, integers, `Double`, `Float`, `Date`, `Data`, `URL`, `UUID`, `NSNull`, ``Instance``, and
/// arrays, sets and string-keyed dictionaries of these, nested.
///
/// ```swift
/// let bytes = try KeyedArchiveWriter.archive(["tags": ["a", "b"], "count": 2])
/// ```
struct KeyedArchiveWriter {
    /// Why a value could not be archived; `reason` names the value's type and where it sits.
    struct Failure: Error, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// An instance of a class the writer has no rule for (an `NSExpression` subclass, say), written as its
    /// `encodeWithCoder:` would: `fields` archived by the rules here and referred to from the instance
    /// (`encodeObject:forKey:`), `integers` and `booleans` in place (`encodeInteger:forKey:`,
    /// `encodeBool:forKey:`), and `classNames` as the class description (the class, then its superclasses;
    /// `NSObject` is added).
    struct Instance {
        let classNames: [String]
        let fields: [String: Any]
        var integers: [String: Int] = [:]
        var booleans: [String: Bool] = [:]
    }

    /// Nesting deeper than this is refused, as ``KeyedArchive`` refuses to read it.
    static let maximumDepth = KeyedArchive.maximumDepth

    private var objects: [PropertyListValue] = [.string("$null")]
    private var classReferences: [String: UInt64] = [:]

    /// The archive of `value` with it as the root (`$top["root"]`, as `archivedData(withRootObject:)` writes).
    ///
    /// - Throws: ``Failure`` naming the value's type and its path when a value (or an element) is of a type
    ///   the archive cannot hold, a dictionary key is not a string, an unsigned integer exceeds `Int64`, or
    ///   the nesting is deeper than ``maximumDepth``.
    static func archive(_ value: Any) throws -> Data {
        var writer = KeyedArchiveWriter()
        let root = try writer.add(value, path: "root", depth: 0)
        let archive: PropertyListValue = .dictionary([
            "$archiver": .string("NSKeyedArchiver"),
            "$version": .integer(100_000),
            "$top": .dictionary(["root": .uid(root)]),
            "$objects": .array(writer.objects),
        ])
        return BinaryPropertyListWriter.write(archive)
    }

    private mutating func append(_ object: PropertyListValue) -> UInt64 {
        objects.append(object)
        return UInt64(objects.count - 1)
    }

    /// The reference of the class description for `name`, written once per archive.
    private mutating func classReference(_ name: String, superclasses: [String] = []) -> UInt64 {
        if let reference = classReferences[name] { return reference }
        let hierarchy = ([name] + superclasses + ["NSObject"]).map(PropertyListValue.string)
        let reference = append(.dictionary(["$classname": .string(name), "$classes": .array(hierarchy)]))
        classReferences[name] = reference
        return reference
    }

    private mutating func instance(_ className: String, _ fields: [String: PropertyListValue]) -> UInt64 {
        // The instance's own slot first, so containers precede their elements as in Apple's archives.
        let reference = append(.other)
        var fields = fields
        fields["$class"] = .uid(classReference(className))
        objects[Int(reference)] = .dictionary(fields)
        return reference
    }

    private mutating func add(_ value: Any, path: String, depth: Int) throws -> UInt64 {
        guard depth <= Self.maximumDepth else { throw Failure(reason: "\(path) is nested more than \(Self.maximumDepth) deep") }
        if let optional = value as? any OptionalProtocol {
            guard let wrapped = optional.wrappedAny else { return 0 }
            return try add(wrapped, path: path, depth: depth)
        }
        switch value {
        case let string as String: return append(.string(string))
        case let string as Substring: return append(.string(String(string)))
        case let flag as Bool: return append(.boolean(flag))
        case let number as Int: return append(.integer(Int64(number)))
        case let number as Int64: return append(.integer(number))
        case let number as Int32: return append(.integer(Int64(number)))
        case let number as Int16: return append(.integer(Int64(number)))
        case let number as Int8: return append(.integer(Int64(number)))
        case let number as UInt8: return append(.integer(Int64(number)))
        case let number as UInt16: return append(.integer(Int64(number)))
        case let number as UInt32: return append(.integer(Int64(number)))
        case let number as UInt:
            guard let exact = Int64(exactly: number) else { throw Failure(reason: "\(path): \(number) does not fit an NSNumber's Int64") }
            return append(.integer(exact))
        case let number as UInt64:
            guard let exact = Int64(exactly: number) else { throw Failure(reason: "\(path): \(number) does not fit an NSNumber's Int64") }
            return append(.integer(exact))
        case let number as Double: return append(.real(number))
        case let number as Float: return append(.real(Double(number)))
        case let data as Data: return append(.data(data))
        case let date as Date: return instance("NSDate", ["NS.time": .real(date.timeIntervalSinceReferenceDate)])
        case let uuid as UUID: return instance("NSUUID", ["NS.uuidbytes": .data(ValueConversion.uuidData(uuid))])
        case let url as URL:
            let reference = append(.other)
            let relative = append(.string(url.absoluteString))
            objects[Int(reference)] = .dictionary(["NS.base": .uid(0), "NS.relative": .uid(relative),
                                                   "$class": .uid(classReference("NSURL"))])
            return reference
        case is NSNull: return instance("NSNull", [:])
        case let object as Instance:
            guard let className = object.classNames.first else { throw Failure(reason: "\(path) is an instance without a class name") }
            let reference = append(.other)
            var fields: [String: PropertyListValue] = [:]
            for (key, field) in object.fields.sorted(by: { $0.key < $1.key }) {
                fields[key] = .uid(try add(field, path: "\(path).\(key)", depth: depth + 1))
            }
            for (key, number) in object.integers { fields[key] = .integer(Int64(number)) }
            for (key, flag) in object.booleans { fields[key] = .boolean(flag) }
            fields["$class"] = .uid(classReference(className, superclasses: Array(object.classNames.dropFirst())))
            objects[Int(reference)] = .dictionary(fields)
            return reference
        default: break
        }
        switch Mirror(reflecting: value).displayStyle {
        case .dictionary:
            guard let dictionary = value as? [String: Any] else {
                throw Failure(reason: "\(path) is a \(type(of: value)): only dictionaries with String keys can be archived")
            }
            let reference = append(.other)
            var keys: [PropertyListValue] = [], values: [PropertyListValue] = []
            for (key, element) in dictionary.sorted(by: { $0.key < $1.key }) {
                keys.append(.uid(append(.string(key))))
                values.append(.uid(try add(element, path: "\(path)[\"\(key)\"]", depth: depth + 1)))
            }
            objects[Int(reference)] = .dictionary(["NS.keys": .array(keys), "NS.objects": .array(values),
                                                   "$class": .uid(classReference("NSDictionary"))])
            return reference
        case .set, .collection:
            let isSet = Mirror(reflecting: value).displayStyle == .set
            let reference = append(.other)
            var elements: [PropertyListValue] = []
            for (position, child) in Mirror(reflecting: value).children.enumerated() {
                elements.append(.uid(try add(child.value, path: "\(path)[\(position)]", depth: depth + 1)))
            }
            objects[Int(reference)] = .dictionary(["NS.objects": .array(elements),
                                                   "$class": .uid(classReference(isSet ? "NSSet" : "NSArray"))])
            return reference
        default:
            throw Failure(reason: "\(path) is a \(type(of: value)), which a keyed archive of Foundation values cannot hold")
        }
    }
}
