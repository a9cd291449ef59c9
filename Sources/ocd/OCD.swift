import ArgumentParser
import Foundation

/// `ocd`: the OpenCoreData demo and everyday tool. Each subcommand lives in its own file under Commands/.
@main
struct OCD: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ocd",
        abstract: "OpenCoreData's demo and everyday tool: the seeds' tutorials, store inspection and fetches.",
        subcommands: [TourCommand.self, TodoCommand.self, BanksCommand.self, InspectCommand.self, FetchCommand.self,
                      ImportCommand.self, ModelCommand.self, MigrateCommand.self, HistoryCommand.self,
                      WatchCommand.self]
    )
}
