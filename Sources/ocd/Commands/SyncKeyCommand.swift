import ArgumentParser
import OpenCoreDataSyncServer

/// `ocd sync key > K`: a new signing key, one line of base64 of 32 random bytes.
struct SyncKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Print a new signing key for ocd sync serve --key-file (keep the file private)."
    )

    func run() async throws {
        Console.line(SyncTokens.newKeyLine())
    }
}
