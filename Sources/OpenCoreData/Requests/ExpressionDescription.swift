import Foundation

/// A computed column of a dictionary fetch: a name, an expression, and the type of its value
/// (Core Data's NSExpressionDescription).
///
/// ```swift
/// let average = ExpressionDescription(name: "average", expression: try QueryExpression(format: "average:(duration)"),
///                                     resultType: .double)
/// let request = FetchRequest<[String: Any]>(dictionariesOf: "Session")
/// request.propertiesToFetch = ["kind", average]
/// request.propertiesToGroupBy = ["kind"]
/// ```
public struct ExpressionDescription: Sendable, Hashable {
    /// The key of the value in each result dictionary.
    public var name: String
    /// What to compute: an aggregate (`sum:`, `count:`, `min:`, `max:`, `average:`) or a per-row value.
    public var expression: QueryExpression
    /// The Swift type the value is returned as (see ``AttributeType``).
    public var expressionResultType: AttributeType

    /// A column `name` holding `expression`'s value, returned as `resultType`'s Swift type.
    public init(name: String, expression: QueryExpression, resultType: AttributeType = .double) {
        self.name = name
        self.expression = expression
        self.expressionResultType = resultType
    }
}
