import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// `ocd migrate <store> --model <bundle> [--mapping <xcmappingmodel or cdm>] [--dry-run]`: says which version of the
/// bundle wrote the store, prints the migration plan (each step, per entity, with its SQL; or the mapping
/// model's entity mappings), then runs it with a progress bar. Given a `postgresql://` URL, it migrates that
/// store by the inferred plans in one PostgreSQL transaction (`PostgreSQLStore.migrate`), or by the mapping
/// model into a new schema swapped in (`PostgreSQLStore.migrate(configuration:from:to:mapping:batchSize:)`).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to the current (or a named) version of its model bundle.",
        discussion: "Finds the version that wrote the store from its version hashes, prints the plan (every "
            + "step and the SQL it runs), and runs it in one transaction: the store ends at the new version or "
            + "exactly as it was. A refused migration is one line naming the culprit and a non-zero exit.")

    @Argument(help: "The store file, or a postgresql:// URL.")
    var store: String

    @Option(name: .long, help: "The model bundle (.xcdatamodeld) whose versions the store follows.")
    var model: String

    @Option(name: .long, help: "The version to migrate to (default: the bundle's current version).")
    var to: String?

    @Option(name: .long, help: "An Xcode mapping model (.xcmappingmodel, or a compiled .cdm) to migrate with (default: one beside the bundle from the store's version to the target, else an inferred mapping).")
    var mapping: String?

    @Flag(name: .long, help: "Print the plan and stop; the store is not changed.")
    var dryRun = false

    func run() async throws {
        if case .postgreSQL(let configuration) = try StoreLocation(store) {
            try migrate(configuration)
            return
        }
        let url = URL(fileURLWithPath: store)
        do {
            let bundle = try ModelVersionBundle(contentsOf: URL(fileURLWithPath: model))
            let target = to ?? bundle.current.name
            let stored = try bundle.version(ofStoreAt: url, notAfter: target)
            Console.line("\(store) is at version '\(stored?.name ?? "unknown")'; target version '\(target)'.")
            if let stored, stored.name != target, try migrateWithMappingModel(url, bundle: bundle, from: stored, to: target) {
                return
            }
            let plans = try StoreMigration.plan(storeAt: url, to: bundle, version: to)
            guard !plans.isEmpty else {
                Console.line("Nothing to do.")
                return
            }
            for plan in plans { Console.line(plan.description) }
            if dryRun {
                Console.line("Dry run: the store was not changed.")
                return
            }
            let total = plans.reduce(0) { $0 + $1.steps.reduce(0) { $0 + $1.sql.count } }
            let bar = ProgressBar(title: "Migrating", total: total)
            try StoreMigration.migrate(storeAt: url, to: bundle, version: to) { done, _ in bar.update(done) }
            bar.finish()
            Console.line("Migrated \(store) to version '\(target)'.")
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("\(error)")
        }
    }

    /// Migrates a PostgreSQL store by the inferred plans, in one transaction; a dry run runs them and rolls
    /// them back.
    private func migrate(_ configuration: PostgreSQLStoreConfiguration) throws {
        do {
            let bundle = try ModelVersionBundle(contentsOf: URL(fileURLWithPath: model))
            let target = to ?? bundle.current.name
            let server = configuration.redactedURL
            if let stored = try PostgreSQLStore.storedVersion(configuration: configuration, in: bundle), stored.name != target,
               let (found, destination) = try mappingModel(bundle: bundle, from: stored, to: target) {
                Console.line("\(server) is at version '\(stored.name)'; target version '\(target)'.")
                try run(found, dryRun: dryRun) {
                    try PostgreSQLStore.migrate(configuration: configuration, from: stored.model, to: destination.model, mapping: found)
                }
                if !dryRun { Console.line("Migrated \(server) to version '\(target)'.") }
                return
            }
            let outcome = try PostgreSQLStore.migrate(configuration: configuration, to: bundle, version: to, dryRun: dryRun)
            Console.line("\(configuration.redactedURL) is at version '\(outcome.storeVersion ?? "unknown")'; target version '\(target)'.")
            guard !outcome.plans.isEmpty else {
                Console.line("Nothing to do.")
                return
            }
            for plan in outcome.plans { Console.line(plan.description) }
            Console.line(dryRun ? "Dry run: the plans ran and were rolled back; the store was not changed."
                                : "Migrated \(configuration.redactedURL) to version '\(target)'.")
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("\(error)")
        }
    }

    /// Migrates through the mapping model given with `--mapping`, or one beside the bundle; false when there
    /// is neither (the inferred plans follow).
    private func migrateWithMappingModel(_ url: URL, bundle: ModelVersionBundle, from stored: ModelVersion,
                                         to target: String) throws -> Bool {
        guard let (found, destination) = try mappingModel(bundle: bundle, from: stored, to: target) else { return false }
        try run(found, dryRun: dryRun) {
            try MappingModelMigration.migrateInPlace(storeAt: url, sourceModel: stored.model,
                                                     destinationModel: destination.model, mapping: found)
        }
        if !dryRun { Console.line("Migrated \(store) to version '\(target)'.") }
        return true
    }

    /// The mapping model given with `--mapping`, or one beside the bundle, from `stored` to `target`, with the
    /// target version; nil when there is neither.
    ///
    /// - Throws: ``OCDError`` when the mapping names other versions; the mapping loader's errors;
    ///   ``ModelError/versionNotFound(bundle:version:available:)`` for an unknown target.
    private func mappingModel(bundle: ModelVersionBundle, from stored: ModelVersion,
                              to target: String) throws -> (MappingModel, ModelVersion)? {
        let found: MappingModel?
        if let mapping {
            found = try MappingModel(contentsOf: URL(fileURLWithPath: mapping))
        } else {
            found = try MappingModel.find(in: bundle.url.deletingLastPathComponent(), from: stored.name, to: target)
        }
        guard let found else { return nil }
        let destination = try bundle.version(namedOrCurrent: target)
        for (recorded, actual) in [(found.sourceModelVersionName, stored.name), (found.destinationModelVersionName, target)] {
            if let recorded, recorded != actual {
                throw OCDError("the mapping model maps '\(found.sourceModelVersionName ?? "?")' to '\(found.destinationModelVersionName ?? "?")', "
                    + "not '\(stored.name)' to '\(target)'")
            }
        }
        return (found, destination)
    }

    /// Prints the mapping's entity mappings, then runs `migration` unless this is a dry run.
    private func run(_ mapping: MappingModel, dryRun: Bool, _ migration: () throws -> Void) throws {
        Console.line("Mapping model, \(mapping.entityMappings.count) entity mappings:")
        for entityMapping in mapping.entityMappings { Console.line("  \(entityMapping)") }
        if dryRun {
            Console.line("Dry run: the store was not changed.")
            return
        }
        try migration()
    }
}
