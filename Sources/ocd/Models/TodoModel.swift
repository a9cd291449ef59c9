import OpenCoreData

/// The to-do store's model: seed 000/003's `Item`, and seed 001's `Session` log (yoga and meditation
/// sessions the statistics summary is computed from). One store holds both so one `--store` serves
/// every `ocd todo` subcommand.
enum TodoModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Item") {
                Attribute("name", .string, optional: false)
                Attribute("createdAt", .date)
                Attribute("done", .boolean, default: false)
                Attribute("priority", .integer16, default: Int16(0))
            }
            EntityDescription("Session") {
                Attribute("kind", .string)
                Attribute("duration", .double, default: 0.0)
                Attribute("startedAt", .date)
            }
        }
    }
}
