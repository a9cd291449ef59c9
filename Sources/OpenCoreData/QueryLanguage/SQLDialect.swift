/// The SQL a ``PredicateSQLCompiler`` writes, as one database spells it.
///
/// One compiler serves every store. Each place where databases differ (booleans, `IS` against
/// `IS NOT DISTINCT FROM`, where NULLs sort, the functions that stand in for Swift code, what a strictly typed
/// database refuses) is a requirement here, so the compiler never asks which database it writes for. A new
/// backend brings its dialect and its session (docs/ARCHITECTURE.md, "Adding a backend").
///
/// The hooks that compile a construct get the ``CompilationContext`` they run in, to compile their operands
/// and to name what they refuse.
package protocol SQLDialect: Sendable {
    /// The database's name, as refusals quote it ("SQLite", "PostgreSQL").
    var name: String { get }

    /// Whether the dialect may refuse a construct (``QueryDialectRefusal``) that memory answers, leaving it to
    /// the app (``ResidualQuery``). False when every construct compiles.
    var mayRefuseConstructs: Bool { get }

    /// The literal for a constant predicate.
    func boolean(_ value: Bool) -> String

    /// The operator for "equal, NULL equal to NULL", or its negation, with a space on either side.
    func nullSafeEquality(negated: Bool) -> String

    /// `lhs` equal to `rhs` with nil equal to nil (`rhs` is never the NULL literal).
    func equality(_ lhs: SQLFragment, _ rhs: SQLFragment) -> SQLFragment

    /// What goes between `LIMIT n` (or nothing, for no limit) and ` OFFSET m`: some databases need a limit
    /// before an offset.
    func limitBeforeOffset(limit: Int) -> String

    /// How a join table is joined to its member table when the join condition is in the WHERE clause.
    var joinWithoutCondition: String { get }

    /// A random number in [0, 1), new for each row.
    var randomNumber: String { get }

    /// Refuses text about to be bound that the database cannot hold.
    ///
    /// - Throws: ``QueryDialectRefusal`` for text the database cannot take.
    func checkBoundText(_ text: String, in context: CompilationContext) throws

    /// Refuses operands the database cannot compute on as numbers (arithmetic, sums) where memory can.
    ///
    /// - Throws: ``QueryDialectRefusal`` (`operandKind`).
    func requireNumbers(_ operands: [QueryExpression], in context: CompilationContext) throws

    /// Refuses a comparison of two kinds the database cannot compare where memory answers "not equal".
    ///
    /// - Throws: ``QueryDialectRefusal`` (`operandKind`).
    func requireComparableKinds(_ left: QueryExpression, _ right: QueryExpression, in context: CompilationContext) throws

    /// Refuses a conditional (`TERNARY`) whose branches may differ in kind where the database needs one.
    ///
    /// - Throws: ``QueryDialectRefusal`` (`operandKind`).
    func requireSingleKind(_ expression: QueryExpression, in context: CompilationContext) throws

    /// A comparison SQL's own operators do not answer as memory does: string operators, `[cd]` options,
    /// `MATCHES`, mixed kinds.
    ///
    /// - Throws: ``QueryDialectRefusal`` for a comparison the dialect cannot answer as memory does.
    func comparison(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                    _ lhs: SQLFragment, _ rhs: SQLFragment, operands: (QueryExpression, QueryExpression)?,
                    in context: CompilationContext) throws -> SQLFragment

    /// `lhs op rhs` for `+ - * / **`, as memory computes it.
    ///
    /// - Throws: ``QueryLanguageError`` for operands that do not compile; ``QueryDialectRefusal``.
    func arithmetic(_ op: QueryExpression.ArithmeticOperator, _ lhs: QueryExpression, _ rhs: QueryExpression,
                    in scope: SQLScope, context: CompilationContext) throws -> SQLFragment

    /// `CAST(operand, type)` as memory converts.
    ///
    /// - Throws: ``QueryLanguageError`` for an operand that does not compile; ``QueryDialectRefusal``.
    func cast(_ operand: QueryExpression, to type: QueryCastType, in scope: SQLScope,
              context: CompilationContext) throws -> SQLFragment

    /// `abs:(operand)`.
    ///
    /// - Throws: ``QueryLanguageError`` for an operand that does not compile; ``QueryDialectRefusal``.
    func absoluteValue(_ operand: QueryExpression, in scope: SQLScope, context: CompilationContext) throws -> SQLFragment

    /// A function that is not an aggregate, arithmetic, `now`, `random` or `abs` (`uppercase:`, `sqrt:`, …).
    ///
    /// - Throws: ``QueryLanguageError`` for arguments that do not compile; ``QueryDialectRefusal``.
    func function(_ function: QueryFunction, _ arguments: [QueryExpression], in scope: SQLScope,
                  context: CompilationContext) throws -> SQLFragment

    /// The average of `value` over the rows it aggregates (`AVG(v)`), in double precision as memory computes
    /// it; of its distinct values with `distinct`.
    func average(of value: SQLFragment, distinct: Bool) -> SQLFragment

    /// The median of column `v` of the rows `values` (a subquery in FROM, with its alias) holds: the middle
    /// number or the mean of the middle two, as memory computes it.
    func median(ofValuesIn values: SQLFragment) -> SQLFragment

    /// The median of `member` over the rows of `from` that meet `condition`, a scalar subquery.
    func median(of member: SQLFragment, distinct: Bool, from: String, where condition: String) -> SQLFragment

    /// Refuses a collection operator (`@sum`, `@avg`, `@median`, `@min`, `@max`) over members of `kind` where the
    /// database's answer differs from memory's.
    ///
    /// - Throws: ``QueryDialectRefusal`` (`operandKind`).
    func requireAggregatable(_ collectionOperator: String, of kind: OperandKind, in context: CompilationContext) throws

    /// `{a, b, c}[position]` for a position read from the row.
    ///
    /// - Throws: ``QueryLanguageError`` for members that do not compile; ``QueryDialectRefusal``.
    func literalIndex(_ members: [QueryExpression], _ position: QueryExpression, whole: QueryExpression,
                      in scope: SQLScope, context: CompilationContext) throws -> SQLFragment

    /// An aggregate over the fetched rows (`sum:`, `count:`, `min:`, `max:`, `average:`, `median:` of a key
    /// path): a dictionary fetch's column, or an expression's fetched value. `sumInDoublePrecision` asks for a
    /// sum as a double, 0.0 over no rows (a dictionary column, as SQLite's `TOTAL`).
    ///
    /// - Throws: ``QueryDialectRefusal`` naming `expression` for an operand it cannot aggregate as memory does.
    func rowAggregate(_ function: QueryFunction, of operand: QueryExpression, _ argument: SQLFragment,
                      expression: QueryExpression, sumInDoublePrecision: Bool,
                      in context: CompilationContext) throws -> SQLFragment

    /// One ORDER BY term for `value`, sorted as `descriptor` says and as memory sorts (nil first ascending).
    ///
    /// - Throws: ``QueryDialectRefusal`` (`sortComparator`) for a comparison the database cannot order alike.
    func ordering(_ value: SQLFragment, by descriptor: QuerySortDescriptor, in context: CompilationContext) throws -> SQLFragment

    // MARK: Migration statements (``MigrationPlan``)

    /// A name the library made (``StoreSchema`` or the migration planner's prefixes), quoted.
    func quotedName(_ name: String) -> String
    /// The schema temporary tables live in (`temp.name`).
    var temporarySchema: String { get }
    /// Whether an index on a temporary table is created under the temporary schema's name, or without one
    /// (beside its table, refusing a schema in the index's name).
    var qualifiesTemporaryIndexes: Bool { get }
    /// The scalar function giving the largest of its arguments.
    var greatest: String { get }
    /// The type an integer is cast to when it becomes a double.
    var doubleType: String { get }
    /// A NULL where a key or an order number is expected, typed as a number where a bare NULL would not be.
    var nullNumber: String { get }
    /// Whether a subquery in `FROM` needs an alias.
    var aliasesSubqueries: Bool { get }
    /// The column definition for a column SQLite declares as `type` (`INTEGER PRIMARY KEY`, `VARCHAR`, …), as a
    /// fresh store of the dialect declares it.
    func columnDefinition(forSQLiteType type: String) -> String
    /// The same for the columns of `Z_PRIMARYKEY`, which a fresh store may declare otherwise.
    func bookkeepingColumnDefinition(forSQLiteType type: String) -> String
}

extension QueryFunction {
    /// The functions that aggregate over the fetched rows when applied to a key path
    /// (``SQLDialect/rowAggregate(_:of:_:expression:sumInDoublePrecision:in:)``).
    static let rowAggregates: Set<QueryFunction> = [.sum, .count, .min, .max, .average, .median]
}
