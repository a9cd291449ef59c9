import Foundation

extension StoreSchema {
    /// The column that holds `attribute` of `entity` in the entity's table, or nil when the attribute has
    /// none (transient, or not a property of `entity`): for tools that show or write the layout itself,
    /// such as `ocd inspect` and the benchmark's raw writers.
    package func columnName(of attribute: String, in entity: EntityDescription) -> String? {
        guard let slot = entity.allProperties.firstIndex(where: { $0.name == attribute }),
              case .attribute(let column, _) = mapping(for: entity).storage[slot] else { return nil }
        return column
    }
}
