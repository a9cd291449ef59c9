import Foundation

/// The entry points requests use: compile without the entity filter (fetches add their own, since
/// `includesSubentities` decides it), and turn batch-update values into SQL.
extension PredicateSQLCompiler {
    typealias Compiled = CompiledQuery

    /// - Throws: ``QueryLanguageError`` for what the model cannot answer; ``QueryDialectRefusal`` for a
    ///   construct `dialect` cannot answer as memory does.
    static func compile(model: ManagedObjectModel, entity: EntityDescription, predicate: QueryPredicate?,
                        sortDescriptors: [QuerySortDescriptor], dialect: any SQLDialect = SQLiteDialect()) throws -> CompiledQuery {
        let compiler = PredicateSQLCompiler(model: model, entity: entity, dialect: dialect)
        return try compiler.compile(predicate: predicate, sortDescriptors: sortDescriptors, includesEntityFilter: false)
    }
}

/// Turns a batch update's new value (a constant, or an expression such as `count + 1`) into SQL for one
/// attribute, checking constants against the attribute's type before any row changes.
enum BatchValueCompiler {
    static func compile(_ value: Any, for attribute: AttributeDescription, entity: EntityDescription,
                        model: ManagedObjectModel, dialect: any SQLDialect = SQLiteDialect()) throws -> (String, [StoreValue]) {
        if let expression = value as? QueryExpression {
            if case .constant(let constant) = expression {
                return ("?", [try ValueConversion.storeValue(constant.swiftValue, for: attribute)])
            }
            let compiled = try PredicateSQLCompiler(model: model, entity: entity, dialect: dialect).compile(expression: expression)
            guard compiled.fromClause == "\(entity.tableName) t0" else {
                throw ObjectGraphError.unsupportedBatchValue(
                    entity: entity.name, key: attribute.name,
                    reason: "it reaches through a relationship; a batch update reads only the row's own columns")
            }
            return (compiled.sql, compiled.arguments)
        }
        return ("?", [try ValueConversion.storeValue(value, for: attribute)])
    }
}
