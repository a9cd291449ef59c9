import Foundation
import GRDB
import Testing
@testable import OpenCoreData

// SIGKILLs aimed at the migrations that work on a copy and write it back (StoreFileReplacement): a mapping
// model migration (`Garage.xcdatamodeld` with `Garage1to2.xcmappingmodel` beside it, run by an open) and a
// staged migration (`Shop.xcdatamodeld` through lightweight stages). Kills land while the copy is made and
// migrated, during the write-back and after it.
extension Reliability.MigrationCrashTests {
    /// Kills per migration kind; `OCD_COPY_MIGRATION_KILLS` raises it (scripts/crash-kills.sh).
    static var copyMigrationKills: Int { ProcessInfo.processInfo.environment["OCD_COPY_MIGRATION_KILLS"].flatMap(Int.init) ?? 4 }

    /// Where a worker migrating on a copy was when it was killed, from the lines it had printed.
    enum WriteBackMoment: String, CaseIterable {
        /// Copying, migrating the copy: nothing written to the store yet.
        case beforeWriteBack = "before the write-back"
        /// The write-back had begun (`writing`) and not returned.
        case duringWriteBack = "during the write-back"
        /// The write-back had returned (`written`, or the worker's `migrated`).
        case afterWriteBack = "after the write-back"
    }

    @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
    func killedMappingModelMigrationLeavesTheStoreAsItWasOrMigrated() throws {
        let directory = TemporaryDirectory()
        let bundleURL = try InteropFixtures.url("Garage.xcdatamodeld")
        let bundle = try ModelVersionBundle(contentsOf: bundleURL)
        let source = directory.file("Source.sqlite")
        try LargeGarageStore.fill(source, model: try #require(bundle.version(named: "Garage")).model, owners: 1_000)
        // The open finds the mapping model beside the bundle.
        try Self.killRounds(of: "migrate-mapping", kind: "mapping model", source: source, bundle: bundle, in: directory) { store in
            let coordinator = PersistentStoreCoordinator(managedObjectModel: bundle.current.model)
            try coordinator.addPersistentStore(type: .sqlite, at: store)
            coordinator.persistentStores.forEach(coordinator.remove)
        }
    }

    @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
    func killedStagedMigrationLeavesTheStoreAsItWasOrMigrated() throws {
        let directory = TemporaryDirectory()
        let bundleURL = try MigrationFixtures.shopBundle()
        let bundle = try ModelVersionBundle(contentsOf: bundleURL)
        let source = directory.file("Source.sqlite")
        try LargeShopStore.fill(source, model: bundle.versions[0].model, customers: Self.customers)
        // The worker's stages: every version, lightweight.
        let manager = StagedMigrationManager(stages: [LightweightMigrationStage(bundle.versions.map(\.name))])
        try Self.killRounds(of: "migrate-staged", kind: "staged", source: source, bundle: bundle, in: directory) { store in
            var options = StoreOptions()
            options.stagedMigrationManager = manager
            let coordinator = PersistentStoreCoordinator(managedObjectModel: bundle.current.model)
            try coordinator.addPersistentStore(type: .sqlite, at: store, options: options)
            coordinator.persistentStores.forEach(coordinator.remove)
        }
    }

    /// Runs `copyMigrationKills` rounds of the worker's `mode` on copies of `source`, each killed at a random
    /// moment, and checks that each store is as it was or holds what an uninterrupted run made, and that
    /// `open` (the next launch) migrates it from the state the kill left.
    static func killRounds(of mode: String, kind: String, source: URL, bundle: ModelVersionBundle, in directory: TemporaryDirectory,
                           open: (URL) throws -> Void) throws {
        let sourceBytes = try Data(contentsOf: source)
        let sourceContent = try StoreContent(source)

        // One run left alone: the reference content, and the time to the write-back and from it to the exit.
        let reference = directory.file("Reference.sqlite")
        try FileManager.default.copyItem(at: source, to: reference)
        let started = ContinuousClock.now
        let referenceWorker = try WorkerProcess.start([mode, reference.path, bundle.url.path])
        var referenceOutput = Self.read(referenceWorker, until: "writing")
        let writingStarted = ContinuousClock.now
        referenceOutput += referenceWorker.readAllOutput()
        let status = try referenceWorker.wait()
        let untilWriteBack = Self.seconds(writingStarted - started), writeBack = Self.seconds(ContinuousClock.now - writingStarted)
        try #require(status == 0 && referenceOutput.contains("migrated"), "the worker could not migrate: \(referenceOutput)")
        #expect(try bundle.version(ofStoreAt: reference)?.name == bundle.current.name)
        // A mapping model migration gives the store a new UUID each time: compared without it.
        let migratedContent = try StoreContent(reference).withoutStoreUUID
        #expect(migratedContent != sourceContent.withoutStoreUUID)

        var random = SystemRandomNumberGenerator()
        var moments: [WriteBackMoment: Int] = [:]
        var unchanged = 0, migrated = 0
        let clock = ContinuousClock.now
        for round in 1...copyMigrationKills {
            let store = directory.file("Round\(round).sqlite"), relaunch = directory.file("Relaunch\(round).sqlite")
            defer { for url in [store, relaunch] { Self.remove(url) } }
            try FileManager.default.copyItem(at: source, to: store)

            let worker = try WorkerProcess.start([mode, store.path, bundle.url.path])
            // Half the rounds are killed while the copy is made and migrated, the others from the start of
            // the write-back to a little past the worker's exit.
            var output = ""
            if round % 2 == 1 {
                Thread.sleep(forTimeInterval: Double.random(in: 0...untilWriteBack, using: &random))
            } else {
                output = Self.read(worker, until: "writing")
                Thread.sleep(forTimeInterval: Double.random(in: 0...(writeBack * 1.2), using: &random))
            }
            worker.kill(SIGKILL)
            try worker.wait()
            output += worker.readAllOutput()
            let lines = Set(output.split(separator: "\n").map(String.init))
            let moment: WriteBackMoment = lines.contains("written") || lines.contains("migrated") ? .afterWriteBack
                : lines.contains("writing") ? .duringWriteBack : .beforeWriteBack
            moments[moment, default: 0] += 1

            // The next launch opens the store as the kill left it and migrates it; the files the killed
            // process made beside the store are gone once the store was opened again.
            let outcome = try checkKilledStore(
                store, relaunch: relaunch, label: "\(kind) round \(round) (\(moment.rawValue))", sourceBytes: sourceBytes,
                sourceContent: sourceContent, migratedContent: migratedContent,
                returned: moment == .afterWriteBack, began: moment != .beforeWriteBack, normalized: \.withoutStoreUUID, open: open)
            if outcome == .unchanged { unchanged += 1 } else { migrated += 1 }
            try open(store)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
                .filter { $0.hasPrefix(".\(store.lastPathComponent).") }
            #expect(leftovers.isEmpty, "\(kind) round \(round) (\(moment.rawValue)): the files the killed migration made are left: \(leftovers)")
        }
        #expect(unchanged + migrated == copyMigrationKills)
        print("MigrationCrashTests (\(kind)): \(copyMigrationKills) kills of a migration on a copy of \(sourceContent.rowCount) rows "
              + "(reference run: \(String(format: "%.2f", untilWriteBack)) s to the write-back, \(String(format: "%.2f", writeBack)) s more to its exit): "
              + WriteBackMoment.allCases.map { "\(moments[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
              + "; \(unchanged) left the store as it was, \(migrated) migrated; every next open migrated it; "
              + "\(String(format: "%.0f", Self.seconds(ContinuousClock.now - clock))) s")
    }

    /// A large store at the first version of `Garage.xcdatamodeld`, written through the library.
    enum LargeGarageStore {
        /// Fills a new store at `url`: `owners` owners with three cars each (one in six scrapped, prices in
        /// quarters so that cents are whole), three brands and a note. Saves in slices; the store is left
        /// checkpointed to one file.
        static func fill(_ url: URL, model: ManagedObjectModel, owners: Int) throws {
            try Reliability.MigrationCrashTests.writeStore(url, model: model) { context in
                for index in 0..<3 {
                    let brand = try context.insertNewObject(forEntityName: "Brand")
                    try brand.setValue("brand \(index)", forKey: "name")
                }
                let note = try context.insertNewObject(forEntityName: "Note")
                try note.setValue("remember", forKey: "text")
                let slice = 500
                for start in stride(from: 0, to: owners, by: slice) {
                    for index in start..<min(start + slice, owners) {
                        let owner = try context.insertNewObject(forEntityName: "Owner")
                        try owner.setValue("owner \(index)", forKey: "name")
                        var cars: Set<ManagedObject> = []
                        for carIndex in 0..<3 {
                            let number = index * 3 + carIndex
                            let car = try context.insertNewObject(forEntityName: "Car")
                            try car.setValue("P-\(number)", forKey: "plate")
                            try car.setValue(["volvo", "saab", "fiat"][number % 3], forKey: "make")
                            if number % 4 != 0 { try car.setValue("model \(number % 17)", forKey: "model") }
                            try car.setValue(Float(number % 40_000) / 4, forKey: "price")
                            try car.setValue(Int16(1950 + number % 80), forKey: "year")
                            try car.setValue(number % 6 == 0, forKey: "scrapped")
                            cars.insert(car)
                        }
                        try owner.setValue(cars, forKey: "cars")
                    }
                    try context.save()
                    context.reset()
                }
            }
        }
    }
}

extension Reliability.MigrationCrashTests.StoreContent {
    /// The same content with the store's UUID left out (a mapping model migration makes a new one).
    var withoutStoreUUID: Self {
        var content = self
        content.metadata.storeUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        return content
    }
}
