import Foundation
import OpenCoreData
@testable import OpenCoreDataPostgreSQL

// What this target checks, for any bytes given (as UTF-8, invalid sequences replaced) as the text of a
// `postgresql://` URL, the form `DATABASE_URL` and `ocd` take:
// - `PostgreSQLStoreConfiguration(url:)` returns a configuration or throws a `StoreError.invalidURL`, never
//   traps or throws another error;
// - a configuration it returns is safe to send: host, user, database, schema and application name (the
//   startup message's parameters, NUL-terminated) hold no NUL or other control character, the password no
//   NUL, the port is 1–65535, the pool size 1–100, the timeouts positive and finite;
// - an error's description never shows the URL's password (when it has one of 4 or more characters), under
//   any of the readings below of where the password is.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

func checkPostgreSQLURL(_ data: Data) {
    let text = String(decoding: data, as: UTF8.self)
    let configuration: PostgreSQLStoreConfiguration
    do {
        configuration = try PostgreSQLStoreConfiguration(url: text)
    } catch let error as StoreError {
        guard case .invalidURL = error else { fuzzFailure("threw \(error), not StoreError.invalidURL") }
        checkNoPasswordShown(in: error, for: text)
        return
    } catch {
        fuzzFailure("threw \(type(of: error)), not a StoreError: \(error)")
    }
    var parameters = [("host", configuration.host), ("user", configuration.username),
                      ("database", configuration.database), ("application_name", configuration.applicationName)]
    if let schema = configuration.schema { parameters.append(("schema", schema)) }
    for (name, value) in parameters where value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
        fuzzFailure("accepted \(name) \(value.debugDescription) with a NUL or control character")
    }
    if configuration.host.isEmpty || configuration.username.isEmpty || configuration.database.isEmpty {
        fuzzFailure("accepted an empty host, user or database")
    }
    if configuration.password?.unicodeScalars.contains("\0") == true { fuzzFailure("accepted a password with a NUL") }
    if !(1...65_535).contains(configuration.port) { fuzzFailure("accepted port \(configuration.port)") }
    if !(1...100).contains(configuration.poolSize) { fuzzFailure("accepted pool size \(configuration.poolSize)") }
    if !(configuration.connectTimeout > 0 && configuration.connectTimeout.isFinite) {
        fuzzFailure("accepted connect timeout \(configuration.connectTimeout)")
    }
    if let timeout = configuration.queryTimeout, !(timeout > 0 && timeout.isFinite) {
        fuzzFailure("accepted query timeout \(timeout)")
    }
    if let schema = configuration.schema, !PostgreSQLStoreConfiguration.isSchemaName(schema) {
        fuzzFailure("accepted schema \(schema.debugDescription), not a plain name")
    }
}

/// Fails when `error`'s description (what a log or an alert shows) holds the password of `text`.
///
/// Readers disagree on where a malformed URL's password is, so every reading is checked: RFC 3986's (the
/// authority ends at the first `/`, `?` or `#`; the user information at its last `@`) and libpq's (the user
/// information ends at the first `@` before any `/`), each from the first `://` on; the password is what
/// follows the first `:` of the user information, as written and percent-decoded. Delimiters are found among
/// unicode scalars, as URL readers find them among bytes: a combining mark after `/`, `:` or `@` makes another
/// `Character` of it, not another delimiter. A password whose text the description holds for another reason is
/// not a leak: when it also appears elsewhere in the URL, as written or percent-decoded (a parameter value the
/// error quotes decoded), or when the description of the same URL with the password replaced by other letters
/// holds it too (a known parameter's name, the `***` of the redaction).
func checkNoPasswordShown(in error: StoreError, for text: String) {
    let shown = error.description
    let scalars = Array(text.unicodeScalars)
    for span in passwordSpans(in: scalars) {
        let written = string(scalars[span])
        let candidates = [written, written.removingPercentEncoding].compactMap { $0 }.filter { $0.unicodeScalars.count >= 4 }
        let before = string(scalars[..<span.lowerBound]), after = string(scalars[span.upperBound...])
        for password in Set(candidates) where holds(shown, password) {
            let elsewhere = before + "\u{1}" + after
            if holds(elsewhere, password) || holds(percentDecoded(elsewhere), password) { continue }
            let neutral = before + String(repeating: "x", count: span.count) + after
            if holds(description(ofParsing: neutral), password) { continue }
            fuzzFailure("the error shows the password \(password.debugDescription): \(shown.debugDescription)")
        }
    }
}

/// Whether `text` holds `part`, compared scalar by scalar. Not Foundation's `contains`, which on Linux lets a
/// part's trailing NULs match past the end of the text ("r\0\0" is found in any text ending in "r"), nor
/// `Character`s, which would miss a part that starts with a combining mark.
private func holds(_ text: String, _ part: String) -> Bool {
    Array(text.unicodeScalars).firstRange(of: Array(part.unicodeScalars)) != nil
}

/// `text` with every valid `%XX` escape decoded (as UTF-8, invalid sequences replaced) and the rest kept, where
/// `removingPercentEncoding` gives up on the whole text for one bad escape.
private func percentDecoded(_ text: String) -> String {
    var bytes: [UInt8] = []
    let utf8 = Array(text.utf8)
    var index = 0
    while index < utf8.count {
        if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
           let value = UInt8(String(decoding: utf8[index + 1...index + 2], as: UTF8.self), radix: 16) {
            bytes.append(value)
            index += 3
        } else {
            bytes.append(utf8[index])
            index += 1
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// What parsing `text` says when it fails; empty when it succeeds.
private func description(ofParsing text: String) -> String {
    do {
        _ = try PostgreSQLStoreConfiguration(url: text)
        return ""
    } catch {
        return "\(error)"
    }
}

/// Where the password is among `scalars` under each reading (see ``checkNoPasswordShown(in:for:)``).
func passwordSpans(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
    guard let schemeEnd = scalars.firstRange(of: Array("://".unicodeScalars)) else { return [] }
    let rest = scalars[schemeEnd.upperBound...]
    var userInfos: [ArraySlice<Unicode.Scalar>] = []
    // RFC 3986: authority up to the first '/', '?' or '#'; user information up to its last '@'.
    let authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
    if let at = authority.lastIndex(of: "@") { userInfos.append(authority[..<at]) }
    // libpq: user information up to the first '@' before any '/'.
    if let stop = rest.firstIndex(where: { $0 == "@" || $0 == "/" }), rest[stop] == "@" { userInfos.append(rest[..<stop]) }
    return userInfos.compactMap { userInfo in
        guard let colon = userInfo.firstIndex(of: ":"), colon + 1 < userInfo.endIndex else { return nil }
        return colon + 1..<userInfo.endIndex
    }
}

/// The text of `scalars`. (Slicing a `String` by scalar positions would round them to `Character`s.)
private func string(_ scalars: some Sequence<Unicode.Scalar>) -> String {
    var view = String.UnicodeScalarView()
    view.append(contentsOf: scalars)
    return String(view)
}

/// libFuzzer's own entry point. Newer SwiftPM links `libclang_rt.fuzzer` whole, so libFuzzer's `main` (which
/// calls this) may be the one that runs instead of `main.swift`'s driver call; both end in the same check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    checkPostgreSQLURL(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}
