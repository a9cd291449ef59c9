import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd model hashes <model> [--hex]`: each entity's version hash, the digest Core Data compares with a
/// store's metadata to decide whether the store fits the model.
struct ModelHashesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hashes",
        abstract: "Print each entity's version hash (as Core Data stores it in NSStoreModelVersionHashes).",
        discussion: "One line per entity, sorted by name: the entity name and its SHA-256 digest, in base64 "
            + "(as in a store's metadata plist) or, with --hex, in hexadecimal.")

    @Argument(help: "The model: a .xcdatamodeld bundle (its current version), a .xcdatamodel folder, its contents file, or a compiled .momd/.mom.")
    var model: String

    @Flag(name: .long, help: "Print the digests in hexadecimal instead of base64.")
    var hex = false

    func run() async throws {
        let loaded = try ModelLocator.load(modelPath: model)
        for (name, digest) in loaded.entityVersionHashesByName.sorted(by: { $0.key < $1.key }) {
            let text = hex ? digest.map { String(format: "%02x", $0) }.joined() : digest.base64EncodedString()
            Console.line("\(name) \(text)")
        }
    }
}
