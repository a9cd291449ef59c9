import Foundation
import OpenCoreData

/// A change `ocd serve --read-write` makes from a form on an object page: one attribute set, or the object
/// deleted. It runs in a context of its own with the model's validation and saves at once; a refusal comes
/// back naming the field it belongs to, so the page shows it there.
struct ObjectEdit {
    /// What the form asks for.
    enum Action {
        /// Set `key` to the value `text` stands for.
        case set(key: String, text: String)
        /// Delete the object (its delete rules run; a `deny` rule with related objects refuses).
        case delete
    }

    /// Why an edit was refused: the message and the field it belongs to (nil: the object as a whole).
    struct Refusal: Error {
        let field: String?
        let message: String
        let entered: String?
    }

    let entity: EntityDescription
    let primaryKey: Int64
    let action: Action

    /// Applies the edit and saves.
    ///
    /// - Throws: ``Refusal`` for text that is not a value of the attribute's type, an attribute that cannot be
    ///   edited here, and a save the model's validation refuses (each failure on its field); ``BrowserError``
    ///   (404) when the object does not exist; the store's error when the save fails otherwise.
    func apply(_ browser: StoreBrowser) throws {
        try browser.withContext { context in
            // Values typed in the form win over values read before another process saved: the form shows
            // what was read when the page was made, and the person editing chose this field's new value.
            context.mergePolicy = .mergeByPropertyObjectTrump
            let object = try browser.object(of: entity, primaryKey: primaryKey, in: context)
            switch action {
            case .set(let key, let text):
                guard let attribute = object.entity.attributesByName[key], !attribute.isTransient,
                      AttributeText.isEditable(attribute) else {
                    throw Refusal(field: nil, message: "\(object.entity.name) has no attribute “\(key)” that can be edited here.", entered: nil)
                }
                do {
                    try object.setValue(try AttributeText.value(text, for: attribute), forKey: key)
                } catch let error as BrowserError {
                    throw Refusal(field: key, message: error.message, entered: text)
                } catch {
                    throw Refusal(field: key, message: "\(error)", entered: text)
                }
                try save(context, entered: text)
            case .delete:
                context.delete(object)
                try save(context, entered: nil)
            }
        }
    }

    private func save(_ context: ManagedObjectContext, entered: String?) throws {
        do {
            try context.save()
        } catch ObjectGraphError.validationFailed(let failures) {
            let field: String? = if case .set(let key, _) = action { key } else { nil }
            let own = failures.first { $0.key == field } ?? failures.first
            throw Refusal(field: own?.key == field ? field : nil,
                          message: failures.map(\.message).joined(separator: "; "), entered: entered)
        }
    }
}
