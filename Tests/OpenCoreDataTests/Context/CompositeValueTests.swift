import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Composite attribute values through a real SQLite store: the whole dictionary and single elements, read
/// and written, refused when wrong, filtered and sorted on in SQL and in memory alike.
@Suite struct CompositeValueTests {
    static let model: ManagedObjectModel = try! CompositeAttributeTests.model()

    private func quakes(_ context: ManagedObjectContext, _ format: String? = nil,
                        sortedBy keys: [String] = ["code"]) throws -> [ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: "Quake")
        if let format { request.predicate = try QueryPredicate(format: format) }
        request.sortDescriptors = keys.map { QuerySortDescriptor(key: $0) }
        return try context.fetch(request)
    }

    private func codes(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { try $0.value(forKey: "code") as? String ?? "?" }
    }

    @Test func wholeDictionaryRoundTripsThroughAFreshContext() throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        let quake = try context.insertNewObject(forEntityName: "Quake")
        try quake.setValue("ak1", forKey: "code")
        // A new object starts with the elements' defaults.
        let start = try #require(try quake.value(forKey: "magnitude") as? [String: Any])
        #expect(start["richter"] as? Double == 0)
        #expect(start["scale"] as? String == "ML")
        try quake.setValue(["richter": 6.1, "scale": "Mw",
                            "source": ["agency": "USGS", "reviewed": true] as [String: Any]] as [String: Any],
                           forKey: "magnitude")
        try context.save()

        let read = try #require(try quakes(stack.freshContext()).first)
        let magnitude = try #require(try read.value(forKey: "magnitude") as? [String: Any])
        #expect(magnitude["richter"] as? Double == 6.1)
        #expect(magnitude["scale"] as? String == "Mw")
        let source = try #require(magnitude["source"] as? [String: Any])
        #expect(source["agency"] as? String == "USGS")
        #expect(source["reviewed"] as? Bool == true)
        #expect(try read.value(forKeyPath: "magnitude.source.agency") as? String == "USGS")
        #expect(try read.value(forKey: "magnitude.richter") as? Double == 6.1)

        // The columns hold the elements, one each.
        let row = try DatabaseQueue(path: stack.url.path).read { db in
            try Row.fetchOne(db, sql: "SELECT ZMAGNITUDE_RICHTER, ZMAGNITUDE_SCALE, ZMAGNITUDE_SOURCE_AGENCY, ZMAGNITUDE_SOURCE_REVIEWED FROM ZQUAKE")
        }
        #expect(row?[0] as Double? == 6.1)
        #expect(row?[1] as String? == "Mw")
        #expect(row?[2] as String? == "USGS")
        #expect(row?[3] as Int64? == 1)
    }

    @Test func singleElementIsSetThroughItsKeyPathAndNilClearsAll() throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        let quake = try context.insertNewObject(forEntityName: "Quake")
        try quake.setValue("ak2", forKey: "code")
        try quake.setValue(["richter": 4.0], forKey: "magnitude")
        try quake.setValue(4.5, forKey: "magnitude.richter")
        try context.save()
        let fresh = try stack.freshContext()
        let read = try #require(try quakes(fresh).first)
        #expect(try read.value(forKeyPath: "magnitude.richter") as? Double == 4.5)
        // Elements the dictionary leaves out are cleared: the value is replaced whole.
        #expect(try read.value(forKeyPath: "magnitude.scale") == nil)
        #expect(try read.value(forKeyPath: "magnitude.source") == nil)
        try read.setValue(nil, forKey: "magnitude")
        #expect(try read.value(forKey: "magnitude") == nil)
        try fresh.save()
        #expect(try quakes(stack.freshContext()).first?.value(forKey: "magnitude") == nil)
    }

    @Test func badValuesAreRefusedNamingEntityKeyAndElement() throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        let quake = try context.insertNewObject(forEntityName: "Quake")
        try quake.setValue(["richter": 3.0, "scale": "ML"], forKey: "magnitude")

        #expect { try quake.setValue(["richter": "strong"], forKey: "magnitude") } throws: { error in
            guard case let ObjectGraphError.compositeElementTypeMismatch(entity, key, element, _, _) = error else { return false }
            return entity == "Quake" && key == "magnitude" && element == "richter"
        }
        #expect { try quake.setValue(["scale": "ML"], forKey: "magnitude") } throws: { error in
            guard case let ObjectGraphError.missingCompositeElement(entity, key, element) = error else { return false }
            return entity == "Quake" && key == "magnitude" && element == "richter"
        }
        #expect { try quake.setValue(["richter": 1.0, "depth": 10.0], forKey: "magnitude") } throws: { error in
            guard case let ObjectGraphError.unknownCompositeElement(entity, key, element) = error else { return false }
            return entity == "Quake" && key == "magnitude" && element == "depth"
        }
        // In a nested composite, the element's path below the attribute.
        #expect { try quake.setValue(["richter": 1.0, "source": ["reviewed": true]], forKey: "magnitude") } throws: { error in
            guard case let ObjectGraphError.missingCompositeElement(_, key, element) = error else { return false }
            return key == "magnitude" && element == "source.agency"
        }
        #expect { try quake.setValue(["richter": 1.0, "source": ["agency": "X", "by": "me"]], forKey: "magnitude") } throws: { error in
            guard case let ObjectGraphError.unknownCompositeElement(_, _, element) = error else { return false }
            return element == "source.by"
        }
        #expect { try quake.setValue("6.1", forKey: "magnitude") } throws: { error in
            guard case let ObjectGraphError.typeMismatch(entity, key, _, _) = error else { return false }
            return entity == "Quake" && key == "magnitude"
        }
        // A refused value changes nothing.
        let kept = try #require(try quake.value(forKey: "magnitude") as? [String: Any])
        #expect(kept["richter"] as? Double == 3.0)
        #expect(kept["scale"] as? String == "ML")
    }

    /// Quakes with varied elements, some composites absent.
    private func insertSample(_ context: ManagedObjectContext, count: Int, seed: UInt64) throws {
        var random = InteropFixtures.SeededGenerator(seed: seed)
        let scales = ["ML", "Mw", "mb", nil]
        let agencies = ["USGS", "EMSC", "JMA"]
        for index in 0..<count {
            let quake = try context.insertNewObject(forEntityName: "Quake")
            try quake.setValue(String(format: "q%03d", index), forKey: "code")
            if Int.random(in: 0..<5, using: &random) == 0 {
                try quake.setValue(nil, forKey: "magnitude")
                continue
            }
            var value: [String: Any] = ["richter": Double(Int.random(in: 0...90, using: &random)) / 10]
            if let scale = scales.randomElement(using: &random)! { value["scale"] = scale }
            if Bool.random(using: &random) {
                value["source"] = ["agency": agencies.randomElement(using: &random)!,
                                   "reviewed": Bool.random(using: &random)] as [String: Any]
            }
            try quake.setValue(value, forKey: "magnitude")
        }
    }

    static let predicates = [
        "magnitude.richter > 4.5",
        "magnitude.richter BETWEEN {2, 6} AND magnitude.scale == 'ML'",
        "magnitude.scale == nil",
        "magnitude.source.agency BEGINSWITH 'U' OR magnitude.source.reviewed == YES",
        "NOT (magnitude.scale IN {'Mw', 'mb'})",
    ]

    @Test(arguments: predicates)
    func sqlAndInMemoryAgreeOnElementPredicatesAndSorts(format: String) throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        try insertSample(context, count: 60, seed: 25)
        let sorts = ["magnitude.richter", "magnitude.scale", "code"]
        // Unsaved, the fetch answers in memory; after the save, in SQL from a fresh context.
        let inMemory = try codes(quakes(context, format, sortedBy: sorts))
        try context.save()
        let inSQL = try codes(quakes(stack.freshContext(), format, sortedBy: sorts))
        #expect(inSQL == inMemory)
        // And both agree with evaluating the predicate on each object by hand.
        let predicate = try QueryPredicate(format: format)
        let all = try quakes(stack.freshContext())
        let descriptors = sorts.map { QuerySortDescriptor(key: $0) }
        let byHand = try all.filter { try predicate.evaluate(with: $0) }.sorted { a, b in
            for descriptor in descriptors {
                let order = try descriptor.compare(a, b)
                if order != .orderedSame { return order == .orderedAscending }
            }
            return false
        }
        #expect(try codes(byHand) == inSQL)
        #expect(!inSQL.isEmpty)
    }

    @Test func dictionaryFetchReturnsTheCompositeWholeOrItsElements() throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        try insertSample(context, count: 20, seed: 7)
        try context.save()
        let objects = try quakes(stack.freshContext())
        func request(_ keys: [String]?) -> OpenCoreData.FetchRequest<[String: Any]> {
            let request = OpenCoreData.FetchRequest<[String: Any]>(entityName: "Quake")
            request.resultType = .dictionary
            request.propertiesToFetch = keys
            request.sortDescriptors = [QuerySortDescriptor(key: "code")]
            return request
        }
        let named = try stack.context().fetch(request(["code", "magnitude", "magnitude.richter"]))
        // Every attribute, the composite as one dictionary, when no properties are named.
        let all = try stack.context().fetch(request(nil))
        #expect(named.count == objects.count && all.count == objects.count)
        for (index, object) in objects.enumerated() {
            let expected = try object.value(forKey: "magnitude") as? [String: Any]
            for row in [named[index], all[index]] {
                let magnitude = row["magnitude"] as? [String: Any]
                #expect(FoundationValueCanon.text(magnitude) == FoundationValueCanon.text(expected))
                #expect(row["code"] as? String == (try object.value(forKey: "code") as? String))
            }
            #expect(named[index]["magnitude.richter"] as? Double == (try object.value(forKeyPath: "magnitude.richter") as? Double))
            #expect(all[index].keys.allSatisfy { !$0.contains(".") })
        }
    }

    @Test func resultsControllerSortsOnAnElementAsAFetchDoes() throws {
        let stack = try TestStack(model: Self.model)
        let context = stack.context()
        try insertSample(context, count: 30, seed: 11)
        try context.save()
        let request = FetchRequest<ManagedObject>(entityName: "Quake")
        request.predicate = try QueryPredicate(format: "magnitude.richter > 2")
        request.sortDescriptors = [QuerySortDescriptor(key: "magnitude.richter", ascending: false),
                                   QuerySortDescriptor(key: "code")]
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                  sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        let shown = try codes(Array(try #require(controller.fetchedObjects)))
        #expect(shown == (try codes(context.fetch(request))))
        #expect(!shown.isEmpty)
    }

    @Test func requiredElementOfARequiredCompositeIsCheckedAtSave() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Place", properties: [
            CompositeAttributeDescription(name: "location", elements: [
                AttributeDescription(name: "latitude", type: .double, isOptional: false),
                AttributeDescription(name: "note", type: .string),
            ], isOptional: false),
        ])])
        let stack = try TestStack(model: model)
        let context = stack.context()
        _ = try context.insertNewObject(forEntityName: "Place")
        #expect { try context.save() } throws: { error in
            guard case let ObjectGraphError.validationFailed(failures) = error else { return false }
            return failures.contains { $0.entity == "Place" && $0.key == "location" }
        }
    }

    @Test func handMadeRowsInTheDocumentedLayoutReadBack() throws {
        let stack = try TestStack(model: Self.model)
        try stack.context().save()
        // Rows written with SQLite alone: columns Z + attribute + element path, in capitals, joined by `_`.
        try DatabaseQueue(path: stack.url.path).write { db in
            let entity = try #require(try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Quake'"))
            try db.execute(sql: """
                INSERT INTO ZQUAKE (Z_PK, Z_ENT, Z_OPT, ZCODE, ZMAGNITUDE_RICHTER, ZMAGNITUDE_SCALE,
                                    ZMAGNITUDE_SOURCE_AGENCY, ZMAGNITUDE_SOURCE_REVIEWED, ZMAGNITUDE_RICHTER1)
                VALUES (1, ?, 1, 'hand1', 7.25, 'Mw', 'JMA', 0, 99), (2, ?, 1, 'hand2', NULL, NULL, NULL, NULL, NULL)
                """, arguments: [entity, entity])
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_ENT = ?", arguments: [entity])
        }
        let read = try quakes(stack.freshContext())
        #expect(try codes(read) == ["hand1", "hand2"])
        let magnitude = try #require(try read[0].value(forKey: "magnitude") as? [String: Any])
        #expect(magnitude["richter"] as? Double == 7.25)
        #expect(magnitude["scale"] as? String == "Mw")
        #expect((magnitude["source"] as? [String: Any])?["agency"] as? String == "JMA")
        #expect((magnitude["source"] as? [String: Any])?["reviewed"] as? Bool == false)
        #expect(try read[0].value(forKey: "magnitude_richter") as? Int64 == 99)
        #expect(try read[1].value(forKey: "magnitude") == nil)
        #expect(try codes(quakes(stack.freshContext(), "magnitude.source.agency == 'JMA'")) == ["hand1"])
    }
}
