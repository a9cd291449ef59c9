import Foundation
import Logging

/// Finds the Swift class a model file names for an entity (`representedClassName`), so that a model
/// loaded from an `.xcdatamodeld` makes objects of the program's classes with no code, as Core Data does.
///
/// A class name is looked up in this order:
/// 1. a class registered for the entity's name (``register(_:forEntityName:)``);
/// 2. a class registered under the name as written (`MyApp.Person`), or, for `.Person` (Xcode's "Current
///    Product Module") and `Person`, under its own name;
/// 3. the Swift runtime's class of that name: `MyApp.Person` as written; `.Person` and `Person` in the
///    running program's module (SwiftPM names it after the executable, `-` becoming `_`), then in each
///    module of ``searchModules``.
///
/// The runtime finds top-level classes of a module only; a class it cannot see (in a test bundle, nested in
/// another type, in a library whose name the program does not know) is registered before the model is
/// loaded. An entity whose class is not found makes plain ``ManagedObject``s, with a warning logged, as Core
/// Data does.
///
/// ```swift
/// ManagedObjectClassRegistry.register(Person.self)          // "Person", ".Person", "MyLibrary.Person"
/// let model = try ManagedObjectModel(contentsOf: modelURL)   // entity Person now makes Person objects
/// ```
public enum ManagedObjectClassRegistry {
    /// The registrations and the models' bindings, guarded by `lock`.
    private final class State: @unchecked Sendable {
        // @unchecked Sendable: every field is read and written under `lock`.
        let lock = NSLock()
        var byClassName: [String: ManagedObject.Type] = [:]
        var byEntityName: [String: ManagedObject.Type] = [:]
        var searchModules: [String] = []
        var warnsAboutMissingClasses = true
        /// `class/entity` pairs already warned about: each is said once per process.
        var warned: Set<String> = []
        /// For each class a model binds, that model (weakly: models come and go) and the entity's name.
        var bindings: [ObjectIdentifier: (model: WeakModel, entityName: String)] = [:]
    }

    struct WeakModel { weak var model: ManagedObjectModel? }

    private static let state = State()
    static let logger = Logger(label: "OpenCoreData.ManagedObjectClassRegistry")

    /// Registers a class for model files that name it: under its module-qualified name (`MyApp.Person`)
    /// and its own name (`Person`, which `.Person` also finds), and for `entityName` when given (whatever
    /// class name the file writes for that entity). Register before loading the model.
    public static func register(_ objectClass: ManagedObject.Type, forEntityName entityName: String? = nil) {
        state.lock.withLock {
            state.byClassName[String(reflecting: objectClass)] = objectClass
            state.byClassName[String(describing: objectClass)] = objectClass
            if let entityName { state.byEntityName[entityName] = objectClass }
        }
    }

    /// Modules searched, after the program's own, for `.Person` and `Person` (say a library's module that
    /// declares the classes).
    public static var searchModules: [String] {
        get { state.lock.withLock { state.searchModules } }
        set { state.lock.withLock { state.searchModules = newValue } }
    }

    /// Whether an entity whose class cannot be found is logged (once per class and entity, as Core Data
    /// logs it). Tools that work on any model through ``ManagedObject`` itself turn it off.
    public static var warnsAboutMissingClasses: Bool {
        get { state.lock.withLock { state.warnsAboutMissingClasses } }
        set { state.lock.withLock { state.warnsAboutMissingClasses = newValue } }
    }

    /// The running program's module as SwiftPM names it: the executable's name, with characters not allowed
    /// in a Swift identifier made `_`.
    static var programModuleName: String { moduleName(forExecutable: CommandLine.arguments.first ?? "") }

    /// The module SwiftPM makes for the executable at `path`: its file name up to the first `.`, with
    /// characters not allowed in a Swift identifier made `_` (`ocd-bench` → `ocd_bench`).
    static func moduleName(forExecutable path: String) -> String {
        let executable = URL(fileURLWithPath: path).lastPathComponent
        let base = executable.split(separator: ".").first.map(String.init) ?? executable
        return String(base.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }

    /// The class for an entity whose model file names `className`, or nil when none can be found.
    static func resolve(className: String, entityName: String) -> ManagedObject.Type? {
        let simpleName = className.hasPrefix(".") ? String(className.dropFirst()) : className
        let qualified = !className.hasPrefix(".") && className.contains(".")
        let (registered, modules) = state.lock.withLock { () -> (ManagedObject.Type?, [String]) in
            let found = state.byEntityName[entityName] ?? state.byClassName[className]
                ?? (qualified ? nil : state.byClassName[simpleName])
            return (found, state.searchModules)
        }
        if let registered { return registered }
        if qualified { return _typeByName(className) as? ManagedObject.Type }
        for module in [programModuleName] + modules {
            if let found = _typeByName("\(module).\(simpleName)") as? ManagedObject.Type { return found }
        }
        return nil
    }

    /// Gives each entity that names a class and has none yet the class found for it; warns of those whose
    /// class cannot be found (they keep making ``ManagedObject``s).
    static func bindClasses(of entities: [EntityDescription]) {
        for entity in entities where entity.managedObjectClass == ManagedObject.self {
            guard let className = entity.managedObjectClassName, className != "NSManagedObject",
                  className != "ManagedObject" else { continue }
            if let found = resolve(className: className, entityName: entity.name) {
                entity.managedObjectClass = found
            } else if state.lock.withLock({
                state.warnsAboutMissingClasses && state.warned.insert("\(className)/\(entity.name)").inserted
            }) {
                logger.warning("""
                    No class '\(className)' found for entity '\(entity.name)': its objects are ManagedObject. \
                    Register the class with ManagedObjectClassRegistry.register(_:) before loading the model.
                    """)
            }
        }
    }

    /// Remembers, for each class `model` binds, the model and entity (for ``ManagedObject/entityName``,
    /// `entity()` and `fetchRequest()` of the class). The model built last wins.
    static func noteBindings(of model: ManagedObjectModel) {
        let bound = model.entities.filter { $0.managedObjectClass != ManagedObject.self }
        guard !bound.isEmpty else { return }
        state.lock.withLock {
            for entity in bound {
                state.bindings[ObjectIdentifier(entity.managedObjectClass)] = (WeakModel(model: model), entity.name)
            }
        }
    }

    /// The entity a model built most recently binds to `objectClass`, if that model is still in use.
    static func boundEntity(of objectClass: ManagedObject.Type) -> EntityDescription? {
        let binding = state.lock.withLock { state.bindings[ObjectIdentifier(objectClass)] }
        guard let binding, let model = binding.model.model else { return nil }
        return model.entitiesByName[binding.entityName]
    }

    /// The name of the entity a model built most recently binds to `objectClass`.
    static func boundEntityName(of objectClass: ManagedObject.Type) -> String? {
        state.lock.withLock { state.bindings[ObjectIdentifier(objectClass)]?.entityName }
    }
}
