import Foundation
import GRDB
@testable import OpenCoreData

/// Checks the promises a store file must keep whatever happened to the process that wrote it:
/// SQLite's own integrity, and the invariants of Core Data's layout for a given model.
/// Returns one message per broken invariant (empty: all hold).
enum StoreInvariants {
    static func violations(at url: URL, model: ManagedObjectModel) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        return try queue.read { db in try violations(in: db, model: model) }
    }

    static func violations(in db: Database, model: ManagedObjectModel) throws -> [String] {
        var problems: [String] = []
        let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
        if integrity != ["ok"] { problems.append("integrity_check: \(integrity.joined(separator: "; "))") }

        // Z_PRIMARYKEY: one row per entity, and Z_MAX never behind a key in use (else keys get reused).
        var maxByEntity: [Int: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") { maxByEntity[row[0]] = row[1] }
        for entity in model.entitiesByNumber where entity.superentity == nil {
            guard let maximum = maxByEntity[entity.entityNumber] else {
                problems.append("Z_PRIMARYKEY has no row for \(entity.name)")
                continue
            }
            let table = entity.tableName
            let highest = try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM \(table)") ?? 0
            if highest > maximum { problems.append("\(table): Z_PK \(highest) > Z_PRIMARYKEY.Z_MAX \(maximum)") }
            let numbers = entity.entityNumbersIncludingSubentities.map(String.init).joined(separator: ",")
            let strays = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table) WHERE Z_ENT NOT IN (\(numbers)) OR Z_OPT IS NULL OR Z_OPT < 1") ?? 0
            if strays > 0 { problems.append("\(table): \(strays) row(s) with a wrong Z_ENT or Z_OPT") }
        }

        // Relationships: every key points at a row that exists; one-to-one pairs agree on both sides.
        for entity in model.entitiesByNumber {
            for (slot, property) in entity.allProperties.enumerated() {
                guard let relationship = property as? RelationshipDescription,
                      let destination = relationship.destinationEntity else { continue }
                let source = entity.tableName, target = destination.tableName
                let numbers = entity.entityNumbersIncludingSubentities.map(String.init).joined(separator: ",")
                switch entity.storage[slot] {
                case .toOne(let column, _, _, _):
                    let dangling = try Int.fetchOne(db, sql: """
                        SELECT COUNT(*) FROM \(source) s WHERE s.Z_ENT IN (\(numbers)) AND s.\(column) IS NOT NULL
                        AND NOT EXISTS (SELECT 1 FROM \(target) d WHERE d.Z_PK = s.\(column))
                        """) ?? 0
                    if dangling > 0 { problems.append("\(entity.name).\(relationship.name): \(dangling) dangling key(s)") }
                    if let inverse = relationship.inverseRelationship, !inverse.isToMany,
                       case .toOne(let inverseColumn, _, _, _) = destination.storage[destination.slotByName[inverse.name]!] {
                        let mismatched = try Int.fetchOne(db, sql: """
                            SELECT COUNT(*) FROM \(source) s JOIN \(target) d ON d.Z_PK = s.\(column)
                            WHERE s.Z_ENT IN (\(numbers)) AND (d.\(inverseColumn) IS NULL OR d.\(inverseColumn) != s.Z_PK)
                            """) ?? 0
                        if mismatched > 0 {
                            problems.append("\(entity.name).\(relationship.name): \(mismatched) row(s) whose inverse \(inverse.name) points elsewhere")
                        }
                    }
                case .toManyByJoinTable(let join):
                    let orphans = try Int.fetchOne(db, sql: """
                        SELECT COUNT(*) FROM \(join.name) j
                        WHERE NOT EXISTS (SELECT 1 FROM \(source) s WHERE s.Z_PK = j.\(join.sourceColumn))
                           OR NOT EXISTS (SELECT 1 FROM \(target) d WHERE d.Z_PK = j.\(join.destinationColumn))
                        """) ?? 0
                    if orphans > 0 { problems.append("\(join.name): \(orphans) join row(s) naming a missing object") }
                    let duplicates = try Int.fetchOne(db, sql: """
                        SELECT COUNT(*) FROM (SELECT 1 FROM \(join.name) GROUP BY \(join.sourceColumn), \(join.destinationColumn) HAVING COUNT(*) > 1)
                        """) ?? 0
                    if duplicates > 0 { problems.append("\(join.name): \(duplicates) duplicated pair(s)") }
                case .toManyByForeignKey(let table, let column, _):
                    let dangling = try Int.fetchOne(db, sql: """
                        SELECT COUNT(*) FROM \(table) d WHERE d.\(column) IS NOT NULL
                        AND NOT EXISTS (SELECT 1 FROM \(source) s WHERE s.Z_PK = d.\(column))
                        """) ?? 0
                    if dangling > 0 { problems.append("\(entity.name).\(relationship.name): \(dangling) row(s) pointing at a missing owner") }
                default:
                    break
                }
            }
        }
        return problems
    }
}
