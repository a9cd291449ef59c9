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
                      WatchCommand.self, ServeCommand.self, CopyCommand.self, SyncCommand.self]
    )

    /// ArgumentParser's entry point, after one setting: ocd reads any model through `ManagedObject` itself,
    /// so the classes a model file names are not ocd's to find, and their absence is not worth a warning.
    static func main() async {
        ManagedObjectClassRegistry.warnsAboutMissingClasses = false
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error where error is CleanExit || error is ExitCode || error is ValidationError {
            exit(withError: error)
        } catch {
            // ArgumentParser's own messages (usage, help) are its text; any other error may quote a store,
            // a model or a file, so it is printed escaped, with ArgumentParser's prefix and exit status.
            Console.error("Error: " + message(for: error))
            exit(withError: ExitCode(exitCode(for: error).rawValue))
        }
    }
}
