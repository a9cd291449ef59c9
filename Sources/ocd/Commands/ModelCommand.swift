import ArgumentParser

/// `ocd model …`: looking at data models (`.xcdatamodeld`, `.xcdatamodel`).
struct ModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Look at a data model (.xcdatamodeld, .xcdatamodel) convert one into a .xcdatamodeld, or draw it.",
        subcommands: [ModelHashesCommand.self, ModelVersionsCommand.self, ModelConvertCommand.self, ModelDiagramCommand.self]
    )
}
