import ArgumentParser
import Foundation
import OpenCoreData

/// `ocd`: the OpenCoreData demo and everyday tool. Each subcommand lives in its own file under Commands/.
@main
struct OCD: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ocd",
        abstract: "OpenCoreData's demo and everyday tool: the seeds' tutorials, store inspection and fetches.",
        subcommands: [TourCommand.self, TodoCommand.self, BanksCommand.self, InspectCommand.self, FetchCommand.self,
                      ImportCommand.self, ModelCommand.self, MigrateCommand.self, HistoryCommand.self,
                      WatchCommand.self, ServeCommand.self]
    )

    /// ArgumentParser's entry point, after one setting: ocd reads any model through `ManagedObject` itself,
    /// so the classes a model file names are not ocd's to find, and their absence is not worth a warning.
    static func main() async {
        ManagedObjectClassRegistry.warnsAboutMissingClasses = false
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
