import Foundation
import GRDB
import Testing
@testable import OpenCoreData

@Suite struct PredicateFetchTests {
    static func stack() throws -> TestStack {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let lists = try ["Home", "Work"].map { title -> ManagedObject in
            let list = try context.insertNewObject(forEntityName: "TodoList")
            try list.setValue(title, forKey: "title")
            return list
        }
        for index in 0..<20 {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(index)", forKey: "name")
            try item.setValue(index % 2 == 0, forKey: "done")
            try item.setValue(Int16(index % 5), forKey: "priority")
            try item.setValue(Double(index), forKey: "score")
            try item.setValue(lists[index % 2], forKey: "list")
        }
        try context.save()
        return stack
    }

    @Test func predicatesRunInSQLAndRespectPendingChanges() throws {
        let stack = try Self.stack()
        let context = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = try QueryPredicate(format: "done == NO AND list.title == %@", "Work")
        request.sortDescriptors = [QuerySortDescriptor(key: "score", ascending: false)]
        var names = try context.fetch(request).map { try $0.value(forKey: "name") as! String }
        #expect(names == ["Item 19", "Item 17", "Item 15", "Item 13", "Item 11", "Item 9", "Item 7", "Item 5", "Item 3", "Item 1"])
        #expect(try context.count(for: request) == 10)

        // An unsaved edit moves an item out, an unsaved insert comes in; both evaluated in memory.
        let first = try context.fetch(request)[0]
        try first.setValue(true, forKey: "done")
        let work = try #require(try first.value(forKey: "list") as? ManagedObject)
        let added = try context.insertNewObject(forEntityName: "Item")
        try added.setValue("New", forKey: "name")
        try added.setValue(99.0, forKey: "score")
        try added.setValue(work, forKey: "list")
        names = try context.fetch(request).map { try $0.value(forKey: "name") as! String }
        #expect(names.first == "New")
        #expect(!names.contains("Item 19"))
        #expect(try context.count(for: request) == 10)

        let toMany = FetchRequest<ManagedObject>(entityName: "TodoList")
        toMany.predicate = try QueryPredicate(format: "ANY items.score > 18.5")
        #expect(try context.fetch(toMany).map { try $0.value(forKey: "title") as! String } == ["Work"])
        toMany.predicate = try QueryPredicate(format: "items.@count == 10")
        #expect(try context.fetch(toMany).count == 1)  // Work has 11 with the unsaved insert
    }

    @Test func unknownKeysInPredicatesNameTheEntity() throws {
        let stack = try Self.stack()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = try QueryPredicate(format: "colour == 'red'")
        do {
            _ = try stack.context().fetch(request)
            Issue.record("an unknown key must be refused")
        } catch {
            #expect("\(error)".contains("Item"))
            #expect("\(error)".contains("colour"))
        }
    }

    @Test func batchUpdatesTakePredicatesAndExpressions() throws {
        let stack = try Self.stack()
        let context = stack.context()
        let request = BatchUpdateRequest(entityName: "Item")
        request.predicate = try QueryPredicate(format: "done == %@", false)
        request.propertiesToUpdate = ["done": true, "score": try QueryExpression(format: "score * 2 + 1")]
        request.resultType = .count
        #expect((try context.execute(request) as? BatchResult)?.count == 10)
        let queue = try DatabaseQueue(path: stack.url.path)
        let (undone, score) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZITEM WHERE ZDONE = 0") ?? -1,
             try Double.fetchOne(db, sql: "SELECT ZSCORE FROM ZITEM WHERE ZNAME = 'Item 3'") ?? -1)
        }
        #expect(undone == 0)
        #expect(score == 7)

        let joined = BatchUpdateRequest(entityName: "Item")
        joined.predicate = try QueryPredicate(format: "list.title == 'Home'")
        joined.propertiesToUpdate = ["priority": 9]
        joined.resultType = .count
        #expect((try context.execute(joined) as? BatchResult)?.count == 10)

        let deletes = BatchDeleteRequest(fetchRequest: {
            let fetch = FetchRequest<ManagedObject>(entityName: "Item")
            fetch.predicate = try! QueryPredicate(format: "priority == 9")
            return fetch
        }())
        deletes.resultType = .count
        #expect((try context.execute(deletes) as? BatchResult)?.count == 10)
    }

    @Test func aggregateDictionaryFetchesComputeStatistics() throws {
        let stack = try Self.stack()
        let context = stack.context()
        let request = FetchRequest<[String: Any]>(dictionariesOf: "Item")
        request.propertiesToFetch = [
            "done",
            ExpressionDescription(name: "count", expression: try QueryExpression(format: "count:(score)"), resultType: .integer64),
            ExpressionDescription(name: "average", expression: try QueryExpression(format: "average:(score)")),
            ExpressionDescription(name: "longest", expression: try QueryExpression(format: "max:(score)")),
            ExpressionDescription(name: "total", expression: try QueryExpression(format: "sum:(score)")),
        ]
        request.propertiesToGroupBy = ["done"]
        request.sortDescriptors = [QuerySortDescriptor(key: "done")]
        let rows = Array(try context.fetch(request))
        #expect(rows.count == 2)
        #expect(rows[0]["done"] as? Bool == false)
        #expect(rows[0]["count"] as? Int64 == 10)
        #expect(rows[0]["average"] as? Double == 10)
        #expect(rows[0]["longest"] as? Double == 19)
        #expect(rows[1]["total"] as? Double == 90)

        request.havingPredicate = try QueryPredicate(format: "total > 95")
        #expect(try context.fetch(request).map { $0["done"] as? Bool } == [false])

        let distinct = FetchRequest<[String: Any]>(dictionariesOf: "Item")
        distinct.propertiesToFetch = ["list.title"]
        distinct.returnsDistinctResults = true
        distinct.sortDescriptors = [QuerySortDescriptor(key: "list.title")]
        #expect(try context.fetch(distinct).map { $0["list.title"] as? String } == ["Home", "Work"])
    }

    @Test func orderedIndexesFunctionsAndMediansRunAgainstTheStore() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Playlist") {
                Attribute("name", .string)
                ToMany("songs", "Song", inverse: "playlist", ordered: true)
            }
            EntityDescription("Song") {
                Attribute("title", .string)
                Attribute("seconds", .integer32)
                ToOne("playlist", "Playlist", inverse: "songs")
            }
        }
        let stack = try TestStack(model: model)
        let context = stack.context()
        var songs: [String: ManagedObject] = [:]
        for (title, seconds) in [("a", 180), ("b", 240), ("c", 200), ("d", 95)] {
            let song = try context.insertNewObject(forEntityName: "Song")
            try song.setValue(title, forKey: "title")
            try song.setValue(Int32(seconds), forKey: "seconds")
            songs[title] = song
        }
        var playlists: [String: ManagedObject] = [:]
        for (name, titles) in [("Mix", ["c", "a", "b"]), ("Solo", ["d"]), ("Empty", [])] {
            let playlist = try context.insertNewObject(forEntityName: "Playlist")
            try playlist.setValue(name, forKey: "name")
            try playlist.setValue(titles.compactMap { songs[$0] }, forKey: "songs")
            playlists[name] = playlist
        }
        try context.save()

        func names(_ format: String, in context: ManagedObjectContext) throws -> [String] {
            let request = FetchRequest<ManagedObject>(entityName: "Playlist")
            request.predicate = try QueryPredicate(format: format)
            request.sortDescriptors = [QuerySortDescriptor(key: "name")]
            let fetched = try context.fetch(request).map { try $0.value(forKey: "name") as! String }
            // The same predicate evaluated in memory on the fetched objects selects the same playlists.
            let all = FetchRequest<ManagedObject>(entityName: "Playlist")
            all.sortDescriptors = [QuerySortDescriptor(key: "name")]
            let evaluated = try context.fetch(all).filter { try request.predicate!.evaluate(with: $0) }
                .map { try $0.value(forKey: "name") as! String }
            #expect(fetched == evaluated, "\(format)")
            return fetched
        }
        let reader = stack.context()
        #expect(try names("songs[FIRST].title == 'c'", in: reader) == ["Mix"])
        #expect(try names("songs[LAST].seconds > 200", in: reader) == ["Mix"])
        #expect(try names("songs[1].title == 'a'", in: reader) == ["Mix"])
        #expect(try names("songs.title[2] == 'b'", in: reader) == ["Mix"])
        #expect(try names("songs[5] == nil", in: reader) == ["Empty", "Mix", "Solo"])
        #expect(try names("songs[SIZE] == 0", in: reader) == ["Empty"])
        #expect(try names("count:(songs) == songs.@count AND songs[SIZE] >= 1", in: reader) == ["Mix", "Solo"])
        #expect(try names("median:(songs.seconds) == 200", in: reader) == ["Mix"])
        #expect(try names("TERNARY(songs[SIZE] > 1, 'long', 'short') == 'short'", in: reader) == ["Empty", "Solo"])
        #expect(try names("uppercase:(name) == 'MIX' OR modulus:by:(length:(name), 2) == 1", in: reader) == ["Empty", "Mix"])
        #expect(try names("'b' IN songs.@distinctUnionOfObjects.title", in: reader) == ["Mix"])

        // Reordering moves the order column, not the rows.
        try playlists["Mix"]?.setValue(["b", "c", "a"].compactMap { songs[$0] }, forKey: "songs")
        try context.save()
        #expect(try names("songs[FIRST].title == 'b' AND songs[LAST].title == 'a'", in: stack.context()) == ["Mix"])

        let medians = FetchRequest<[String: Any]>(dictionariesOf: "Song")
        medians.propertiesToFetch = [
            ExpressionDescription(name: "median", expression: try QueryExpression(format: "median:(seconds)")),
            ExpressionDescription(name: "viaFunction", expression: try QueryExpression(format: "FUNCTION(seconds, 'median:')")),
        ]
        let row = try #require(Array(try stack.context().fetch(medians)).first)
        #expect(row["median"] as? Double == 190)
        #expect(row["viaFunction"] as? Double == 190)

        let unordered = FetchRequest<ManagedObject>(entityName: "Song")
        unordered.predicate = try QueryPredicate(format: "playlist.songs[FIRST].title == 'b'")
        #expect(Set(try stack.context().fetch(unordered).map { try $0.value(forKey: "title") as! String }) == ["a", "b", "c"])
    }
}
