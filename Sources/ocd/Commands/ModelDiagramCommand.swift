import ArgumentParser

/// `ocd model diagram <model> --svg`: the model drawn as Xcode's model editor draws it (the diagram
/// `ocd serve` shows), written to standard output.
struct ModelDiagramCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagram",
        abstract: "Draw a model's entities, attributes, relationships and inheritance (SVG, to standard output).")

    @Argument(help: "The model: a .xcdatamodeld bundle (its current version), a .xcdatamodel folder, its contents file, or a compiled .momd/.mom.")
    var model: String

    @Flag(name: .long, help: "Write SVG (the only format so far).")
    var svg = false

    func validate() throws {
        guard svg else { throw ValidationError("say --svg: SVG is the only format ocd model diagram writes so far") }
    }

    func run() async throws {
        Console.raw(ModelDiagram(model: try ModelLocator.load(modelPath: model)).svg())
    }
}
