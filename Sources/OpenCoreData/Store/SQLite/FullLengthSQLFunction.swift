import Foundation
import GRDB
import GRDBSQLite

/// A scalar SQL function whose text arguments and results keep their full length.
///
/// GRDB's `DatabaseFunction` reads text arguments as C strings and returns text the same way, so a string
/// with a NUL inside (`"admin\0x"`) reaches the function as `"admin"`: a comparison in SQL would then answer
/// differently from the same comparison in memory. The query language's functions are registered through
/// this type instead, which reads and returns text by its byte count.
struct FullLengthSQLFunction: Sendable {
    /// The SQL name.
    let name: String
    /// The number of arguments; nil for any number.
    let argumentCount: Int?
    /// Whether the result depends on the arguments only (SQLite may then factor calls out).
    let pure: Bool
    /// Computes the result; a thrown error becomes the statement's error, with its description as message.
    let body: @Sendable ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?

    init(_ name: String, argumentCount: Int?, pure: Bool,
         _ body: @escaping @Sendable ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?) {
        self.name = name
        self.argumentCount = argumentCount
        self.pure = pure
        self.body = body
    }

    /// Holds the function for SQLite, which keeps a pointer to it until the connection closes or the
    /// function is registered again.
    private final class Box {
        let function: FullLengthSQLFunction
        init(_ function: FullLengthSQLFunction) { self.function = function }
    }

    /// Registers the function on the connection (replacing one of the same name and argument count).
    func install(in db: Database) {
        // Retained for SQLite, which hands the pointer to each call and releases it through the destroy
        // callback below when the function is replaced or the connection closes. Not a fast path: the C API
        // takes only a raw pointer.
        let box = Unmanaged.passRetained(Box(self)).toOpaque()
        let flags = SQLITE_UTF8 | (pure ? SQLITE_DETERMINISTIC : 0)
        let code = sqlite3_create_function_v2(
            db.sqliteConnection, name, Int32(argumentCount ?? -1), flags, box,
            { context, argc, argv in
                guard let context, let data = sqlite3_user_data(context) else { return }
                let function = Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().function
                let arguments = (0..<Int(argc)).map { FullLengthSQLFunction.value(argv?[$0]) }
                do {
                    FullLengthSQLFunction.setResult(try function.body(arguments)?.databaseValue ?? .null, context)
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            },
            nil, nil,
            { data in if let data { Unmanaged<Box>.fromOpaque(data).release() } })
        // Registration fails only for a malformed name or argument count, which are the library's own.
        precondition(code == SQLITE_OK, "cannot register SQL function \(name): \(code)")
    }

    /// An argument as a value, text and blobs by their byte count.
    private static func value(_ raw: OpaquePointer?) -> DatabaseValue {
        guard let raw else { return .null }
        switch sqlite3_value_type(raw) {
        case SQLITE_INTEGER: return sqlite3_value_int64(raw).databaseValue
        case SQLITE_FLOAT: return sqlite3_value_double(raw).databaseValue
        case SQLITE_TEXT:
            // The pointer first, then its length, as SQLite asks.
            guard let text = sqlite3_value_text(raw) else { return "".databaseValue }
            let count = Int(sqlite3_value_bytes(raw))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self).databaseValue
        case SQLITE_BLOB:
            guard let bytes = sqlite3_value_blob(raw) else { return Data().databaseValue }
            return Data(bytes: bytes, count: Int(sqlite3_value_bytes(raw))).databaseValue
        default: return .null
        }
    }

    private static func setResult(_ value: DatabaseValue, _ context: OpaquePointer) {
        switch value.storage {
        case .null: sqlite3_result_null(context)
        case .int64(let v): sqlite3_result_int64(context, v)
        case .double(let v): sqlite3_result_double(context, v)
        case .string(var v):
            v.withUTF8 { bytes in
                guard let base = bytes.baseAddress else { return sqlite3_result_text(context, "", 0, transientDestructor) }
                // Safe: same size and alignment, rebound only for the call, which copies the bytes. Not a fast
                // path: it hands SQLite the string's own UTF-8 with its length, so a NUL inside is kept.
                base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
                    sqlite3_result_text(context, text, Int32(bytes.count), transientDestructor)
                }
            }
        case .blob(let v):
            v.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return sqlite3_result_zeroblob(context, 0) }
                sqlite3_result_blob(context, base, Int32(bytes.count), transientDestructor)
            }
        }
    }
}

/// SQLite's "copy the bytes now" destructor.
// SQLITE_TRANSIENT, which C spells as the cast of -1: SQLite copies the result before the call returns.
// Not a fast path: the macro does not import into Swift, so it is spelled here as C spells it.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
