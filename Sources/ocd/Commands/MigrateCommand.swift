import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd migrate <store> --model <bundle> [--dry-run]`: says which version of the bundle wrote the store,
/// prints the migration plan (each step, per entity, with its SQL), then runs it with a progress bar.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to the current (or a named) version of its model bundle.",
        discussion: "Finds the version that wrote the store from its version hashes, prints the plan (every "
            + "step and the SQL it runs), and runs it in one transaction: the store ends at the new version or "
            + "exactly as it was. A refused migration is one line naming the culprit and a non-zero exit.")

    @Argument(help: "The store file.")
    var store: String

    @Option(name: .long, help: "The model bundle (.xcdatamodeld) whose versions the store follows.")
    var model: String

    @Option(name: .long, help: "The version to migrate to (default: the bundle's current version).")
    var to: String?

    @Flag(name: .long, help: "Print the plan and stop; the store is not changed.")
    var dryRun = false

    func run() async throws {
        let url = URL(fileURLWithPath: store)
        do {
            let bundle = try ModelVersionBundle(contentsOf: URL(fileURLWithPath: model))
            let target = to ?? bundle.current.name
            let stored = try bundle.version(ofStoreAt: url)
            Console.line("\(store) is at version '\(stored?.name ?? "unknown")'; target version '\(target)'.")
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
}
