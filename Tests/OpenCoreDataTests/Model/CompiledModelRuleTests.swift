import Foundation
import Testing
@testable import OpenCoreData

/// What a compiled model archives as predicates and expressions: validation rules, fetched properties,
/// derived attributes. The same model's XML and compiled forms agree.
@Suite struct CompiledModelRuleTests {
    static let rulesXML = InteropFixtures.modelXML("""
    <entity name="Recipe" representedClassName="Recipe">
        <attribute name="title" attributeType="String" minValueString="2" maxValueString="60" regularExpressionString="[A-Z].*"/>
        <attribute name="servings" optional="YES" attributeType="Integer 16" minValueString="1" maxValueString="24"/>
        <attribute name="calories" optional="YES" attributeType="Double" minValueString="-0.5" maxValueString="9000.25"/>
        <attribute name="cost" optional="YES" attributeType="Decimal" minValueString="0"/>
        <attribute name="created" optional="YES" attributeType="Date" minDateTimeInterval="-86400" maxDateTimeInterval="900000000.5"/>
        <attribute name="searchTitle" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(title)"/>
        <attribute name="ingredientCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="ingredients.@count"/>
        <relationship name="ingredients" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Ingredient" inverseName="recipe" inverseEntity="Ingredient"/>
        <fetchedProperty name="sameTitle" optional="YES">
            <fetchRequest name="fetchedPropertyFetchRequest" entity="Recipe" predicateString="title ==[c] $FETCH_SOURCE.title AND servings &gt;= 2"/>
            <userInfo><entry key="why" value="duplicates"/></userInfo>
        </fetchedProperty>
    </entity>
    <entity name="Ingredient" representedClassName="Ingredient">
        <attribute name="name" optional="YES" attributeType="String" maxValueString="40"/>
        <relationship name="recipe" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Recipe" inverseName="ingredients" inverseEntity="Recipe"/>
        <fetchedProperty name="related" optional="YES">
            <fetchRequest name="fetchedPropertyFetchRequest" entity="Ingredient" predicateString="NOT (name BEGINSWITH[cd] &quot;x&quot;) OR recipe == nil"/>
        </fetchedProperty>
    </entity>
    """)

    private func lines(_ model: ManagedObjectModel) -> [Substring] {
        XcodeModelWriterTests.canonical(model).split(separator: "\n").sorted()
    }

    /// Limits and patterns archived as Xcode's compiler writes them (validation predicates), in Core Data's
    /// flags, or both; fetched properties with their fetch request; derived attributes with their expression.
    @Test(arguments: [CompiledModelFixture.Limits.predicates, .flags, .both])
    func rulesFetchedPropertiesAndDerivationsReadAsTheXMLGivesThem(limits: CompiledModelFixture.Limits) throws {
        let original = try ManagedObjectModel(xmlData: Self.rulesXML, source: "rules")
        let data = CompiledModelFixture.momData(original, limits: limits)
        let loaded = try ManagedObjectModel(compiledModelData: data, source: "rules.mom")
        #expect(lines(loaded) == lines(original))
        #expect(loaded.entityVersionHashesByName == original.entityVersionHashesByName)
        #expect(loaded.unreadCompiledModelKeys == [])
        let recipe = try #require(loaded.entitiesByName["Recipe"])
        let title = try #require(recipe.attributesByName["title"])
        #expect(title.minLength == 2 && title.maxLength == 60 && title.regularExpression == "[A-Z].*")
        #expect(recipe.attributesByName["created"]?.minDate == Date(timeIntervalSinceReferenceDate: -86400))
        #expect(recipe.attributesByName["searchTitle"]?.derivationExpression == (try QueryExpression(format: "canonical:(title)")))
        let sameTitle = try #require(recipe.fetchedProperty(named: "sameTitle"))
        #expect(sameTitle.entityName == "Recipe" && sameTitle.userInfo == ["why": "duplicates"] && sameTitle.isOptional)
        #expect(sameTitle.predicate == original.entitiesByName["Recipe"]?.fetchedProperty(named: "sameTitle")?.predicate)
        #expect(loaded.entitiesByName["Ingredient"]?.fetchedProperty(named: "related")?.predicate
                == original.entitiesByName["Ingredient"]?.fetchedProperty(named: "related")?.predicate)
        // Converted back to Xcode's form (`ocd model convert`), it keeps all of it.
        let converted = try XcodeModelWriterTests.roundTrip(loaded)
        #expect(lines(converted) == lines(original))
        #expect(converted.entityVersionHashesByName == original.entityVersionHashesByName)
    }

    /// The derivation enters the version hash: a compiled model that did not read it would differ.
    @Test func theDerivationMovesTheHash() throws {
        let original = try ManagedObjectModel(xmlData: Self.rulesXML, source: "rules")
        let plain = try ManagedObjectModel(compiledModelData: CompiledModelFixture.momData(original) { model in
            let searchTitle = model.entities["Recipe"]!.properties["searchTitle"] as! MomFixtureAttribute
            searchTitle.base.extraKeys["NSDerivationExpression"] = nil
        }, source: "plain.mom")
        #expect(plain.entityVersionHashesByName["Recipe"] != original.entityVersionHashesByName["Recipe"])
        #expect(plain.entitiesByName["Recipe"]?.attributesByName["searchTitle"]?.isDerived == false)
    }

    /// The validation rules are enforced as the XML form's are.
    @Test func rulesReadFromACompiledModelValidate() throws {
        let original = try ManagedObjectModel(xmlData: Self.rulesXML, source: "rules")
        let loaded = try ManagedObjectModel(compiledModelData: CompiledModelFixture.momData(original, limits: .predicates),
                                            source: "rules.mom")
        let stack = try TestStack(model: loaded)
        let context = stack.context()
        let recipe = try context.insertNewObject(forEntityName: "Recipe")
        try recipe.setValue("lowercase start", forKey: "title")
        #expect(throws: (any Error).self) { try context.save() }
        try recipe.setValue("Soup", forKey: "title")
        try recipe.setValue(Int16(30), forKey: "servings")
        #expect(throws: (any Error).self) { try context.save() }
        try recipe.setValue(Int16(4), forKey: "servings")
        try context.save()
    }

    /// Random predicates, archived as Foundation's coders write them, read back to the same predicate.
    @Test(arguments: Array(1...3) as [UInt64])
    func archivedPredicatesReadBackAsWritten(seed: UInt64) throws {
        var generator = PredicateGenerator(random: SeededGenerator(seed: seed &* 104_729))
        var archived = 0
        for _ in 0..<300 {
            let (format, arguments) = generator.predicate()
            let predicate = try QueryPredicate(format: format, argumentArray: arguments)
            guard let object = ArchivedObjectFixture.object(predicate) else { continue }
            archived += 1
            let archive = try KeyedArchive(data: ArchivedObjectFixture.archive(object))
            var walk = KeyedArchive.Walk(archive)
            let read = try ArchivedPredicate.predicate(in: archive, at: archive.topObject(), walk: &walk)
            #expect(Self.normalized(read) == Self.normalized(predicate), "\(format)")
        }
        #expect(archived > 100, "only \(archived) of 300 predicates had an archived form")
    }

    /// What an archive cannot tell apart made alike: `multiply:by:(a, 2)` and `a * 2` are one archived function,
    /// and Foundation's archiver on Linux writes equal numbers once (`2` and `2.0` share one object).
    static func normalized(_ predicate: QueryPredicate) -> QueryPredicate {
        switch predicate {
        case .constant: return predicate
        case .and(let parts): return .and(parts.map(normalized))
        case .or(let parts): return .or(parts.map(normalized))
        case .not(let inner): return .not(normalized(inner))
        case .comparison(var comparison):
            comparison.lhs = normalized(comparison.lhs)
            comparison.rhs = normalized(comparison.rhs)
            return .comparison(comparison)
        }
    }

    static func normalized(_ expression: QueryExpression) -> QueryExpression {
        switch expression {
        case .constant(.double(let value)) where value.rounded() == value && abs(value) < 1e15: return .constant(.int(Int64(value)))
        case .keyPath(let base, let components): return .keyPath(base: normalized(base), components: components)
        case .arithmetic(let op, let left, let right): return .arithmetic(op, normalized(left), normalized(right))
        case .function(let function, let arguments):
            let parts = arguments.map(normalized)
            if let op = function.arithmeticOperator, parts.count == 2 { return .arithmetic(op, parts[0], parts[1]) }
            return .function(function, parts)
        default: return expression
        }
    }

    /// Forms with no counterpart are listed, with why, and the model still loads.
    @Test func formsNotReadAreListedByName() throws {
        let original = try ManagedObjectModel(xmlData: Self.rulesXML, source: "rules")
        let data = CompiledModelFixture.momData(original, limits: .predicates) { model in
            let recipe = model.entities["Recipe"]!
            // A block predicate (no format) as a validation rule.
            let servings = recipe.properties["servings"] as! MomFixtureAttribute
            servings.base.extraKeys["NSValidationPredicates"] = NSArray(array: [MomFixtureObject(["NSBlockPredicate", "NSPredicate"])])
            servings.base.extraKeys["NSValidationWarnings"] = NSArray(array: [NSNumber(value: 1620)])
            // A custom selector operator in a fetched property's predicate: the property is left out.
            let sameTitle = recipe.properties["sameTitle"] as! MomFixtureFetchedProperty
            let custom = ArchivedObjectFixture.object(try! QueryPredicate(format: "title == 'x'"))!
            (custom.objects["NSPredicateOperator"] as! MomFixtureObject).integers["NSOperatorType"] = 11
            sameTitle.request = ArchivedObjectFixture.fetchRequest(entity: recipe, predicate: nil)
            (sameTitle.request as! MomFixtureObject).objects["NSPredicate"] = custom
            // A derivation with a filter.
            let count = recipe.properties["ingredientCount"] as! MomFixtureAttribute
            count.base.extraKeys["NSFilteringPredicate"] = ArchivedObjectFixture.object(try! QueryPredicate(format: "name != nil"))!
        }
        let loaded = try ManagedObjectModel(compiledModelData: data, source: "rules.mom")
        let unread = loaded.unreadCompiledModelKeys
        #expect(unread.count == 3, "\(unread)")
        #expect(unread.contains { $0.hasPrefix("Recipe.ingredientCount: NSFilteringPredicate 'name != nil'") }, "\(unread)")
        #expect(unread.contains { $0.hasPrefix("Recipe.sameTitle: a fetched property whose fetch request is not read") && $0.contains("NSOperatorType 11") }, "\(unread)")
        #expect(unread.contains { $0.hasPrefix("Recipe.servings: validation predicate 1 (warning 1620) not read") && $0.contains("NSBlockPredicate") }, "\(unread)")
        #expect(loaded.entitiesByName["Recipe"]?.fetchedProperty(named: "sameTitle") == nil)
        #expect(loaded.entitiesByName["Recipe"]?.attributesByName["servings"]?.minValue == nil)
    }

    /// Shared and cyclic predicate graphs are refused quickly (no hang, no unbounded text); the model loads.
    @Test func hostilePredicateGraphsAreRefused() throws {
        let original = try ManagedObjectModel(xmlData: Self.rulesXML, source: "rules")
        var shared = ArchivedObjectFixture.object(try QueryPredicate(format: "name == 'a'"))!
        for _ in 0..<48 {
            shared = MomFixtureObject(["NSCompoundPredicate", "NSPredicate"], objects: ["NSSubpredicates": NSArray(array: [shared, shared])],
                                      integers: ["NSCompoundPredicateType": 1])
        }
        let cyclic = MomFixtureObject(["NSCompoundPredicate", "NSPredicate"], integers: ["NSCompoundPredicateType": 2])
        cyclic.objects["NSSubpredicates"] = NSArray(array: [cyclic])
        for (label, predicate) in [("shared", shared), ("cyclic", cyclic)] {
            let data = CompiledModelFixture.momData(original) { model in
                let ingredient = model.entities["Ingredient"]!
                let related = ingredient.properties["related"] as! MomFixtureFetchedProperty
                related.request = ArchivedObjectFixture.fetchRequest(entity: ingredient, predicate: nil)
                (related.request as! MomFixtureObject).objects["NSPredicate"] = predicate
            }
            let loaded = try ManagedObjectModel(compiledModelData: data, source: "\(label).mom")
            #expect(loaded.unreadCompiledModelKeys.count == 1, "\(label)")
            #expect(loaded.unreadCompiledModelKeys.first?.hasPrefix("Ingredient.related: a fetched property whose fetch request is not read") == true,
                    "\(label): \(loaded.unreadCompiledModelKeys)")
        }
    }

    /// Many predicates sharing one large part of the archive share one visit allowance: the first is read,
    /// the rest are listed as not read instead of each being expanded at length.
    @Test func predicatesSharingALargePartShareOneAllowance() throws {
        let original = try ManagedObjectModel(xmlData: Self.rulesXML, source: "rules")
        var shared = ArchivedObjectFixture.object(try QueryPredicate(format: "name == 'a'"))!
        for _ in 0..<9 {
            shared = MomFixtureObject(["NSCompoundPredicate", "NSPredicate"], objects: ["NSSubpredicates": NSArray(array: [shared, shared])],
                                      integers: ["NSCompoundPredicateType": 2])
        }
        let rules = (0..<300).map { index in
            MomFixtureObject(["NSCompoundPredicate", "NSPredicate"],
                             objects: ["NSSubpredicates": NSArray(array: [ArchivedObjectFixture.object(try! QueryPredicate(format: "length > %d", index))!, shared])],
                             integers: ["NSCompoundPredicateType": 1])
        }
        let data = CompiledModelFixture.momData(original) { model in
            let name = model.entities["Ingredient"]!.properties["name"] as! MomFixtureAttribute
            name.base.extraKeys["NSValidationPredicates"] = NSArray(array: rules)
        }
        let loaded = try ManagedObjectModel(compiledModelData: data, source: "shared.mom")
        let refused = loaded.unreadCompiledModelKeys.filter { $0.contains("not read") && $0.contains("visits more than") }
        #expect(refused.count >= 298, "\(refused.count) refused of 300")
        // What comes after in the archive is listed too once the allowance is spent: never read at length.
        #expect(loaded.unreadCompiledModelKeys.allSatisfy { $0.hasPrefix("Ingredient.name: validation predicate") || $0.contains("visits more than") },
                "\(loaded.unreadCompiledModelKeys.filter { !$0.contains("visits more than") })")
    }

    /// Damaged archives holding rules, fetched properties and derivations are a ModelError or read, never a crash.
    @Test func damagedRulesNeverCrash() throws {
        let original = CompiledModelFixture.momData(try ManagedObjectModel(xmlData: Self.rulesXML, source: "rules"),
                                                    limits: .both)
        #expect(try CompiledModelFixture.refusedDamagedCopies(of: original, rounds: 400, seed: 77) > 0)
    }
}
