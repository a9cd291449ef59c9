import Foundation

/// Turns a validation predicate read from a compiled model into the attribute limit or pattern it states, as
/// Core Data does when it loads a model (its decompiled `-[NSAttributeDescription _canConvertPredicate:andWarning:]`
/// takes a comparison `>=` (a minimum) or `<=` (a maximum) against a constant, whose left side is `length` for
/// a string, `timeIntervalSinceReferenceDate` for a date and `SELF` for a number). `SELF MATCHES "pattern"` on a
/// string is the regular expression (our reading: Core Data evaluates that one as a predicate, with the same
/// outcome). A public reimplementation of Xcode's model compiler writes the number and date forms for the XML
/// form's `minValueString`/`maxValueString` (`min/maxDateTimeInterval`); the string forms and the pattern
/// follow Core Data's reading above (no `.mom` from Xcode was checked here).
enum CompiledValidationRule {
    /// Sets the limit or pattern `rule` states on `attribute`; false when it states none of them (the rule is
    /// then the caller's to record).
    ///
    /// - Throws: ``ModelError/invalidDefaultValue(entity:attribute:reason:)`` when a length limit is negative or
    ///   not a whole number, a limit is not finite, or a pattern is not a regular expression, as the XML loader
    ///   refuses such limits.
    static func apply(_ rule: QueryPredicate, to attribute: AttributeDescription, entity: String) throws -> Bool {
        guard case .comparison(let comparison) = rule, comparison.modifier == .direct, comparison.options.isEmpty,
              case .constant(let bound) = comparison.rhs else { return false }
        let type = attribute.attributeType
        if comparison.op == .matches {
            guard type == .string, comparison.lhs == .evaluatedObject, case .string(let pattern) = bound else { return false }
            do {
                _ = try NSRegularExpression(pattern: pattern)
            } catch {
                throw invalid(entity, attribute, "the validation pattern '\(pattern)' is not a regular expression")
            }
            attribute.regularExpression = pattern
            return true
        }
        let isMinimum: Bool
        switch comparison.op {
        case .greaterOrEqual: isMinimum = true
        case .lessOrEqual: isMinimum = false
        default: return false
        }
        let number: Double
        switch bound {
        case .int(let value): number = Double(value)
        case .double(let value): number = value
        default: return false
        }
        guard number.isFinite else { throw invalid(entity, attribute, "a validation limit is not finite") }
        switch type {
        case .string:
            guard comparison.lhs == (try QueryExpression(format: "length")) else { return false }
            guard let length = Int(exactly: number), length >= 0 else {
                throw invalid(entity, attribute, "the length limit \(number) is not a whole number of characters")
            }
            if isMinimum { attribute.minLength = length } else { attribute.maxLength = length }
        case .date:
            guard comparison.lhs == (try QueryExpression(format: "timeIntervalSinceReferenceDate")) else { return false }
            let date = Date(timeIntervalSinceReferenceDate: number)
            if isMinimum { attribute.minDate = date } else { attribute.maxDate = date }
        case _ where type.isNumeric:
            guard comparison.lhs == .evaluatedObject else { return false }
            if isMinimum { attribute.minValue = number } else { attribute.maxValue = number }
        default:
            return false
        }
        return true
    }

    private static func invalid(_ entity: String, _ attribute: AttributeDescription, _ reason: String) -> ModelError {
        .invalidDefaultValue(entity: entity, attribute: attribute.name, reason: reason)
    }
}
