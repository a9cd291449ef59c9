
/// A stored value compared as the store's `=` and unique indexes compare it: text by its bytes (SQLite's
/// `BINARY` collation; PostgreSQL's deterministic collations break ties by bytes too), numbers by value
/// (the integer 1 equals the real 1.0), blobs by bytes.
///
/// `StoreValue ==` compares text with Swift's `String ==`, which is canonical equivalence: `K` and the
/// Kelvin sign (U+212A), or `é` precomposed and decomposed, are equal there and distinct in the store. Any
/// in-memory grouping or shortcut that must agree with the store goes through this type instead.
struct StoreEqualValue: Hashable {
    let value: StoreValue
    init(_ value: StoreValue) { self.value = value }

    static func == (lhs: StoreEqualValue, rhs: StoreEqualValue) -> Bool { lhs.value.isStoreEqual(to: rhs.value) }

    func hash(into hasher: inout Hasher) {
        if case .string(let text) = value.storage {
            hasher.combine(1)
            text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
                ?? { for byte in text.utf8 { hasher.combine(byte) } }()
        } else {
            hasher.combine(value)
        }
    }
}

extension StoreValue {
    /// Whether the store's `=` holds between the two values (see ``StoreEqualValue``); nulls are equal here.
    func isStoreEqual(to other: StoreValue) -> Bool {
        if case .string(let a) = storage, case .string(let b) = other.storage {
            // `==` first: unequal text (the common case) is refused at `String`'s speed.
            return a == b && a.utf8.elementsEqual(b.utf8)
        }
        return self == other
    }
}
