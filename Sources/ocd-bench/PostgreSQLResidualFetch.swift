import Foundation
import OpenCoreData

/// `pg-fetch-residual`: a fetch whose predicate PostgreSQL cannot say alike (`[cd]`, answered in the app by
/// `ResidualQuery`) ANDed with one it can (a range the server narrows with), against postgres-nio reading the
/// narrowed rows and folding and filtering them in Swift the same way.
enum PostgreSQLResidualFetch {
    /// `[cd]` folds case and diacritics (Î matches I): the server cannot say it, so it is the residual.
    static let folded = "ÎTEM 1"
    /// The server's part: `category < 10`, a fifth of the items.
    static let categoryBound: Int64 = 10
    static let predicate = "name CONTAINS[cd] '\(folded)' AND category < \(categoryBound)"

    static let scenario = PostgreSQLScenario(
        name: "pg-fetch-residual", targetRatio: 2.0,
        summary: "Fetch the items with `\(predicate)` ([cd] is answered in the app on the rows category < 10 narrows, N/5), read each name. Raw: SELECT every column WHERE ZCATEGORY < $1 into structs, then the names filtered in Swift with range(of:options: [.caseInsensitive, .diacriticInsensitive])."
    ) { size, fixtures in
        let schema = try fixtures.populated(size: size)
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(schema)
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try QueryPredicate(format: predicate)
            return {
                let context = fixtures.makeContext(coordinator)
                return try context.performAndWait {
                    checksum(try context.fetch(request).map { try $0.value(forKey: "name") as? String })
                }
            }
        }, raw: {
            let db = try fixtures.raw(schema)
            let category = fixtures.itemTable.columns["category"]!
            return {
                let narrowed = try db.run("SELECT \(RawPostgreSQLItem.columns) FROM ZITEM WHERE \(category) < $1",
                                          [categoryBound.storeValue]).rows.map(RawPostgreSQLItem.init)
                return checksum(narrowed.map(\.name).filter { name in
                    name?.range(of: folded, options: [.caseInsensitive, .diacriticInsensitive]) != nil
                })
            }
        }, note: "category < \(categoryBound) narrows to \(size / 5) of \(size); [cd] keeps the names holding 'item 1'")
    }

    /// The number of names plus their lengths, so both sides must keep the same rows.
    static func checksum(_ names: [String?]) -> Int {
        names.reduce(names.count) { $0 &+ ($1?.utf8.count ?? 0) }
    }
}
