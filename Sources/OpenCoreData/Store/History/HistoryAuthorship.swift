import Foundation

/// Who is committing: the context's author and name, set around a save or a batch request so the store's
/// history can say who made each transaction without every write path passing them along.
package struct HistoryAuthorship: Sendable {
    package var author: String?
    package var contextName: String?

    @TaskLocal package static var current = HistoryAuthorship()
}
