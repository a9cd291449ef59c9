import Foundation
import GRDB

/// The primary keys a residual predicate kept (``ResidualQuery``), as one SQL condition on `t0.Z_PK`: a request
/// the server cannot filter alike (dictionary results, aggregates, a batch update) runs on the server restricted
/// to them, so grouping, aggregates and the update keep their SQL meaning. PostgreSQL only (SQLite never has a
/// residual).
package struct ResidualKeySelection: Sendable {
    /// The keys, in the order they were read.
    package let keys: [Int64]

    /// The keys `predicate` selects among `entity`'s rows (its sub-entities' too with `includesSubentities`),
    /// read through the residual path; nil when `store`'s SQL says the predicate alone (always on SQLite).
    ///
    /// - Throws: ``QueryLanguageError`` for a predicate the model cannot answer; what reading the narrowed rows
    ///   and evaluating the residual throw (``ResidualQuery/rows(of:cancellation:)``).
    package static func selecting(store: any StoreBackend, model: ManagedObjectModel, entity: EntityDescription,
                                  predicate: QueryPredicate?, includesSubentities: Bool) throws -> ResidualKeySelection? {
        guard store.dialect == .postgreSQL else { return nil }
        let query = try StoreQuery.fetch(store: store, model: model, entity: entity, predicate: predicate, sortDescriptors: [],
                                         includesSubentities: includesSubentities, limit: 0, offset: 0)
        guard query.residual?.predicate != nil else { return nil }
        return ResidualKeySelection(keys: try query.readPrimaryKeys())
    }

    /// `t0.Z_PK = ANY(CAST(? AS BIGINT[]))` with the keys as one bound array literal (`{1,2,3}`): one parameter
    /// whatever their number (a statement takes at most 65,535), and one plan.
    var condition: (sql: String, arguments: [DatabaseValue]) {
        ("t0.Z_PK = ANY(CAST(? AS BIGINT[]))", [("{" + keys.map(String.init).joined(separator: ",") + "}").databaseValue])
    }
}
