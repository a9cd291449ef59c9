import Foundation

/// The primary keys a residual predicate kept (``ResidualQuery``), as one SQL condition on `t0.Z_PK`: a request
/// the server cannot filter alike (dictionary results, aggregates, a batch update) runs on the server restricted
/// to them, so grouping, aggregates and the update keep their SQL meaning. PostgreSQL only (SQLite never has a
/// residual).
package struct ResidualKeySelection: Sendable {
    /// The keys, in the order they were read.
    package let keys: [Int64]

    /// The keys `query` (a ``ResidualQuery/selectionQuery(store:model:entity:predicate:includesSubentities:)``)
    /// selects, read through the residual path.
    ///
    /// - Throws: what reading the narrowed rows and evaluating the residual throw
    ///   (``ResidualQuery/rows(of:cancellation:)``).
    init(reading query: StoreQuery) throws {
        keys = try query.readPrimaryKeys()
    }

    /// `t0.Z_PK = ANY(CAST(? AS BIGINT[]))` with the keys as one bound array literal (`{1,2,3}`): one parameter
    /// whatever their number (a statement takes at most 65,535), and one plan.
    var condition: (sql: String, arguments: [StoreValue]) {
        ("t0.Z_PK = ANY(CAST(? AS BIGINT[]))", [("{" + keys.map(String.init).joined(separator: ",") + "}").storeValue])
    }
}
