import OpenCoreData

/// ocd's own models, tried in turn when a store is opened without `--model` and carries no model of its own.
enum BuiltInModels {
    /// Each model with the name messages give it.
    static var all: [(name: String, make: () throws -> ManagedObjectModel)] {
        [("ocd's to-do model", TodoModel.make), ("seed 004's FailedBanks model", BankModel.make)]
    }
}
