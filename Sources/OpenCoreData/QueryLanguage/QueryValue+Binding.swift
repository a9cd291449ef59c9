import Foundation

extension QueryValue {
    /// The constant as the store holds it: dates as seconds since 2001, booleans 0/1, UUIDs as 16 bytes,
    /// URLs as text, decimals as doubles (the column has NUMERIC affinity), object IDs as their primary key.
    package var boundValue: StoreValue {
        get throws {
            switch self {
            case .null: return .null
            case .bool(let v): return (v ? 1 : 0).storeValue
            case .int(let v): return v.storeValue
            case .double(let v): return v.storeValue
            case .decimal(let v): return ValueConversion.decimalStoreValue(v)
            case .string(let v): return v.storeValue
            case .date(let v): return v.timeIntervalSinceReferenceDate.storeValue
            case .data(let v): return v.storeValue
            case .uuid(let v): return ValueConversion.uuidData(v).storeValue
            case .url(let v): return v.absoluteString.storeValue
            case .objectID(let v):
                guard v.primaryKey != 0 else {
                    throw QueryLanguageError.semantic("\(v) is a temporary object ID; save the object before fetching by it")
                }
                return v.primaryKey.storeValue
            case .array:
                throw QueryLanguageError.semantic("a collection constant can only be used with IN, BETWEEN or CONTAINS")
            }
        }
    }
}
