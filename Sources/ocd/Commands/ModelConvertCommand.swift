import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// `ocd model convert <model or store> --output <bundle>`: any model form written as an Xcode model bundle.
struct ModelConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Write a model as an Xcode model bundle (.xcdatamodeld, XML) to version and edit it from there.",
        discussion: "Reads a .xcdatamodeld bundle (every version), a .xcdatamodel, a compiled .momd (every .mom in "
            + "it, the current one as VersionInfo.plist says) or .mom, or a store file that carries its compiled model "
            + "(Z_MODELCACHE), or a postgresql:// URL of a store (which carries its model too). The output must not exist yet. A compiled model lacks some of what the source had "
            + "(docs/INTEROP.md says what); the converted bundle opens the same stores (equal version hashes).")

    @Argument(help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom), a store file with a model cache, or a postgresql:// URL.")
    var input: String

    @Option(name: .long, help: "The bundle to write (…/Name.xcdatamodeld); it must not exist.")
    var output: String

    func validate() throws {
        guard output.lowercased().hasSuffix(".xcdatamodeld") else {
            throw ValidationError("--output must name a .xcdatamodeld bundle")
        }
    }

    func run() async throws {
        let versions: [(name: String, model: ManagedObjectModel)], current: String
        if case .postgreSQL(let configuration) = try StoreLocation(input) {
            (versions, current) = try Self.versions(of: configuration)
        } else {
            let url = URL(fileURLWithPath: input)
            guard FileManager.default.fileExists(atPath: url.path) else { throw OCDError("\(input): no such model or store") }
            (versions, current) = try Self.versions(at: url)
        }
        do {
            try ManagedObjectModel.writeModelBundle(versions: versions, currentVersion: current,
                                                    to: URL(fileURLWithPath: output))
        } catch {
            throw OCDError("\(error)")
        }
        for (name, model) in versions {
            let count = model.entities.count
            Console.line("\(name)\t\(count) entit\(count == 1 ? "y" : "ies")\(name == current ? "\tcurrent" : "")")
        }
        for (name, model) in versions {
            for line in UnreadModelKeys.note(for: model, version: name) { Console.line(line) }
        }
        Console.line("Wrote \(output).")
    }

    /// The model a PostgreSQL store carries (``PostgreSQLStore/cachedModel(configuration:)``), named after its
    /// database (and schema).
    static func versions(of configuration: PostgreSQLStoreConfiguration) throws -> ([(name: String, model: ManagedObjectModel)], String) {
        let cached: ManagedObjectModel?
        do {
            cached = try PostgreSQLStore.cachedModel(configuration: configuration)
        } catch {
            throw OCDError("cannot read the model of \(configuration.redactedURL): \(error)")
        }
        guard let cached else {
            throw OCDError("\(configuration.redactedURL) carries no model (no store there, or none opened for writing since "
                + "stores began carrying their model); convert the app's model instead")
        }
        let name = configuration.schema ?? configuration.database
        return ([(name, cached)], name)
    }

    /// The versions the input holds, by name, and the current one's name.
    static func versions(at url: URL) throws -> ([(name: String, model: ManagedObjectModel)], String) {
        let base = url.deletingPathExtension().lastPathComponent
        do {
            switch url.pathExtension.lowercased() {
            case "xcdatamodeld":
                let bundle = try ModelVersionBundle(contentsOf: url)
                return (bundle.versions.map { ($0.name, $0.model) }, bundle.current.name)
            case "momd":
                let current = try ManagedObjectModel(compiledModelAt: url)
                let moms = try FileManager.default.contentsOfDirectory(atPath: url.path)
                    .filter { $0.lowercased().hasSuffix(".mom") }
                    .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
                var versions: [(name: String, model: ManagedObjectModel)] = []
                var currentName = base
                for file in moms {
                    let model = try ManagedObjectModel(compiledModelAt: url.appendingPathComponent(file))
                    let name = String(file.dropLast(4))
                    if model.entityVersionHashesByName == current.entityVersionHashesByName { currentName = name }
                    versions.append((name, model))
                }
                if versions.isEmpty { versions = [(base, current)] }
                return (versions, currentName)
            case "mom", "xcdatamodel":
                let model = url.pathExtension.lowercased() == "mom"
                    ? try ManagedObjectModel(compiledModelAt: url) : try ManagedObjectModel(contentsOf: url)
                return ([(base, model)], base)
            default:
                guard let cached = try ManagedObjectModel.cachedModel(ofStoreAt: url) else {
                    throw OCDError("\(url.path): the store carries no model (no Z_MODELCACHE); convert the app's model instead")
                }
                return ([(base, cached)], base)
            }
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("\(url.path): \(error)")
        }
    }
}
