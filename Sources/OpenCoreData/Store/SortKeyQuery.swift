import Foundation

/// A results controller's one query: `Z_ENT, Z_PK` (`Z_PK` alone for an entity alone in its table) and
/// the sort-key values of every row a fetch selects, in the fetch's order with the primary key last.
/// Holds no object: built on a context's queue, run on any thread.
package struct SortKeyQuery: @unchecked Sendable {
    // @unchecked Sendable: every member is an immutable value; StoreValue arguments are values.
    package let sql: String
    package let arguments: [StoreValue]
    /// The entity number of every row when the entity is alone in its table (then not selected: a
    /// narrower row for SQLite to sort).
    let soleEntityNumber: Int32?
    /// The fetch whose residual predicate (``ResidualQuery``) admits rows, when the store's SQL could not say
    /// it: ``StoreReadTransaction/stepRows(of:cancellation:_:)`` then reads the narrowed rows first, in the
    /// same transaction, and hands on only the admitted ones.
    let residualFetch: StoreQuery?
    /// The column of the first sort key (after the entity number and the primary key, or the key alone).
    var firstKeyColumn: Int32 { soleEntityNumber == nil ? 2 : 1 }

    /// The rows `query` selects (its offset and limit left out), with `keyCount` sort keys read from its
    /// compiled order.
    ///
    /// - Throws: ``FetchedResultsError/unsupportedRequest(_:)`` when the compiled order does not split
    ///   into `keyCount` expressions.
    init(selecting query: StoreQuery, keyCount: Int) throws {
        let columns = try Self.selectExpressions(orderBy: query.orderByClause, count: keyCount)
        let aloneInTable = !query.model.schema.mapping(for: query.entity).sharesTable
        soleEntityNumber = aloneInTable ? Int32(query.entity.entityNumber) : nil
        sql = (aloneInTable ? "SELECT t0.Z_PK" : "SELECT t0.Z_ENT, t0.Z_PK") + columns.map { ", " + $0 }.joined()
            + " " + query.selectionSQL
            + " ORDER BY " + (query.orderByClause.map { $0 + ", " } ?? "") + "t0.Z_PK"
        arguments = query.arguments
        residualFetch = query.residual?.predicate == nil ? nil : query
    }

    /// A plain statement stepped in a read transaction (the narrowed full rows of ``residualFetch``).
    init(sql: String, arguments: [StoreValue]) {
        self.sql = sql
        self.arguments = arguments
        soleEntityNumber = nil
        residualFetch = nil
    }

    /// The column expressions of a compiled ORDER BY clause (`t1.ZCLOSEDATE DESC` → `t1.ZCLOSEDATE`),
    /// split at top-level commas.
    ///
    /// - Throws: ``FetchedResultsError/unsupportedRequest(_:)`` without an ORDER BY for `count` keys, or
    ///   when it does not split into `count` expressions.
    static func selectExpressions(orderBy: String?, count: Int) throws -> [String] {
        guard let orderBy, count > 0 else {
            if count == 0 { return [] }
            throw FetchedResultsError.unsupportedRequest("the compiled query has no ORDER BY for the sort descriptors")
        }
        var parts: [String] = []
        var depth = 0
        var quote: Character?
        var current = ""
        for character in orderBy {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "(" {
                depth += 1
            } else if character == ")" {
                depth -= 1
            } else if character == "," && depth == 0 {
                parts.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        parts.append(current)
        let expressions = parts.map { part -> String in
            var expression = part.trimmingCharacters(in: .whitespaces)
            // PostgreSQL's orderings name where NULLs go (memory's order), before or after the direction.
            for suffix in [" NULLS FIRST", " NULLS LAST", " DESC", " ASC", " desc", " asc"] where expression.hasSuffix(suffix) {
                expression = String(expression.dropLast(suffix.count)).trimmingCharacters(in: .whitespaces)
            }
            return expression
        }
        guard expressions.count == count, !expressions.contains(where: \.isEmpty) else {
            throw FetchedResultsError.unsupportedRequest("cannot read the sort keys from ORDER BY \(orderBy)")
        }
        return expressions
    }
}
