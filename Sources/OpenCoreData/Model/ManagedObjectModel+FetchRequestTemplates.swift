import Foundation
import Synchronization

/// A model's named fetch request templates, and whether the model is in use (after which they are fixed).
///
/// Templates are the one part of a model that changes after it is built (Core Data's
/// `setFetchRequestTemplate(_:forName:)`), so they sit behind a lock rather than in the frozen descriptions.
final class FetchRequestTemplateStore: Sendable {
    private struct State {
        var templates: [String: FetchRequest<ManagedObject>] = [:]
        var isInUse = false
    }
    private let state = Mutex(State())

    /// The templates as stored; callers copy before handing one out.
    var templates: [String: FetchRequest<ManagedObject>] { state.withLock { $0.templates } }

    /// Whether a coordinator uses the model.
    var isInUse: Bool { state.withLock { $0.isInUse } }

    func markInUse() { state.withLock { $0.isInUse = true } }

    /// Stores or removes a template; a programmer error once the model is in use.
    func set(_ request: FetchRequest<ManagedObject>?, forName name: String) {
        state.withLock { state in
            if state.isInUse {
                preconditionFailure("fetch request template '\(name)' changed after the model was put to use by a coordinator")
            }
            state.templates[name] = request
        }
    }
}

extension ManagedObjectModel {
    /// The model's fetch request templates by name: copies, so changing one changes nothing in the model.
    ///
    /// Templates come from a model file (`<fetchRequest>` elements, a compiled model's `NSFetchRequestTemplates`)
    /// or from ``setFetchRequestTemplate(_:forName:)``; their predicates may hold `$VARIABLE`s, which
    /// ``fetchRequestFromTemplate(withName:substitutionVariables:)`` fills in.
    public var fetchRequestTemplatesByName: [String: FetchRequest<ManagedObject>] {
        fetchRequestTemplateStore.templates.mapValues { $0.copy() }
    }

    /// A copy of the template named `name`, its `$VARIABLE`s left in place; nil when there is none.
    public func fetchRequestTemplate(forName name: String) -> FetchRequest<ManagedObject>? {
        fetchRequestTemplateStore.templates[name]?.copy()
    }

    /// A fetch request made from the template named `name`, each `$VARIABLE` of its predicate replaced by the
    /// value `variables` gives for `VARIABLE` (names without the `$`; values as for
    /// ``QueryPredicate/withSubstitutionVariables(_:)``); variables a SUBQUERY binds stay. Values for variables
    /// the predicate does not use are ignored. Nil when the model has no such template, as in Core Data.
    ///
    /// ```swift
    /// // <fetchRequest name="byAuthor" entity="Book" predicateString="author.name == $NAME"/>
    /// let request = try model.fetchRequestFromTemplate(withName: "byAuthor", substitutionVariables: ["NAME": "Le Guin"])
    /// let books = try context.fetch(request!)
    /// ```
    ///
    /// - Throws: ``ModelError/missingTemplateVariable(template:variable:)`` naming a variable of the predicate
    ///   that `variables` gives no value for; ``QueryLanguageError`` for a value of a type a predicate cannot
    ///   hold, or a predicate nesting deeper than ``QueryLanguageLimits/maximumNestingDepth``.
    public func fetchRequestFromTemplate(withName name: String,
                                         substitutionVariables variables: [String: Any]) throws -> FetchRequest<ManagedObject>? {
        guard let request = fetchRequestTemplate(forName: name) else { return nil }
        guard let predicate = request.predicate else { return request }
        var substitution = try QuerySubstitution(variables: variables)
        substitution.refusesUnknownVariables = true
        do {
            request.predicate = try substitution.substitute(predicate, bound: [])
        } catch let unknown as QuerySubstitution.UnknownVariable {
            throw ModelError.missingTemplateVariable(template: name, variable: unknown.name)
        }
        return request
    }

    /// ``fetchRequestFromTemplate(withName:substitutionVariables:)`` as a request for `type`: what the template's
    /// result type gives (`ManagedObjectID.self` for IDs, `[String: Any].self` for dictionaries, a managed object
    /// class for objects), so that templates of every result type can be run with
    /// ``ManagedObjectContext/fetch(_:)``.
    ///
    /// ```swift
    /// let ids = try context.fetch(model.fetchRequestFromTemplate(withName: "longBooks", substitutionVariables: [:],
    ///                                                             as: ManagedObjectID.self)!)
    /// ```
    ///
    /// - Throws: what ``fetchRequestFromTemplate(withName:substitutionVariables:)`` throws.
    public func fetchRequestFromTemplate<Result>(withName name: String, substitutionVariables variables: [String: Any],
                                                 as type: Result.Type) throws -> FetchRequest<Result>? {
        try fetchRequestFromTemplate(withName: name, substitutionVariables: variables)?.copy(as: type)
    }

    /// Stores a copy of `request` as the template named `name` (replacing one of that name), or removes the
    /// template when `request` is nil.
    ///
    /// Like the rest of a model, templates are fixed once the model is in use: changing one after a
    /// ``PersistentStoreCoordinator`` was made with the model is a programmer error (it stops the program, as
    /// changing an entity of a built model does; Core Data raises).
    ///
    /// - Throws: ``ModelError/invalidFetchRequestTemplate(name:reason:)`` when `name` is empty, the request
    ///   fetches an entity the model does not have, or its limit, offset or batch size is negative; nothing
    ///   is stored then.
    public func setFetchRequestTemplate(_ request: FetchRequest<ManagedObject>?, forName name: String) throws {
        if let request { try checkTemplate(request, named: name) }
        fetchRequestTemplateStore.set(request?.copy(), forName: name)
    }

    /// Marks the model as used by a coordinator: its templates are fixed from now on.
    func markInUse() { fetchRequestTemplateStore.markInUse() }

    /// Stores the templates a model file holds, each checked as ``setFetchRequestTemplate(_:forName:)`` checks.
    func addLoadedTemplates(_ templates: [(name: String, request: FetchRequest<ManagedObject>)]) throws {
        for (name, request) in templates {
            if fetchRequestTemplateStore.templates[name] != nil {
                throw ModelError.invalidFetchRequestTemplate(name: name, reason: "the model file holds two templates of that name")
            }
            try setFetchRequestTemplate(request, forName: name)
        }
    }

    private func checkTemplate(_ request: FetchRequest<ManagedObject>, named name: String) throws {
        func refuse(_ reason: String) -> ModelError { .invalidFetchRequestTemplate(name: name, reason: reason) }
        guard !name.isEmpty else { throw refuse("a template needs a name") }
        guard entitiesByName[request.entityName] != nil else {
            throw refuse("it fetches entity '\(request.entityName)', which the model does not have")
        }
        for (setting, value) in [("fetch limit", request.fetchLimit), ("fetch offset", request.fetchOffset),
                                 ("batch size", request.fetchBatchSize)] where value < 0 {
            throw refuse("its \(setting) is \(value), below 0")
        }
    }
}

extension FetchRequestResultType {
    /// The result type Core Data numbers `code` (`NSFetchRequestResultType`: 0 objects, 1 IDs, 2 dictionaries,
    /// 4 a count), as model files hold it; nil for another number.
    init?(coreDataCode code: Int) {
        switch code {
        case 0: self = .managedObject
        case 1: self = .managedObjectID
        case 2: self = .dictionary
        case 4: self = .count
        default: return nil
        }
    }

    /// Core Data's number for the result type (`NSFetchRequestResultType`).
    var coreDataCode: Int {
        switch self {
        case .managedObject: return 0
        case .managedObjectID: return 1
        case .dictionary: return 2
        case .count: return 4
        }
    }
}
