import ArgumentParser

/// `ocd banks …`: seed 004's FailedBanks one step at a time.
struct BanksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "banks",
        abstract: "The FDIC failed-bank list (seed 004): import it, browse it.",
        subcommands: [BanksImportCommand.self, BanksBrowseCommand.self]
    )

    static let defaultStoreName = "FailedBanks.sqlite"
}
