import Foundation
import Testing
@testable import OpenCoreData

/// The case of an ``ObjectGraphError`` and its associated values (the culprit), as a mirror shows them:
/// two errors agree on it when they are the same case naming the same culprit, whatever their messages say.
func caseAndCulprit(_ error: ObjectGraphError) -> String {
    guard let child = Mirror(reflecting: error).children.first else { return "\(error)" }
    return "\(child.label ?? "?")\(child.value)"
}

/// Expects `body` to throw `expected`: the same ``ObjectGraphError`` case with the same culprit. A nil
/// `expected` accepts any ``ObjectGraphError`` (for refusals whose culprit another test checks).
func expectObjectGraphError<R>(_ expected: ObjectGraphError?, _ comment: Comment? = nil,
                               sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) {
    do {
        _ = try body()
        Issue.record("nothing was thrown; expected \(expected.map { "\($0)" } ?? "an ObjectGraphError")",
                     sourceLocation: sourceLocation)
    } catch let error as ObjectGraphError {
        guard let expected else { return }
        #expect(caseAndCulprit(error) == caseAndCulprit(expected), comment, sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(error) is not an ObjectGraphError", sourceLocation: sourceLocation)
    }
}
