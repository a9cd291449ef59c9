import Foundation

/// What attributes and relationships have in common.
///
/// Descriptions are configured while a model is built and are frozen once a ``ManagedObjectModel`` is
/// created from them; changing one afterwards is a programmer error.
public class PropertyDescription: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: every stored property is written only before the owning model is frozen
    // (guarded by `checkMutable()`), and only read afterwards. The `@exclusivity(unchecked)` ones (here and in
    // subclasses) are read on hot paths (a key's name, an attribute's type and optionality); with no write
    // once the model is built their accesses cannot overlap, and each read skips a `swift_beginAccess`
    // (`load-batch-by-id`).

    /// The property's name, unique within its entity and its entity's ancestors.
    @exclusivity(unchecked) public var name: String { didSet { checkMutable() } }
    /// Whether the property may be nil (Core Data's default is `true`).
    @exclusivity(unchecked) public var isOptional: Bool = true { didSet { checkMutable() } }
    /// Transient properties live in memory only: no column, no version hash.
    @exclusivity(unchecked) public var isTransient: Bool = false { didSet { checkMutable() } }
    /// Read-only properties cannot be set through key-value calls.
    @exclusivity(unchecked) public var isReadOnly: Bool = false { didSet { checkMutable() } }
    /// Enters the version hash, to force a new hash without a schema change.
    public var versionHashModifier: String? { didSet { checkMutable() } }
    /// The name this property had in an earlier model version.
    public var renamingIdentifier: String? { didSet { checkMutable() } }
    /// Free-form information from the model file.
    public var userInfo: [String: String] = [:] { didSet { checkMutable() } }

    /// The entity that declares this property; set when the property is added to an entity.
    public internal(set) var entity: EntityDescription? {
        get { entityLink?.entity }
        set { entityLink = newValue?.link }
    }
    private weak var entityLink: EntityLink?

    @exclusivity(unchecked) var isFrozen = false

    init(name: String) {
        self.name = name
    }

    func checkMutable() {
        if isFrozen {
            preconditionFailure("\(type(of: self)) '\(name)' changed after its model was built")
        }
    }

    /// The description's class and `Entity.property`, for logs and debugging.
    public var description: String { "\(type(of: self))(\(entity?.name ?? "?").\(name))" }

    /// Whether the property has storage in the SQLite store.
    var isPersistent: Bool { !isTransient }
}
