import Foundation
import OpenCoreData
import Testing

/// `ocd migrate` and `ocd model versions` on the Shop fixture bundle.
@Suite("Demo: ocd migrate (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoMigrateTests {
    @Test func modelVersionsListsEachVersionOnALine() throws {
        let binary = try #require(OcdBinary.url)
        let bundle = try MigrationFixtures.shopBundle()
        let output = try OcdBinary.run(["model", "versions", bundle.path], binary: binary)
        #expect(output.status == 0, "\(output.stderr)")
        let versions = try ModelVersionBundle(contentsOf: bundle).versions
        #expect(output.stdout == versions.map { version in
            "\(version.name)\t\(version.model.entities.count) entities\t\(version.hashDigest)\(version.isCurrent ? "\tcurrent" : "")\n"
        }.joined())
    }

    @Test func aDryRunPrintsThePlanAndChangesNothingThenTheRunMigrates() throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.shopBundle()
        let url = directory.file("Shop.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: "Shop"),
                                   with: ShopMigrationTests.shopData(seed: 7))
        let before = try MigrationFixtures.bytes(url)

        let inspect = try OcdBinary.run(["inspect", url.path, "--model", bundle.path], binary: binary)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.contains("version 'Shop', not the current 'Shop 3'"))

        let dryRun = try OcdBinary.run(["migrate", url.path, "--model", bundle.path, "--dry-run"], binary: binary)
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.hasPrefix("\(url.path) is at version 'Shop'; target version 'Shop 3'."))
        #expect(dryRun.stdout.contains("Shop → Shop 2: "))
        #expect(dryRun.stdout.contains("Shop 2 → Shop 3: "))
        #expect(dryRun.stdout.contains("copyRows [Purchase] copy rows of Purchase (from Order) from ZORDER into ZPURCHASE"))
        #expect(dryRun.stdout.contains("INSERT INTO \"_OCD_NEW_ZPURCHASE\""))
        #expect(try MigrationFixtures.bytes(url) == before)

        let run = try OcdBinary.run(["migrate", url.path, "--model", bundle.path], binary: binary)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Migrated \(url.path) to version 'Shop 3'."))
        #expect(try ModelVersionBundle(contentsOf: bundle).version(ofStoreAt: url)?.name == "Shop 3")

        let again = try OcdBinary.run(["migrate", url.path, "--model", bundle.path], binary: binary)
        #expect(again.status == 0 && again.stdout.contains("Nothing to do."))
    }

    @Test func aDryRunOnAStoreWithAHotJournalPrintsThePlanAndChangesNothing() throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.shopBundle()
        let url = directory.file("Shop.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: "Shop"),
                                   with: ShopMigrationTests.shopData(seed: 8))
        // A writer killed mid-transaction in rollback-journal mode: the file and its hot journal.
        let crashed = try Reliability.HotJournalTests.crashedCopy(of: url, as: directory.file("Crashed.sqlite"),
                                                                  tearing: "UPDATE Z_METADATA SET Z_PLIST = zeroblob(5000)")
        let before = try ["", "-journal"].map { try Data(contentsOf: URL(fileURLWithPath: crashed.path + $0)) }
        let dryRun = try OcdBinary.run(["migrate", crashed.path, "--model", bundle.path, "--dry-run"], binary: binary)
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains("is at version 'Shop'; target version 'Shop 3'."), "\(dryRun.stdout)")
        #expect(dryRun.stdout.contains("Shop → Shop 2: "), "\(dryRun.stdout)")
        #expect(try ["", "-journal"].map { try Data(contentsOf: URL(fileURLWithPath: crashed.path + $0)) } == before)
    }

    @Test func aMappingModelIsPrintedThenRun() throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        // The bundle alone, so the mapping model comes from --mapping.
        let bundle = directory.file("Garage.xcdatamodeld")
        try FileManager.default.copyItem(at: MappingModelMigrationTests.bundle().url, to: bundle)
        let mappingPath = try InteropFixtures.url("Garage1to2.xcmappingmodel").path
        let data = MappingModelMigrationTests.garageData(seed: 5)
        let url = try MappingModelMigrationTests.oldStore("Garage.sqlite", in: directory, with: data)
        let before = try MigrationFixtures.bytes(url)

        let dryRun = try OcdBinary.run(["migrate", url.path, "--model", bundle.path, "--mapping", mappingPath, "--dry-run"],
                                       binary: binary)
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains("Mapping model, 5 entity mappings:"))
        #expect(dryRun.stdout.contains("  CarToVehicle: transform Car → Vehicle where scrapped == NO; "))
        #expect(dryRun.stdout.contains("priceInCents = $source.price * 100"))
        #expect(try MigrationFixtures.bytes(url) == before)

        let run = try OcdBinary.run(["migrate", url.path, "--model", bundle.path, "--mapping", mappingPath], binary: binary)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Migrated \(url.path) to version 'Garage 2'."))
        let current = try ManagedObjectModel(contentsOf: bundle)
        try MappingModelMigrationTests.expectHoldsWhatTheMappingGives(url, from: data, model: current, in: directory)

        let refused = try OcdBinary.run(["migrate", try MappingModelMigrationTests.oldStore("Other.sqlite", in: directory, with: data).path,
                                         "--model", bundle.path, "--mapping",
                                         try InteropFixtures.url("UnsupportedMappings/GarageCustomPolicy.xcmappingmodel").path],
                                        binary: binary)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("GarageCarMigrationPolicy"), "\(refused.stderr)")
    }

    /// A compiled mapping model (`.cdm`) runs as its XML form does.
    @Test func aCompiledMappingModelIsPrintedThenRun() throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        let bundle = directory.file("Garage.xcdatamodeld")
        try FileManager.default.copyItem(at: MappingModelMigrationTests.bundle().url, to: bundle)
        let mappingPath = try CompiledMappingModelTests.write(try CompiledMappingModelTests.compiledGarage(), in: directory).path
        let data = MappingModelMigrationTests.garageData(seed: 6)
        let url = try MappingModelMigrationTests.oldStore("Garage.sqlite", in: directory, with: data)

        let run = try OcdBinary.run(["migrate", url.path, "--model", bundle.path, "--mapping", mappingPath], binary: binary)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Mapping model, 5 entity mappings:"))
        #expect(run.stdout.contains("  CarToVehicle: transform Car → Vehicle where scrapped == NO; "))
        #expect(run.stdout.contains("Migrated \(url.path) to version 'Garage 2'."))
        let current = try ManagedObjectModel(contentsOf: bundle)
        try MappingModelMigrationTests.expectHoldsWhatTheMappingGives(url, from: data, model: current, in: directory)
    }

    @Test func aRefusedMigrationIsOneErrorLine() throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: [
            ("V1", #"<entity name="Note"><attribute name="title" optional="YES" attributeType="String"/></entity>"#),
            ("V2", #"<entity name="Note"><attribute name="title" attributeType="String"/></entity>"#),
        ])
        let url = directory.file("Notes.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: "V1"),
                                   with: [MigrationFixtures.Object(entity: "Note", key: "a")])
        let before = try MigrationFixtures.bytes(url)
        let output = try OcdBinary.run(["migrate", url.path, "--model", bundle.path], binary: binary)
        #expect(output.status != 0)
        let errors = output.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
        #expect(errors == ["Error: Attribute 'Note.title' is required and has no default value, but 1 row would have none."], "\(output.stderr)")
        #expect(try MigrationFixtures.bytes(url) == before)
    }
}
