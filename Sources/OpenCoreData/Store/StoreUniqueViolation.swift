import Foundation

/// A save refused by one of the store's unique indexes (the model's uniqueness constraints), which happens
/// when another process wrote the same values after the save looked for them: the store's own words for it,
/// turned by the saving context into the ``ObjectGraphError/validationFailed(_:)`` it gives on SQLite (a
/// ``ValidationFailure`` with ``ValidationFailure/Rule/uniquenessViolation`` per object, naming its entity and
/// the constraint's keys).
///
/// Thrown by a store whose errors are not SQLite's (PostgreSQL, SQLSTATE 23505); SQLite's
/// `SQLITE_CONSTRAINT` names the same columns in its message.
package struct StoreUniqueViolation: Error, CustomStringConvertible {
    /// The index's columns, each as `TABLE.COLUMN` in the layout's names (`ZTAG.ZLABEL`).
    package let columns: [String]
    /// The store's message.
    package let message: String

    /// A violation of the unique index over `columns` (`TABLE.COLUMN` each), with the store's `message`.
    package init(columns: [String], message: String) {
        self.columns = columns
        self.message = message
    }

    /// The store's message and the columns.
    package var description: String { "\(message) (\(columns.joined(separator: ", ")))" }
}
