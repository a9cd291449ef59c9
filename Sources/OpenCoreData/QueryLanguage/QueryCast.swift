import Foundation

/// `CAST(value, 'type')` on constants and evaluated values.
enum QueryCast {
    static func cast(_ value: QueryValue, to type: QueryCastType) throws -> QueryValue {
        func fail() -> QueryLanguageError {
            .semantic("cannot CAST \(value.formatText) to \(type.rawValue)")
        }
        if value == .null { return .null }
        switch type {
        case .date:
            switch value {
            case .date: return value
            case .int(let seconds): return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
            case .double(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case .decimal(let seconds): return .date(Date(timeIntervalSinceReferenceDate: NSDecimalNumber(decimal: seconds).doubleValue))
            case .string(let text):
                guard let seconds = Double(text) else { throw fail() }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            default: throw fail()
            }
        case .number:
            switch value {
            case .int, .double: return value
            case .bool(let flag): return .int(flag ? 1 : 0)
            case .decimal(let number): return .double(NSDecimalNumber(decimal: number).doubleValue)
            case .date(let date): return .double(date.timeIntervalSinceReferenceDate)
            case .string(let text):
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                if let integer = Int64(trimmed) { return .int(integer) }
                switch trimmed.lowercased() {
                case "nan": return .double(.nan)
                case "inf", "+inf": return .double(.infinity)
                case "-inf": return .double(-.infinity)
                default: break
                }
                guard let number = Double(trimmed) else { throw fail() }
                return .double(number)
            default: throw fail()
            }
        case .string:
            switch value {
            case .string: return value
            case .int(let number): return .string(String(number))
            case .double(let number): return .string(number.description)
            case .decimal(let number): return .string(number.description)
            case .bool(let flag): return .string(flag ? "1" : "0")
            case .uuid(let id): return .string(id.uuidString)
            case .url(let url): return .string(url.absoluteString)
            default: throw fail()
            }
        case .decimal:
            switch value {
            case .decimal: return value
            case .int(let number): return .decimal(Decimal(number))
            case .double(let number): return .decimal(Decimal(number))
            case .string(let text):
                guard let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw fail() }
                return .decimal(number)
            default: throw fail()
            }
        case .uuid:
            switch value {
            case .uuid: return value
            case .string(let text):
                guard let id = UUID(uuidString: text) else { throw fail() }
                return .uuid(id)
            case .data(let bytes) where bytes.count == 16: return .uuid(ValueConversion.uuid(from: bytes))
            default: throw fail()
            }
        case .data:
            switch value {
            case .data: return value
            case .string(let text):
                guard let bytes = Data(base64Encoded: text) else { throw fail() }
                return .data(bytes)
            default: throw fail()
            }
        case .url:
            switch value {
            case .url: return value
            case .string(let text):
                guard let url = URL(string: text) else { throw fail() }
                return .url(url)
            default: throw fail()
            }
        }
    }
}
