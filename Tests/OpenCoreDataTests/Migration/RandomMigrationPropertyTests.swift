import Foundation
import Testing
@testable import OpenCoreData

/// Property test: a random model, a random inferred change of it and random data. The store of the first
/// version, migrated, must hold what a fresh store of the second holds when filled with the data as a
/// plain Swift transformation (the reference) says the second version spells it.
@Suite struct RandomMigrationPropertyTests {
    typealias Object = MigrationFixtures.Object

    @Test(arguments: 1...30)
    func aRandomInferredChangeMigratesLikeTheReferenceSays(seed: Int) throws {
        let change = RandomInferredChange(seed: seed)
        let (old, new) = (change.old, change.new)
        func objects(_ list: [RandomInferredChange.Object]) -> [Object] {
            list.map { Object(entity: $0.entity, key: $0.key, values: $0.values, links: $0.links) }
        }
        let (oldObjects, newObjects) = (objects(change.oldObjects), objects(change.newObjects))

        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: [("V1", old.xml), ("V2", new.xml)])
        let url = directory.file("Store.sqlite"), fresh = directory.file("Fresh.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: "V1"), with: oldObjects)
        let model = try ManagedObjectModel(contentsOf: bundle)
        try InferredMigrationRuleTests.open(url, bundle: bundle)
        try MigrationFixtures.fill(fresh, model: model, with: newObjects)
        let keys = Dictionary(uniqueKeysWithValues: new.entityNames.map { ($0, "key") })
        #expect(try MigrationFixtures.dump(url, model: model, keys: keys) == MigrationFixtures.dump(fresh, model: model, keys: keys),
                "\(old.xml)\n→\n\(new.xml)")
        #expect(try MigrationFixtures.layout(url) == MigrationFixtures.layout(fresh))
    }
}
