import ArgumentParser

/// `ocd todo …`: seeds 000, 001 and 003 one step at a time.
struct TodoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo",
        abstract: "To-do items (seeds 000, 001, 003) one step at a time.",
        subcommands: [TodoPopulateCommand.self, TodoListCommand.self, TodoDoneCommand.self, TodoStatsCommand.self]
    )

    static let defaultStoreName = "Todo.sqlite"
}
