import Foundation

/// What a store does inside one read transaction: the two reads a results controller needs to agree.
/// Each store has its own (SQLite's over a GRDB connection, PostgreSQL's over a session in a
/// `REPEATABLE READ` transaction); ``StoreReadTransaction`` hands them to the layers above `Store/`.
package protocol StoreSnapshotReads {
    /// See ``StoreReadTransaction/dataToken(tables:)``.
    func dataToken(tables: [String]) throws -> String
    /// See ``StoreReadTransaction/stepRows(of:cancellation:_:)``.
    func stepRows(of query: SortKeyQuery, cancellation: CancellationFlag?, _ body: (SteppedRow) throws -> Void) throws
}

/// Several reads that must agree, run in one read transaction (one snapshot): what
/// ``StoreBackend/readInOneTransaction(_:)`` hands its closure. Valid only inside that closure. Each call
/// is made once per load (rows reach `body` as ``SteppedRow``s), so the store's reads sit behind an existential.
package struct StoreReadTransaction {
    /// The store's reads (also what ``RelatedStoredRows`` reads related rows through).
    let reads: any StoreSnapshotReads

    package init(_ reads: any StoreSnapshotReads) { self.reads = reads }

    /// A token that changes whenever the rows of `tables` may have: the store's identifier, every
    /// entity's `Z_MAX`, and each table's row count, highest key and sum of `Z_OPT` (a row changed in
    /// place bumps its `Z_OPT`). Table names come from the schema.
    ///
    /// - Throws: the store's read errors (mapped to ``StoreError`` by the enclosing read on SQLite).
    func dataToken(tables: [String]) throws -> String {
        try reads.dataToken(tables: tables)
    }

    /// Steps `query`, handing each row to `body` in order. Cancelling `cancellation` stops the statement.
    ///
    /// - Throws: ``ObjectGraphError/cancelled`` when cancelled; the store's read errors; what `body` throws.
    func stepRows(of query: SortKeyQuery, cancellation: CancellationFlag?, _ body: (SteppedRow) throws -> Void) throws {
        guard let fetch = query.residualFetch, let predicate = fetch.residual?.predicate else {
            return try reads.stepRows(of: query, cancellation: cancellation, body)
        }
        // The residual predicate is evaluated in the app on the narrowed rows of this same snapshot; only
        // the keys it admits are handed on.
        let related = RelatedStoredRows(store: fetch.store, model: fetch.model, snapshot: reads)
        var narrowed: [RowValues] = []
        let width = fetch.columnCount
        try reads.stepRows(of: SortKeyQuery(sql: fetch.rowsSQL, arguments: fetch.arguments), cancellation: cancellation) { row in
            narrowed.append(RowValues(values: (0..<width).map { row.value(at: Int32($0)) }))
        }
        // Evaluated after the statement: related rows are read on the same connection.
        var admitted = Set<Int64>()
        for object in related.batchObjects(narrowed, entity: fetch.entity) {
            if try predicate.evaluate(with: object) { admitted.insert(object.objectID.primaryKey) }
        }
        let keyColumn = query.firstKeyColumn - 1
        try reads.stepRows(of: query, cancellation: cancellation) { row in
            if admitted.contains(row.integer(at: keyColumn)) { try body(row) }
        }
    }
}
