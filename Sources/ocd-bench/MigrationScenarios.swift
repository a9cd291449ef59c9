import Foundation
import GRDB
import GRDBSQLite
@_spi(Benchmarks) import OpenCoreData

// Model migration (docs/MIGRATION.md): inferred migrations of a store of N items, against raw SQLite running
// the very statements of the migration's plan, with their bound values, in one transaction. Ours is
// `StoreMigration.migrate` whole: reading the store's version, planning, checks, the transaction.

enum MigrationScenarios {
    static let all: [Scenario] = [addAttribute, renameAttribute, rewrite]

    /// Version 1 of every bundle: the bench's Item in Xcode's format (the columns `RawBaselines.insert` fills).
    static let itemEntity = """
        <entity name="Item" syncable="YES">
            <attribute name="category" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
            <attribute name="createdAt" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
            <attribute name="done" optional="YES" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
            <attribute name="group" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
            <attribute name="name" optional="YES" attributeType="String"/>
        </entity>
        """

    /// One migration: a bundle name and version 2's entities.
    struct Change {
        var bundle: String
        var entities: String
    }

    static let adding = Change(bundle: "ItemsAdd", entities: itemEntity.replacingOccurrences(
        of: "<attribute name=\"name\"",
        with: "<attribute name=\"note\" optional=\"YES\" attributeType=\"String\"/>\n    <attribute name=\"name\""))

    static let renaming = Change(bundle: "ItemsRename", entities: itemEntity.replacingOccurrences(
        of: "<attribute name=\"name\" optional=\"YES\" attributeType=\"String\"/>",
        with: "<attribute name=\"title\" optional=\"YES\" attributeType=\"String\" elementID=\"name\"/>"))

    /// Item moves under a new parent entity: its rows move to the parent's table and get its entity numbering.
    static let reparenting = Change(bundle: "ItemsReparent", entities: """
        <entity name="Record" syncable="YES">
            <attribute name="stamp" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
        </entity>
        """ + itemEntity.replacingOccurrences(of: "<entity name=\"Item\" ", with: "<entity name=\"Item\" parentEntity=\"Record\" "))

    static let addAttribute = scenario(
        "migrate-add-attribute", target: 1.2, change: adding,
        summary: "Migrate a store of N items to a version that adds an optional String attribute (`ocd migrate`'s work: read the store's version, plan, check, run in one transaction; the inferred mapping rebuilds the table). Raw: the plan's own statements and bound values, one transaction, through SQLite's C API.")

    static let renameAttribute = scenario(
        "migrate-rename-attribute", target: 1.2, change: renaming,
        summary: "Migrate a store of N items to a version that renames `name` to `title` (renaming ID). Raw: the plan's statements, as above.")

    static let rewrite = scenario(
        "migrate-rewrite-table", target: 1.5, change: reparenting,
        summary: "Migrate a store of N items to a version that puts Item under a new parent entity Record: every row moves to ZRECORD with a new entity number, the Item table is dropped. Raw: the plan's statements, as above.")

    static func scenario(_ name: String, target: Double, change: Change, summary: String) -> Scenario {
        Scenario(name: name, targetRatio: target, summary: summary) { size, fixtures in
            let bundleURL = try bundle(for: change, in: fixtures.directory)
            let bundle = try ModelVersionBundle(contentsOf: bundleURL)
            let source = try sourceStore(size: size, bundle: bundle, fixtures: fixtures)
            func copy(_ label: String) throws -> URL {
                let url = fixtures.freshURL("\(name)-\(label)")
                try FileManager.default.copyItem(at: source, to: url)
                return url
            }
            return ScenarioRun(rows: size, ours: {
                let url = try copy("ours")
                return {
                    var statements = 0
                    try StoreMigration.migrate(storeAt: url, to: bundle) { done, _ in statements = done }
                    return statements
                }
            }, raw: {
                let url = try copy("raw")
                let plans = try StoreMigration.plan(storeAt: url, to: bundle)
                let db = try RawConnection(path: url.path)
                return { try runRaw(plans, on: db) }
            }, note: "ours = StoreMigration.migrate; raw = the same plan's statements")
        }
    }

    /// Runs every statement of `plans` in one transaction; returns how many ran (ours counts the same).
    static func runRaw(_ plans: [MigrationPlan], on db: RawConnection) throws -> Int {
        try db.execute("BEGIN IMMEDIATE")
        var count = 0
        do {
            for plan in plans {
                for step in plan.steps {
                    for (sql, arguments) in step.boundStatements {
                        let statement = try db.prepare(sql)
                        for (index, value) in arguments.enumerated() { statement.bind(Int32(index + 1), value) }
                        while try statement.step() {}
                        count += 1
                    }
                }
            }
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
        return count
    }

    /// The bundle for `change` (version 1 and version 2) in the work folder, written in Xcode's format.
    static func bundle(for change: Change, in directory: URL) throws -> URL {
        let bundle = directory.appendingPathComponent("\(change.bundle).xcdatamodeld")
        try? FileManager.default.removeItem(at: bundle)
        for (version, entities) in [("\(change.bundle)", itemEntity), ("\(change.bundle) 2", change.entities)] {
            let folder = bundle.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("""
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                \(entities)
                </model>
                """.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(change.bundle) 2.xcdatamodel</string></dict></plist>
            """.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    /// Stores of `size` items at version 1, made once per size (all bundles share version 1), checkpointed
    /// to one file; every run migrates a copy.
    private static let sources = Shared<[Int: URL]>([:])

    static func sourceStore(size: Int, bundle: ModelVersionBundle, fixtures: Fixtures) throws -> URL {
        if let url = sources.value[size], FileManager.default.fileExists(atPath: url.path) { return url }
        let url = fixtures.directory.appendingPathComponent("migration-source-\(size).sqlite")
        fixtures.remove(url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: bundle.versions[0].model)
        coordinator.remove(try coordinator.addPersistentStore(type: .sqlite, at: url))
        do {
            let db = try RawConnection(path: url.path)
            try RawBaselines.insert(db, count: size, entity: try RawBaselines.itemEntityNumber(db))
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        sources.update { $0[size] = url }
        return url
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies bound text and blobs before the call returns.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

extension RawStatement {
    /// Binds a value of a migration plan, whatever its type.
    func bind(_ index: Int32, _ value: StoreValue) {
        switch value.storage {
        case .null: sqlite3_bind_null(handle, index)
        case .int64(let integer): bind(index, integer)
        case .double(let double): bind(index, double)
        case .string(let string): bind(index, string)
        case .blob(let data):
            _ = data.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), transient) }
        }
    }
}
