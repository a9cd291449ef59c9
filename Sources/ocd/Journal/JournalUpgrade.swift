import Foundation
import OpenCoreData

/// The tour's upgrade step: a store written by the first version of the bundled `Journal.xcdatamodeld`
/// opens with its current version, migrated on open, as an app's store does after an update that changed
/// its model (docs/MIGRATION.md).
enum JournalUpgrade {
    /// The model bundle in ocd's resources: "Journal" (Entry: title, body, mood as Integer 16, written)
    /// and the current "Journal 2" (body renamed to text, mood widened to Integer 64, a new `starred` with a
    /// default, a new Tag entity and a many-to-many between them).
    static func bundleURL() throws -> URL {
        guard let url = Bundle.module.url(forResource: "Journal", withExtension: "xcdatamodeld", subdirectory: "Resources")
                ?? Bundle.module.url(forResource: "Journal", withExtension: "xcdatamodeld") else {
            throw OCDError("the bundled Journal.xcdatamodeld is missing from ocd's resources")
        }
        return url
    }

    /// What version 1 of the app wrote: title, body, mood.
    static let entries: [(title: String, body: String?, mood: Int16)] = [
        ("First day", "Installed the app.", 3),
        ("Rain", nil, 2),
        ("Release", "Version 2 is out.", 5),
    ]

    /// What the step did, for the caller's summary.
    struct Outcome {
        var storeVersion: String
        var modelVersion: String
        var steps: Int
        var entries: Int
    }

    /// Writes `entries` with the bundle's first version into a new store at `path`, then opens it as the
    /// upgraded app would, with the current version, which migrates it; prints each stage.
    ///
    /// - Throws: ``OCDError`` when the bundle is missing or the store cannot be written, opened or read.
    @discardableResult
    static func run(storePath path: String, indent: String) throws -> Outcome {
        let bundle: ModelVersionBundle
        do {
            bundle = try ModelVersionBundle(contentsOf: bundleURL())
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("cannot load the bundled Journal.xcdatamodeld: \(error)")
        }
        let first = bundle.versions[0], current = bundle.current
        let url = URL(fileURLWithPath: path)

        let old = try OpenedStore.open(path: path, model: first.model)
        let writer = old.newContext()
        try writer.performAndWait {
            for (offset, entry) in entries.enumerated() {
                let object = try writer.insertNewObject(forEntityName: "Entry")
                try object.setValue(entry.title, forKey: "title")
                try object.setValue(entry.body, forKey: "body")
                try object.setValue(entry.mood, forKey: "mood")
                try object.setValue(Date(timeIntervalSince1970: 1_700_000_000 + Double(offset) * 86_400), forKey: "written")
            }
            try writer.save()
        }
        old.coordinator.persistentStores.forEach(old.coordinator.remove)
        Console.line("\(indent)Version '\(first.name)' of the app wrote \(entries.count) entries. The update ships model '\(current.name)'.")
        Console.line("\(indent)Its changes: Entry.body renamed text (renaming ID), mood Integer 16 → 64, starred added (default NO),"
                     + " a Tag entity with a many-to-many Entry.tags ↔ Tag.entries.")

        let plans: [MigrationPlan]
        do {
            plans = try StoreMigration.plan(storeAt: url, to: bundle)
        } catch {
            throw OCDError("cannot plan the migration of \(path): \(error)")
        }
        let storeVersion = plans.first?.sourceVersion ?? current.name
        let steps = plans.flatMap(\.steps)
        Console.line("\(indent)The store says it is at '\(storeVersion)' (its entity hashes); opening it migrates it, in one transaction (\(steps.count) steps):")
        for step in steps where [.createTable, .copyRows, .dropTable, .writeMetadata].contains(step.kind) {
            Console.line("\(indent)  \(step)")
        }

        let upgraded = try OpenedStore.open(path: path, model: current.model)
        let reader = upgraded.newContext()
        let lines = try reader.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Entry")
            request.sortDescriptors = [QuerySortDescriptor(key: "written", ascending: true)]
            let found = try reader.fetch(request)
            // The new relationship works like any other: tag the last entry and save.
            let tag = try reader.insertNewObject(forEntityName: "Tag")
            try tag.setValue("release", forKey: "name")
            if let last = found.last { try last.setValue(Set([tag]), forKey: "tags") }
            try reader.save()
            return try found.map { entry in
                let text = try entry.value(forKey: "text") as? String
                let tags = (try entry.value(forKey: "tags") as? Set<ManagedObject>)?.count ?? 0
                let mood = try entry.value(forKey: "mood").map { "\($0) (\(type(of: $0)))" } ?? "nil"
                return "\(try entry.value(forKey: "title") ?? "") — text: \(text.map { "\"\($0)\"" } ?? "nil"), "
                    + "mood \(mood), starred \(try entry.value(forKey: "starred") ?? "nil"), \(tags) tag(s)"
            }
        }
        let now = (try? bundle.version(ofStoreAt: url))??.name ?? "unknown"
        Console.line("\(indent)Opened with '\(current.name)'; the store is now at '\(now)', every entry kept:")
        for line in lines { Console.line("\(indent)  \(line)") }
        return Outcome(storeVersion: storeVersion, modelVersion: current.name, steps: steps.count, entries: lines.count)
    }
}
