import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Writing change sets to a real server: every table holds exactly what the SQLite store holds after the same
/// change sets, versions catch every concurrent edit, and key blocks never collide.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLChangeSetTests {
    /// Builds change sets for both stores from one random sequence of edits, keeping the versions each row has.
    struct Editor {
        let model: ManagedObjectModel
        var random: SplitMix
        var nextKey: [String: Int64] = [:]
        /// Live rows: table → key → (entity, version).
        var live: [String: [Int64: (entity: EntityDescription, version: Int64)]] = [:]
        var links: Set<[Int64]> = []

        init(model: ManagedObjectModel, seed: UInt64) {
            self.model = model
            random = SplitMix(seed: seed)
        }

        mutating func value(for attribute: AttributeDescription) -> StoreValue {
            if random.next(6) == 0 { return .null }
            switch attribute.attributeType {
            case .string:
                let samples = ["", "Ålesund", "naïve café", "日本語", "it's \"quoted\"", "emoji 👩‍💻", "tab\tnew\nline"]
                return samples[random.next(samples.count)].storeValue
            case .date: return [0.0, 1.5, -86_400.25, 789_000_000.125, 3.0][random.next(5)].storeValue
            case .decimal: return [3.storeValue, 2.5.storeValue, (-0.1).storeValue, 123_456_789_012_345.storeValue][random.next(4)]
            case .double: return [0.0, -1.25, 1e300, 5.0, Double.leastNonzeroMagnitude][random.next(5)].storeValue
            case .binaryData: return Data((0..<random.next(40)).map { _ in UInt8(random.next(256)) }).storeValue
            case .boolean: return Int64(random.next(2)).storeValue
            default: return Int64(random.next(2_000_000) - 1_000_000).storeValue
            }
        }

        mutating func changeSet() -> StoreChangeSet {
            var changes = StoreChangeSet()
            let schema = model.schema
            for _ in 0..<(1 + random.next(12)) {
                let entity = model.entitiesByNumber[random.next(model.entitiesByNumber.count)]
                let table = schema.table(named: entity.tableName)!
                let existing = live[table.name, default: [:]].filter { $0.value.entity === entity }
                // A row is updated or deleted at most once per change set, and not in the one inserting it
                // (the store writes updates and deletes before inserts).
                let touched = Set(changes.updates.map(\.id.primaryKey) + changes.deletes.map(\.id.primaryKey)
                    + changes.inserts.filter { $0.table == table.name }.map(\.id.primaryKey))
                let candidates = existing.keys.filter { !touched.contains($0) }.sorted()
                switch random.next(4) {
                case 0 where !candidates.isEmpty:
                    let key = candidates[random.next(candidates.count)]
                    let version = existing[key]!.version
                    changes.deletes.append(.init(id: ManagedObjectID(entity: entity, primaryKey: key, store: nil),
                                                 table: table.name, expectedVersion: version))
                    live[table.name]![key] = nil
                    links = links.filter { !$0.contains(key) || !isJoinKey(key, of: entity) }
                case 1 where !candidates.isEmpty:
                    let key = candidates[random.next(candidates.count)]
                    let version = existing[key]!.version
                    var values: [(column: Int, value: StoreValue)] = []
                    for case let attribute as AttributeDescription in entity.allProperties where random.next(2) == 0 {
                        if let index = table.columnIndexByName["Z" + attribute.name.uppercased()] {
                            values.append((index, value(for: attribute)))
                        }
                    }
                    guard !values.isEmpty else { continue }
                    changes.updates.append(.init(id: ManagedObjectID(entity: entity, primaryKey: key, store: nil), table: table.name,
                                                 expectedVersion: version, values: values.sorted { $0.column < $1.column }))
                    live[table.name]![key]!.version += 1
                default:
                    let key = nextKey[table.name, default: 1]
                    nextKey[table.name] = key + 1
                    var row = RowValues(repeating: .null, count: table.columns.count)
                    row[0] = key.storeValue
                    row[1] = Int64(entity.entityNumber).storeValue
                    row[2] = 1.storeValue
                    for case let attribute as AttributeDescription in entity.allProperties {
                        if let index = table.columnIndexByName["Z" + attribute.name.uppercased()] { row[index] = value(for: attribute) }
                    }
                    if entity.rootEntity.name == "Book", let authors = live["ZAUTHOR"], !authors.isEmpty, random.next(2) == 0 {
                        row[table.columnIndexByName["ZAUTHOR"]!] = authors.keys.sorted()[random.next(authors.count)].storeValue
                    }
                    changes.inserts.append(.init(id: ManagedObjectID(entity: entity, primaryKey: key, store: nil), table: table.name, row: row))
                    live[table.name, default: [:]][key] = (entity, 1)
                }
            }
            // Links between books and tags that exist after this change set.
            let join = schema.joinTables[0]
            let books = live["ZBOOK", default: [:]].keys.sorted(), tags = live["ZTAG", default: [:]].keys.sorted()
            if !books.isEmpty, !tags.isEmpty {
                for _ in 0..<random.next(4) {
                    let link = [books[random.next(books.count)], tags[random.next(tags.count)]]
                    let row = StoreChangeSet.JoinRow(table: join.name, sourceColumn: join.sourceColumn,
                                                     destinationColumn: join.destinationColumn, source: link[0], destination: link[1])
                    if links.contains(link), random.next(2) == 0 {
                        changes.joinDeletes.insert(row)
                        links.remove(link)
                    } else {
                        changes.joinInserts.insert(row)
                        links.insert(link)
                    }
                }
            }
            return changes
        }

        func isJoinKey(_ key: Int64, of entity: EntityDescription) -> Bool { entity.rootEntity.name == "Book" || entity.name == "Tag" }
    }

    /// SQLite's `StoreValue ==` equates 1 and 1.0; the layout's types make the storage classes equal too.
    static func same(_ a: [[StoreValue]], _ b: [[StoreValue]]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.count == $1.count && zip($0, $1).allSatisfy { $0.storage == $1.storage } }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func tablesMatchTheSQLiteStoreAfterRandomChangeSets(seed: UInt64) throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        defer { store.close() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let reference = try SQLiteStore(type: .sqlite, url: folder.appendingPathComponent("reference.sqlite"),
                                            model: model, options: StoreOptions())
        var editor = Editor(model: model, seed: seed)
        let tables = model.schema.tables.map(\.name) + model.schema.joinTables.map(\.name)
        for round in 0..<25 {
            let changes = editor.changeSet()
            try reference.apply(changes)
            try store.apply(changes)
            for table in tables {
                // Dates are doubles on PostgreSQL, where SQLite's NUMERIC affinity keeps a whole one as an integer.
                let dateColumns = Set((model.schema.table(named: table)?.columns ?? []).enumerated()
                    .filter { $0.element.sqlType == "TIMESTAMP" }.map(\.offset))
                let expected = try reference.read { db in
                    let columns = model.schema.table(named: table)?.columns.map(\.name) ?? model.schema.joinTables.first { $0.name == table }!.columns
                    return try Row.fetchAll(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY \(columns.prefix(2).joined(separator: ", "))")
                        .map { row in
                            (0..<row.count).map { index -> StoreValue in
                                let value: StoreValue = row[index]
                                guard dateColumns.contains(index), case .int64(let whole) = value.storage else { return value }
                                return Double(whole).storeValue
                            }
                        }
                }
                let actual = try store.allRows(ofTable: table)
                #expect(Self.same(expected, actual), "seed \(seed), round \(round), table \(table):\nSQLite     \(expected)\nPostgreSQL \(actual)")
            }
        }
        // Rows read by key (as faults read them) are the same as the whole table's.
        let authors = try store.allRows(ofTable: "ZAUTHOR")
        let byKey = try store.rows(ofTable: "ZAUTHOR", primaryKeys: authors.compactMap { Int64.fromStoreValue($0[0]) } + [999_999], chunk: 3)
        #expect(Self.same(authors, byKey.map(Array.init)))
    }

    /// Two instances edit one row from the same version: the second is a conflict carrying the row as the first
    /// left it; a merge policy's resolution (here: overwrite) is written in the same transaction.
    @Test func staleVersionIsAConflictAndResolutionIsWritten() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let first = try PostgreSQLStore(model: model, configuration: configuration)
        let second = try PostgreSQLStore(model: model, configuration: configuration)
        defer { first.close(); second.close() }
        let author = model.entitiesByName["Author"]!
        let table = model.schema.table(named: "ZAUTHOR")!
        let name = table.columnIndexByName["ZNAME"]!
        let id = ManagedObjectID(entity: author, primaryKey: 1, store: nil)
        var row = RowValues(repeating: .null, count: table.columns.count)
        row[0] = 1.storeValue; row[1] = Int64(author.entityNumber).storeValue; row[2] = 1.storeValue
        try first.apply(StoreChangeSet(inserts: [.init(id: id, table: "ZAUTHOR", row: row)]))

        func rename(_ to: String, force: Bool = false) -> StoreChangeSet {
            StoreChangeSet(updates: [.init(id: id, table: "ZAUTHOR", expectedVersion: 1, values: [(name, to.storeValue)], force: force)])
        }
        try first.apply(rename("first"))
        do {
            try second.apply(rename("second"))
            Issue.record("a stale version was written")
        } catch let error as StoreConflicts {
            #expect(error.conflicts.count == 1)
            #expect(error.conflicts[0].currentRow?[name] == "first".storeValue)
            #expect(error.conflicts[0].currentRow?.version == 2)
        }
        #expect(try first.rows(ofTable: "ZAUTHOR", primaryKeys: [1])[0][name] == "first".storeValue)
        let written = try second.apply(rename("second")) { conflicts in
            #expect(conflicts.map(\.id.primaryKey) == [1])
            return rename("second", force: true)
        }
        #expect(written.updates[0].force)
        let final = try first.rows(ofTable: "ZAUTHOR", primaryKeys: [1])[0]
        #expect(final[name] == "second".storeValue)
        #expect(final.version == 3)
    }

    /// Eight writers increment one counter row at the same time, each retrying on conflict with the version it
    /// reads: every increment lands exactly once (no lost update), and conflicts were seen.
    @Test func concurrentEditsNeverLoseAnUpdate() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let setup = try PostgreSQLStore(model: model, configuration: configuration)
        let author = model.entitiesByName["Author"]!
        let table = model.schema.table(named: "ZAUTHOR")!
        let counter = table.columnIndexByName["ZSCORE"]!
        let id = ManagedObjectID(entity: author, primaryKey: 1, store: nil)
        var row = RowValues(repeating: .null, count: table.columns.count)
        row[0] = 1.storeValue; row[1] = Int64(author.entityNumber).storeValue; row[2] = 1.storeValue; row[counter] = 0.0.storeValue
        try setup.apply(StoreChangeSet(inserts: [.init(id: id, table: "ZAUTHOR", row: row)]))
        setup.close()

        let writers = 8, increments = 15
        let conflicts = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        // Threads of their own (concurrentPerform runs no more at once than there are cores), each with its
        // store open before any starts, so the writers overlap however loaded the machine is.
        let stores = try (0..<writers).map { _ in try PostgreSQLStore(model: model, configuration: configuration) }
        defer { stores.forEach { $0.close() } }
        let start = DispatchSemaphore(value: 0), finished = DispatchGroup()
        for store in stores {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                start.wait()
                do {
                    for _ in 0..<increments {
                        while true {
                            let current = try store.rows(ofTable: "ZAUTHOR", primaryKeys: [1])[0]
                            let value = Double.fromStoreValue(current[counter])!
                            do {
                                try store.apply(StoreChangeSet(updates: [.init(id: id, table: "ZAUTHOR", expectedVersion: current.version,
                                                                               values: [(counter, (value + 1).storeValue)])]))
                                break
                            } catch is StoreConflicts {
                                conflicts.add(1, ordering: .relaxed)
                            }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        for _ in stores { start.signal() }
        finished.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        let check = try PostgreSQLStore(model: model, configuration: configuration)
        defer { check.close() }
        let final = try check.rows(ofTable: "ZAUTHOR", primaryKeys: [1])[0]
        #expect(Double.fromStoreValue(final[counter]) == Double(writers * increments))
        #expect(final.version == Int64(1 + writers * increments))
        #expect(conflicts.load(ordering: .relaxed) > 0, "eight writers on one row met no conflict: the test did not test")
    }

    /// Eight instances reserve keys in blocks at the same time: no key is handed out twice, and Z_MAX covers
    /// every key handed out.
    @Test func keyBlocksNeverCollide() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 1)
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let book = model.entitiesByName["Book"]!, novel = model.entitiesByName["Novel"]!
        let keys = Mutex<[Int64]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { writer in
            do {
                let store = try PostgreSQLStore(model: model, configuration: configuration, keyBlockSize: 7 + writer)
                defer { store.close() }
                var random = SplitMix(seed: UInt64(writer))
                var mine: [Int64] = []
                for _ in 0..<60 {
                    let count = 1 + random.next(12)
                    // A sub-entity draws from its root's keys (one table).
                    let first = try store.reservePrimaryKeys(root: (random.next(2) == 0 ? book : novel).rootEntity, count: count)
                    mine += (first..<first + Int64(count))
                }
                keys.withLock { $0 += mine }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let all = keys.withLock { $0 }
        #expect(Set(all).count == all.count, "a key was handed out twice")
        let check = try PostgreSQLStore(model: model, configuration: configuration)
        defer { check.close() }
        let max = try check.pool.withSession { try $0.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [Int64(book.entityNumber).storeValue]) }
        #expect(Int64.fromStoreValue(max[0][0])! >= all.max()!)
    }

    /// A value PostgreSQL cannot hold (text with U+0000) fails the whole change set cleanly: a typed error,
    /// nothing written, the store usable afterwards.
    @Test func refusedValueWritesNothing() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 1)
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        defer { store.close() }
        let tag = model.entitiesByName["Tag"]!
        let table = model.schema.table(named: "ZTAG")!
        func insert(_ key: Int64, _ label: String) -> StoreChangeSet.Insert {
            var row = RowValues(repeating: .null, count: table.columns.count)
            row[0] = key.storeValue; row[1] = Int64(tag.entityNumber).storeValue; row[2] = 1.storeValue
            row[table.columnIndexByName["ZLABEL"]!] = label.storeValue
            return .init(id: ManagedObjectID(entity: tag, primaryKey: key, store: nil), table: "ZTAG", row: row)
        }
        #expect(throws: StoreError.self) {
            try store.apply(StoreChangeSet(inserts: [insert(1, "fine"), insert(2, "nul\u{0}inside")]))
        }
        #expect(try store.allRows(ofTable: "ZTAG").isEmpty)
        try store.apply(StoreChangeSet(inserts: [insert(3, "after")]))
        #expect(try store.allRows(ofTable: "ZTAG").count == 1)
    }
}

/// A small deterministic generator (SplitMix64), so a failing seed replays.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(next() % UInt64(bound)) }
}
