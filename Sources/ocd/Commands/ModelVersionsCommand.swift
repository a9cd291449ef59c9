import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd model versions <bundle>`: one line per version of a `.xcdatamodeld` bundle.
struct ModelVersionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions",
        abstract: "List the versions of a model bundle (.xcdatamodeld).",
        discussion: "One line per version, in version order: its name, its entity count, a short digest of its "
            + "entity version hashes (versions with equal digests open the same stores), and 'current' for the "
            + "version .xccurrentversion names.")

    @Argument(help: "The model bundle (.xcdatamodeld).")
    var model: String

    func run() async throws {
        let bundle: ModelVersionBundle
        do {
            bundle = try ModelVersionBundle(contentsOf: URL(fileURLWithPath: model))
        } catch {
            throw OCDError("\(model): \(error)")
        }
        for version in bundle.versions {
            let count = version.model.entities.count
            Console.line("\(version.name)\t\(count) entit\(count == 1 ? "y" : "ies")\t\(version.hashDigest)\(version.isCurrent ? "\tcurrent" : "")")
        }
    }
}
