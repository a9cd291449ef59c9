import Foundation
import GRDB

/// The validation rules of an attribute (numeric bounds, string lengths and pattern, date bounds),
/// checked at save.
enum AttributeValidation {
    static func check(_ value: DatabaseValue, attribute: AttributeDescription, object: ManagedObject) -> [ValidationFailure] {
        var failures: [ValidationFailure] = []
        func fail(_ rule: ValidationFailure.Rule, _ message: String) {
            failures.append(ValidationFailure(objectID: object.objectID, entity: object.entity.name,
                                              key: attribute.name, rule: rule, message: message))
        }
        let swiftValue = ValueConversion.swiftValue(value, for: attribute.attributeType)
        switch attribute.attributeType {
        case .integer16, .integer32, .integer64, .double, .float, .decimal:
            let number: Double?
            switch swiftValue {
            case let v as Int16: number = Double(v)
            case let v as Int32: number = Double(v)
            case let v as Int64: number = Double(v)
            case let v as Double: number = v
            case let v as Float: number = Double(v)
            case let v as Decimal: number = NSDecimalNumber(decimal: v).doubleValue
            default: number = nil
            }
            if let number {
                if let min = attribute.minValue, number < min { fail(.tooSmall, "\(number) is less than the minimum \(min)") }
                if let max = attribute.maxValue, number > max { fail(.tooLarge, "\(number) is more than the maximum \(max)") }
            }
        case .string:
            guard let string = swiftValue as? String else { break }
            let length = string.count
            if let min = attribute.minLength, length < min { fail(.tooShort, "\(length) characters, at least \(min) required") }
            if let max = attribute.maxLength, length > max { fail(.tooLong, "\(length) characters, at most \(max) allowed") }
            if let pattern = attribute.regularExpression, let regex = try? NSRegularExpression(pattern: pattern) {
                let range = NSRange(string.startIndex..., in: string)
                let match = regex.firstMatch(in: string, options: [.anchored], range: range)
                if match?.range != range { fail(.patternMismatch, "'\(string)' does not match \(pattern)") }
            }
        case .date:
            guard let date = swiftValue as? Date else { break }
            if let min = attribute.minDate, date < min { fail(.dateTooEarly, "\(date) is before \(min)") }
            if let max = attribute.maxDate, date > max { fail(.dateTooLate, "\(date) is after \(max)") }
        default:
            break
        }
        return failures
    }
}
