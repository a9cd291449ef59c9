import Foundation
import OpenCoreData

/// The one place ocd copes with predicates not being implemented yet.
///
/// `QueryPredicate(format:)` is a placeholder that fails when a fetch or batch request uses it (the query
/// language is built on another branch, with the same names). Each use here tries the real predicate
/// first and falls back to the nearest honest alternative only on that specific refusal, so when the
/// query language lands every caller uses real predicates with no change; then delete the fallbacks.
enum PendingPredicates {
    /// Whether `error` is the placeholder's refusal (not a genuine error in a predicate).
    static func isPlaceholderRefusal(_ error: Error) -> Bool {
        "\(error)".contains("predicates are not available")
    }

    /// Fetches with `predicate`; if predicates are not implemented yet, fetches without and
    /// keeps the results `keep` accepts (an in-memory filter, only where there is no other way).
    static func fetch<T>(_ request: FetchRequest<T>, predicate: QueryPredicate, in context: ManagedObjectContext,
                         keep: (T) throws -> Bool) throws -> [T] {
        request.predicate = predicate
        do {
            return Array(try context.fetch(request))
        } catch where isPlaceholderRefusal(error) {
            request.predicate = nil
            return try Array(context.fetch(request)).filter(keep)
        }
    }

    /// A batch update restricted by `predicate`; if predicates are not implemented yet, it runs over every
    /// row instead, which is only right when the unrestricted update has the same effect (setting
    /// `done = YES` on rows that are already done changes nothing). Returns the result and whether the
    /// predicate was applied.
    static func batchUpdate(_ request: BatchUpdateRequest, predicate: QueryPredicate,
                            in context: ManagedObjectContext) throws -> (BatchResult, predicateApplied: Bool) {
        request.predicate = predicate
        do {
            guard let result = try context.execute(request) as? BatchResult else {
                throw OCDError("the batch update returned no result")
            }
            return (result, true)
        } catch where isPlaceholderRefusal(error) {
            request.predicate = nil
            guard let result = try context.execute(request) as? BatchResult else {
                throw OCDError("the batch update returned no result")
            }
            return (result, false)
        }
    }
}
