import Foundation

/// The composite-attribute changes an inferred migration refuses rather than carries out wrongly.
///
/// A composite's elements are stored as attributes named by their key paths (`magnitude.richter`), so an
/// inferred migration copies each element whose key path both models share, converts its type as for any
/// attribute, and adds or drops the others. What would lose values silently is refused here, naming the
/// attribute: an attribute that becomes a composite or stops being one, a composite whose name changes
/// (its elements' key paths change with it), and an element with a renaming identifier.
enum CompositeMigrationCheck {
    /// Checks each target entity against the source entity it takes its rows from (`source(of:)`).
    ///
    /// - Throws: ``MigrationError/unsupportedChange(entity:property:reason:)`` naming the entity and the
    ///   composite attribute for a change listed above.
    static func check(_ target: ManagedObjectModel, source: (EntityDescription) -> EntityDescription?) throws {
        for entity in target.entitiesByNumber {
            guard let old = source(entity) else { continue }
            for case let attribute as AttributeDescription in entity.properties where !attribute.isTransient {
                let renamed = attribute.renamingIdentifier.flatMap { old.attributesByName[$0] }
                let previous = renamed ?? old.attributesByName[attribute.name]
                guard let previous, !previous.isTransient else { continue }
                func refuse(_ reason: String) -> MigrationError {
                    .unsupportedChange(entity: entity.name, property: attribute.name, reason: reason)
                }
                switch (previous as? CompositeAttributeDescription, attribute as? CompositeAttributeDescription) {
                case (nil, nil):
                    continue
                case (nil, _?):
                    throw refuse("it becomes a composite attribute, and its stored values would be lost")
                case (_?, nil):
                    throw refuse("it stops being a composite attribute, and its elements' values would be lost")
                case (let before?, let after?):
                    if before.name != after.name {
                        throw refuse("the composite is renamed from '\(before.name)', and its elements' values would be lost")
                    }
                    if let element = renamedElement(in: after.elements, under: [after.name]) {
                        throw refuse("its element '\(element)' has a renaming identifier, which composite elements do not follow yet")
                    }
                }
            }
        }
    }

    /// The key path of the first element (nested ones included) with a renaming identifier.
    private static func renamedElement(in elements: [AttributeDescription], under path: [String]) -> String? {
        for element in elements {
            if element.renamingIdentifier != nil { return (path + [element.name]).joined(separator: ".") }
            if let nested = element as? CompositeAttributeDescription,
               let found = renamedElement(in: nested.elements, under: path + [element.name]) {
                return found
            }
        }
        return nil
    }
}
