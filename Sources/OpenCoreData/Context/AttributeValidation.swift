import Foundation

/// The validation rules of an attribute (numeric bounds, string lengths and pattern, date bounds),
/// checked at save.
enum AttributeValidation {
    /// A bound or value as a message shows it: whole numbers without a fraction ("150", not "150.0").
    static func boundText(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 9.0e15 { return String(Int64(number)) }
        return "\(number)"
    }

    static func check(_ value: StoreValue, attribute: AttributeDescription, object: ManagedObject) -> [ValidationFailure] {
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
                // Integers print as integers ("200 is more than the maximum 150"), as Core Data's messages do;
                // an integer's own digits are used, as a Double loses them above 2^53.
                let shown: String
                switch swiftValue {
                case let v as Int16: shown = String(v)
                case let v as Int32: shown = String(v)
                case let v as Int64: shown = String(v)
                default: shown = boundText(number)
                }
                if let min = attribute.minValue, number < min { fail(.tooSmall, "\(shown) is less than the minimum \(boundText(min))") }
                if let max = attribute.maxValue, number > max { fail(.tooLarge, "\(shown) is more than the maximum \(boundText(max))") }
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
