import Foundation

/// What a stored cell holds, as far as reading its raw bytes needs to know, so that the context layer can
/// hand out a column's bytes (``ManagedObject/storedTransformableData(forKey:)``) without GRDB's value type.
enum StoredCellBytes {
    case null
    case bytes(Data)
    case number

    /// The content of `value`: a blob's bytes, text as its UTF-8 bytes, or the fact that it is a number.
    init(_ value: StoreValue) {
        switch value.storage {
        case .null: self = .null
        case .blob(let bytes): self = .bytes(bytes)
        case .string(let text): self = .bytes(Data(text.utf8))
        case .int64, .double: self = .number
        }
    }
}
