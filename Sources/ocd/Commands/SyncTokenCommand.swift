import ArgumentParser
import Foundation
import OpenCoreDataSyncServer

/// `ocd sync token --key-file K --user U [--expires 1h]`: a bearer token for one user's zone.
struct SyncTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a bearer token that opens one user's zone on a sync server with that key."
    )

    @Option(name: .long, help: "The file ocd sync key wrote.")
    var keyFile: String

    @Option(name: .long, help: "The user (the zone the token opens).")
    var user: String

    @Option(name: .long, help: "How long the token is valid: a number and s, m, h or d (30m, 1h, 7d).")
    var expires = "1h"

    func run() async throws {
        guard let lifetime = Self.duration(expires) else {
            throw ValidationError("--expires takes a number and s, m, h or d (30m, 1h, 7d), not “\(expires)”")
        }
        do {
            let tokens = try await SyncTokens(key: try SyncTokens.readKeyFile(at: keyFile))
            Console.line(try await tokens.token(for: user, lifetime: lifetime))
        } catch let failure as SyncTokens.Failure {
            throw OCDError(failure.description)
        }
    }

    /// `30m` as 30 minutes; nil for anything else than a positive number and one of s, m, h, d.
    static func duration(_ text: String) -> Duration? {
        guard let unit = text.last, let number = Int(text.dropLast()), number > 0, number < 100_000 else { return nil }
        switch unit {
        case "s": return .seconds(number)
        case "m": return .seconds(number * 60)
        case "h": return .seconds(number * 3600)
        case "d": return .seconds(number * 86400)
        default: return nil
        }
    }
}
