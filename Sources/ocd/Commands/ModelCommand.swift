import ArgumentParser

/// `ocd model …`: looking at data models (`.xcdatamodeld`, `.xcdatamodel`).
struct ModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Look at a data model (.xcdatamodeld, .xcdatamodel) or convert one into a .xcdatamodeld.",
        subcommands: [ModelHashesCommand.self, ModelVersionsCommand.self, ModelConvertCommand.self]
    )
}
