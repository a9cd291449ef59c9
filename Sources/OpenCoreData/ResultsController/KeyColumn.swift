
/// One sort key's stored values for consecutive rows, in the most compact form that keeps every value
/// exactly as read (its SQLite storage class included).
///
/// A boxed `StoreValue` takes 24 bytes; most sort keys are numbers or dates (8 bytes as `Int64` or
/// `Double`), and a section key is the same for long runs of rows (a chunk inside one section stores it
/// once). A value that does not fit the current form widens the column (integers or reals to boxed
/// values, one repeated value to an array): the stored values never change, only how they are held.
enum KeyColumn: Equatable {
    /// `count` rows, all holding `value`.
    case same(StoreValue, count: Int)
    /// Every value is an SQLite INTEGER.
    case integers([Int64])
    /// Every value is an SQLite REAL.
    case reals([Double])
    /// Anything else (nulls, text, blobs, mixed storage classes).
    case values([StoreValue])

    static let empty = KeyColumn.values([])

    var count: Int {
        switch self {
        case .same(_, let count): return count
        case .integers(let values): return values.count
        case .reals(let values): return values.count
        case .values(let values): return values.count
        }
    }

    subscript(row: Int) -> StoreValue {
        switch self {
        case .same(let value, _): return value
        case .integers(let values): return values[row].storeValue
        case .reals(let values): return values[row].storeValue
        case .values(let values): return values[row]
        }
    }

    /// Every value boxed, in order.
    var boxed: [StoreValue] {
        switch self {
        case .same(let value, let count): return Array(repeating: value, count: count)
        case .integers(let values): return values.map(\.storeValue)
        case .reals(let values): return values.map(\.storeValue)
        case .values(let values): return values
        }
    }

    /// The rows in `range`, held as one repeated value when they all hold the same one.
    func compacted(_ range: Range<Int>) -> KeyColumn {
        /// The one value every element holds, compared exactly (reals by bit pattern, boxed values with their
        /// storage class: `StoreValue ==` equates 1 and 1.0).
        func sole<T>(_ values: ArraySlice<T>, _ same: (T, T) -> Bool) -> T? {
            guard let first = values.first, values.allSatisfy({ same($0, first) }) else { return nil }
            return first
        }
        guard !range.isEmpty else { return .empty }
        switch self {
        case .same(let value, _): return .same(value, count: range.count)
        case .integers(let values):
            if let value = sole(values[range], ==) { return .same(value.storeValue, count: range.count) }
            return .integers(Array(values[range]))
        case .reals(let values):
            if let value = sole(values[range], { $0.bitPattern == $1.bitPattern }) {
                return .same(value.storeValue, count: range.count)
            }
            return .reals(Array(values[range]))
        case .values(let values):
            if let value = sole(values[range], { ExactValue($0) == ExactValue($1) }) { return .same(value, count: range.count) }
            return .values(Array(values[range]))
        }
    }

    /// Appends one value, widening the column when the value does not fit its form.
    mutating func append(_ value: StoreValue) {
        insert(value, at: count)
    }

    // MARK: Changing

    /// Inserts one value at `row`, widening the column when the value does not fit its form.
    mutating func insert(_ value: StoreValue, at row: Int) {
        // The typed cases bind the payload, then empty `self` so the payload is uniquely referenced while it
        // changes (no copy of the array).
        switch self {
        case .same(let held, let count) where count == 0 || ExactValue(held) == ExactValue(value):
            self = count == 0 ? .same(value, count: 1) : .same(held, count: count + 1)
            return
        case .integers(var values):
            if case .int64(let int) = value.storage {
                self = .empty
                values.insert(int, at: row)
                self = .integers(values)
                return
            }
        case .reals(var values):
            if case .double(let double) = value.storage {
                self = .empty
                values.insert(double, at: row)
                self = .reals(values)
                return
            }
        case .values(var values):
            if values.isEmpty { self = .same(value, count: 1); return }
            self = .empty
            values.insert(value, at: row)
            self = .values(values)
            return
        case .same:
            break
        }
        var values = boxed
        values.insert(value, at: row)
        self = Self.compactArray(values)
    }

    /// The most compact array form for `values` (typed when they share one numeric storage class).
    private static func compactArray(_ values: [StoreValue]) -> KeyColumn {
        if let integers = values.compactMapAll({ if case .int64(let int) = $0.storage { int } else { nil } }) {
            return .integers(integers)
        }
        if let reals = values.compactMapAll({ if case .double(let double) = $0.storage { double } else { nil } }) {
            return .reals(reals)
        }
        return .values(values)
    }

    /// Removes the value at `row`.
    mutating func remove(at row: Int) {
        switch self {
        case .same(let value, let count): self = .same(value, count: count - 1)
        case .integers(var values): self = .empty; values.remove(at: row); self = .integers(values)
        case .reals(var values): self = .empty; values.remove(at: row); self = .reals(values)
        case .values(var values): self = .empty; values.remove(at: row); self = .values(values)
        }
    }

    /// Removes the rows from `row` on and returns them as a column of their own (compacted).
    mutating func split(at row: Int) -> KeyColumn {
        let tail = compacted(row..<count)
        self = compacted(0..<row)
        return tail
    }
}

/// A stored value compared with its storage class (`StoreValue ==` equates the integer 1 and the
/// real 1.0, which a key column must keep apart) and text by its bytes (see ``StoreEqualValue``).
struct ExactValue: Equatable {
    let value: StoreValue
    init(_ value: StoreValue) { self.value = value }

    static func == (lhs: ExactValue, rhs: ExactValue) -> Bool {
        switch (lhs.value.storage, rhs.value.storage) {
        case (.null, .null): return true
        case let (.int64(a), .int64(b)): return a == b
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern
        case let (.string(a), .string(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.blob(a), .blob(b)): return a == b
        default: return false
        }
    }
}

/// Builds a ``KeyColumn`` from values read in order, typed while every value has one storage class (plain
/// arrays while reading: no enum to unpack per row).
struct KeyColumnBuilder {
    private enum Form { case integers, reals, values }
    private var form: Form?
    private var integers: [Int64] = []
    private var reals: [Double] = []
    private var values: [StoreValue] = []
    private let capacity: Int

    init(capacity: Int = 0) { self.capacity = capacity }

    /// Appends column `index` of the row the store is stepping.
    mutating func append(from row: SteppedRow, index: Int32) {
        switch form {
        case .integers: if let integer = row.storedInteger(at: index) { integers.append(integer); return }
        case .reals: if let real = row.storedReal(at: index) { reals.append(real); return }
        default: break
        }
        append(row.value(at: index))
    }

    /// Appends one value.
    mutating func append(_ value: StoreValue) {
        switch (form, value.storage) {
        case (.integers, .int64(let int)): integers.append(int)
        case (.reals, .double(let double)): reals.append(double)
        case (.values, _): values.append(value)
        case (nil, .int64(let int)): form = .integers; integers.reserveCapacity(capacity); integers.append(int)
        case (nil, .double(let double)): form = .reals; reals.reserveCapacity(capacity); reals.append(double)
        case (nil, _): form = .values; values.reserveCapacity(capacity); values.append(value)
        case (.integers, _), (.reals, _):
            // Another storage class: box what was read so far, once.
            values = integers.isEmpty ? reals.map(\.storeValue) : integers.map(\.storeValue)
            values.reserveCapacity(capacity)
            integers = []
            reals = []
            form = .values
            values.append(value)
        }
    }

    var column: KeyColumn {
        switch form {
        case .integers: return .integers(integers)
        case .reals: return .reals(reals)
        case .values, nil: return .values(values)
        }
    }
}

extension Array {
    /// The transformed elements when every element transforms, else nil.
    fileprivate func compactMapAll<T>(_ transform: (Element) -> T?) -> [T]? {
        var result: [T] = []
        result.reserveCapacity(count)
        for element in self {
            guard let transformed = transform(element) else { return nil }
            result.append(transformed)
        }
        return result
    }
}
