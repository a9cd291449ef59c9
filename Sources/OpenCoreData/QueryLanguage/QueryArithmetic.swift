import Foundation

/// Arithmetic and aggregate functions on numbers of any Swift type; nil or non-numbers give nil, as NULL
/// does in SQL. Division and powers are always floating point (Core Data's NSExpression semantics).
enum QueryArithmetic {
    typealias Number = QueryValueSemantics.Number

    static func number(_ value: Any?) -> Number? {
        QueryValue.convert(value).flatMap(QueryValueSemantics.number)
    }

    static func swiftValue(_ number: Number) -> Any {
        switch number {
        case .int(let v): return Int(exactly: v) ?? v
        case .double(let v): return v
        case .decimal(let v): return v
        }
    }

    static func apply(_ op: QueryExpression.ArithmeticOperator, _ lhs: Any?, _ rhs: Any?) -> Any? {
        guard let a = number(lhs), let b = number(rhs) else { return nil }
        guard let result = combine(op, a, b) else { return nil }
        return swiftValue(result)
    }

    static func combine(_ op: QueryExpression.ArithmeticOperator, _ a: Number, _ b: Number) -> Number? {
        switch (op, a, b) {
        case (.add, .int(let x), .int(let y)):
            let (result, overflow) = x.addingReportingOverflow(y)
            return overflow ? .double(Double(x) + Double(y)) : .int(result)
        case (.subtract, .int(let x), .int(let y)):
            let (result, overflow) = x.subtractingReportingOverflow(y)
            return overflow ? .double(Double(x) - Double(y)) : .int(result)
        case (.multiply, .int(let x), .int(let y)):
            let (result, overflow) = x.multipliedReportingOverflow(by: y)
            return overflow ? .double(Double(x) * Double(y)) : .int(result)
        case (.divide, _, _):
            let divisor = b.doubleValue
            return divisor == 0 ? nil : .double(a.doubleValue / divisor)
        case (.power, _, _):
            let result = pow(a.doubleValue, b.doubleValue)
            return result.isNaN ? nil : .double(result)
        default:
            let x = a.doubleValue, y = b.doubleValue
            switch op {
            case .add: return .double(x + y)
            case .subtract: return .double(x - y)
            default: return .double(x * y)
            }
        }
    }

    /// `modulus:by:`: the remainder with the dividend's sign (`%` on integers, `fmod` otherwise); nil for a
    /// zero divisor.
    static func modulus(_ lhs: Any?, _ rhs: Any?) -> Any? {
        guard let a = number(lhs), let b = number(rhs) else { return nil }
        if case .int(let x) = a, case .int(let y) = b {
            guard y != 0 else { return nil }
            let (result, overflow) = x.remainderReportingOverflow(dividingBy: y)
            return overflow ? 0 : swiftValue(.int(result))
        }
        let divisor = b.doubleValue
        guard divisor != 0 else { return nil }
        let result = fmod(a.doubleValue, divisor)
        return result.isNaN ? nil : result
    }

    static func absolute(_ number: Number) -> Any {
        switch number {
        case .int(let v): return v == Int64.min ? Double(v).magnitude : Int(v.magnitude)
        case .double(let v): return v.magnitude
        case .decimal(let v): return v.magnitude
        }
    }

    /// sum, average, min, max, median over the non-nil members (sum of nothing is 0, the others nil).
    static func aggregate(_ function: QueryFunction, _ members: [Any?]) throws -> Any? {
        let present = members.compactMap { $0 }
        switch function {
        case .count: return present.count
        case .sum:
            var total: Number = .int(0)
            for member in present {
                guard let value = number(member) else { continue }
                total = combine(.add, total, value) ?? total
            }
            return swiftValue(total)
        case .average:
            let values = present.compactMap(number)
            guard !values.isEmpty else { return nil }
            return values.reduce(0.0) { $0 + $1.doubleValue } / Double(values.count)
        case .median:
            let values = present.compactMap(number).map(\.doubleValue).sorted()
            guard !values.isEmpty else { return nil }
            let middle = values.count / 2
            return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
        case .min, .max:
            var best: Any?
            var bestValue: QueryValue?
            for member in present {
                guard let value = QueryValue.convert(member), value != .null else { continue }
                if let current = bestValue {
                    let order = QuerySortOrder.compare(value, current, comparator: .compare)
                    if (function == .min && order == .orderedAscending) || (function == .max && order == .orderedDescending) {
                        best = member; bestValue = value
                    }
                } else {
                    best = member; bestValue = value
                }
            }
            return best
        default:
            throw QueryLanguageError.semantic("\(function.rawValue) is not an aggregate")
        }
    }
}
