import Foundation
@testable import OpenCoreData

// What this target checks, for any bytes (decoded as UTF-8, invalid sequences replaced):
// - `QueryPredicate(format:argumentArray:)` and `QueryExpression(format:argumentArray:)` return or throw a
//   `QueryLanguageError`; they never trap, overflow the stack or throw another error type;
// - whatever parses prints (`predicateFormat`, `expressionFormat`) as text that parses back to an equal value;
// - evaluating it in memory and compiling it to SQL never trap (errors are fine).
// A broken property calls `fuzzFailure`, which traps, so that libFuzzer saves the input as a crash.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

/// Values for `%@`, `%K`, `%d`, `%f`… in the order a format string consumes them: one of each kind the
/// parser converts, so every specifier meets both a fitting and an unfitting argument.
func formatArguments() -> [Any] {
    [
        "name", "Émile", 42, 3.5, Date(timeIntervalSinceReferenceDate: 86_400), ["a", 2, 3.5] as [Any],
        Set([1, 2]), true, UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, Data([0, 1, 255]),
        URL(string: "https://example.com/a?b=c")!, Decimal(string: "12.75")!, NSNull(), "books.title",
        Int16(-7), UInt64.max, -0.0, Double.infinity, "a*b?c", ["x": 1] as [String: Any], "",
    ]
}

/// The object predicates are evaluated against: keys of each value type, a to-one, a to-many and an ordered
/// to-many.
nonisolated(unsafe) let sampleObject: [String: Any] = [
    "name": "Émile Zola", "age": 62, "height": 1.78, "score": Int16(7), "flag": true,
    "born": Date(timeIntervalSinceReferenceDate: -4_000_000_000), "nickname": Optional<String>.none as Any,
    "id": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, "blob": Data([1, 2, 3]),
    "price": Decimal(string: "9.99")!, "site": URL(string: "https://example.com")!,
    "address": ["city": "Paris", "zip": "75001"] as [String: Any],
    "books": [
        ["title": "Nana", "pages": 400, "price": 12.5] as [String: Any],
        ["title": "Germinal", "pages": 592, "price": 15] as [String: Any],
        ["title": "L'Assommoir", "pages": NSNull()] as [String: Any],
    ],
    "chapters": [["title": "Un", "pages": 12] as [String: Any], ["title": "Deux"] as [String: Any]],
    "tags": Set(["novelist", "french"]), "scores": [3, 1, 4, 1, 5],
]

/// Values for `$variables`.
nonisolated(unsafe) let substitutionVariables: [String: Any] = [
    "x": 1, "name": "Nana", "list": [1, 2, 3], "date": Date(timeIntervalSinceReferenceDate: 0), "none": NSNull(),
]

/// A model with the sample object's keys (`chapters` ordered), for the SQL compiler.
let sampleModel: ManagedObjectModel? = try? ManagedObjectModel {
    EntityDescription("Author") {
        Attribute("name", .string)
        Attribute("age", .integer64)
        Attribute("height", .double)
        Attribute("score", .integer16)
        Attribute("flag", .boolean)
        Attribute("born", .date)
        Attribute("nickname", .string)
        Attribute("id", .uuid)
        Attribute("blob", .binaryData)
        Attribute("price", .decimal)
        Attribute("site", .uri)
        ToOne("address", "Address", inverse: "author")
        ToMany("books", "Book", inverse: "author")
        ToMany("chapters", "Chapter", inverse: "author", ordered: true)
    }
    EntityDescription("Chapter") {
        Attribute("title", .string)
        Attribute("pages", .integer32)
        ToOne("author", "Author", inverse: "chapters")
    }
    EntityDescription("Address") {
        Attribute("city", .string)
        Attribute("zip", .string)
        ToOne("author", "Author", inverse: "address")
    }
    EntityDescription("Book") {
        Attribute("title", .string)
        Attribute("pages", .integer32)
        Attribute("price", .double)
        ToOne("author", "Author", inverse: "books")
    }
    EntityDescription("Novel", parent: "Book") {
        Attribute("genre", .string)
    }
}

func checkFormatString(_ bytes: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: bytes, as: UTF8.self)
    checkPredicate(text)
    checkExpression(text)
    checkSortKey(text)
}

private func compiler() -> PredicateSQLCompiler? {
    guard let model = sampleModel, let author = model.entitiesByName["Author"] else {
        fuzzFailure("the sample model does not build")
    }
    return PredicateSQLCompiler(model: model, entity: author)
}

private func checkPredicate(_ text: String) {
    let predicate: QueryPredicate
    do {
        predicate = try QueryPredicate(format: text, argumentArray: formatArguments())
    } catch is QueryLanguageError {
        return
    } catch {
        fuzzFailure("QueryPredicate(format:) threw \(type(of: error)), not a QueryLanguageError: \(error)")
    }
    let printed = predicate.predicateFormat
    let reparsed: QueryPredicate
    do {
        reparsed = try QueryPredicate(format: printed)
    } catch {
        fuzzFailure("predicateFormat does not parse back: \(printed.debugDescription) (\(error))")
    }
    if reparsed != predicate {
        fuzzFailure("predicateFormat parses back to a different predicate: \(printed.debugDescription) "
            + "reprints as \(reparsed.predicateFormat.debugDescription)")
    }
    if reparsed.hashValue != predicate.hashValue {
        fuzzFailure("equal predicates hash differently: \(printed.debugDescription)")
    }
    _ = try? predicate.evaluate(with: sampleObject)
    _ = try? predicate.evaluate(with: sampleObject, substitutionVariables: substitutionVariables)
    _ = try? predicate.evaluate(with: nil)
    _ = try? predicate.evaluate(with: "Émile")
    if let substituted = try? predicate.withSubstitutionVariables(substitutionVariables) {
        _ = substituted.predicateFormat
        _ = try? substituted.evaluate(with: sampleObject)
        _ = try? compiler()?.compile(predicate: substituted)
    }
    _ = try? compiler()?.compile(predicate: predicate)
}

private func checkExpression(_ text: String) {
    let expression: QueryExpression
    do {
        expression = try QueryExpression(format: text, argumentArray: formatArguments())
    } catch is QueryLanguageError {
        return
    } catch {
        fuzzFailure("QueryExpression(format:) threw \(type(of: error)), not a QueryLanguageError: \(error)")
    }
    let printed = expression.expressionFormat
    let reparsed: QueryExpression
    do {
        reparsed = try QueryExpression(format: printed)
    } catch {
        fuzzFailure("expressionFormat does not parse back: \(printed.debugDescription) (\(error))")
    }
    if reparsed != expression {
        fuzzFailure("expressionFormat parses back to a different expression: \(printed.debugDescription) "
            + "reprints as \(reparsed.expressionFormat.debugDescription)")
    }
    _ = try? expression.evaluate(with: sampleObject)
    _ = try? expression.evaluate(with: sampleObject, context: substitutionVariables)
    _ = try? expression.evaluate(with: nil)
    _ = try? compiler()?.compile(expression: expression)
    _ = try? compiler()?.compile(fetchedValue: expression)
}

private func checkSortKey(_ text: String) {
    guard text.utf8.count < 200 else { return }
    let descriptors = [QuerySortDescriptor(key: text), QuerySortDescriptor(key: text, ascending: false)]
    _ = try? compiler()?.compile(predicate: nil, sortDescriptors: descriptors)
}

/// libFuzzer's own entry point. Newer SwiftPM links `libclang_rt.fuzzer` whole, so libFuzzer's `main` (which
/// calls this) may be the one that runs instead of `main.swift`'s driver call; both end in the same check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    checkFormatString(UnsafeBufferPointer(start: bytes, count: count))
    return 0
}
