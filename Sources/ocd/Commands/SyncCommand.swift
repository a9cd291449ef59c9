import ArgumentParser

/// `ocd sync …`: the sync server and its keys and tokens (docs/SYNC.md).
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Mirror stores through a server you run: serve, make a signing key, make a token.",
        subcommands: [SyncServeCommand.self, SyncKeyCommand.self, SyncTokenCommand.self]
    )
}
