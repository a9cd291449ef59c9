import Foundation

/// The migration policy classes a mapping model can name (`entityMigrationPolicyClassName`), by name: Core
/// Data finds them with `NSClassFromString`, which Swift has no equivalent of.
extension MigrationManager {
    /// The registrations, guarded by `lock`.
    private final class PolicyRegistry: @unchecked Sendable {
        // @unchecked Sendable: `byClassName` is read and written under `lock` only.
        let lock = NSLock()
        var byClassName: [String: EntityMigrationPolicy.Type] = [:]
    }

    private static let policyRegistry = PolicyRegistry()

    /// The class name Core Data's own policy has: a mapping naming it runs the default steps.
    static let defaultPolicyClassName = "NSEntityMigrationPolicy"

    /// Registers `policy` for mapping models that name it: under its module-qualified name
    /// (`MyApp.CarPolicy`), its own name (`CarPolicy`, which Xcode's `.CarPolicy` also finds), and
    /// `className` when given (whatever the mapping model writes). Register before the migration runs;
    /// a later registration of a name replaces the earlier one.
    public static func register(policy: EntityMigrationPolicy.Type, forClassName className: String? = nil) {
        policyRegistry.lock.withLock {
            policyRegistry.byClassName[String(reflecting: policy)] = policy
            policyRegistry.byClassName[String(describing: policy)] = policy
            if let className { policyRegistry.byClassName[className] = policy }
        }
    }

    /// Removes the registration of `className` (the name exactly as registered).
    public static func unregisterPolicy(forClassName className: String) {
        _ = policyRegistry.lock.withLock { policyRegistry.byClassName.removeValue(forKey: className) }
    }

    /// The policy class registered for `className` as a mapping model writes it (`MyApp.CarPolicy`,
    /// `.CarPolicy` or `CarPolicy`); the base ``EntityMigrationPolicy`` for `NSEntityMigrationPolicy`; nil
    /// when no class is registered under that name.
    public static func policy(forClassName className: String) -> EntityMigrationPolicy.Type? {
        if className == defaultPolicyClassName { return EntityMigrationPolicy.self }
        return policyRegistry.lock.withLock {
            if let policy = policyRegistry.byClassName[className] { return policy }
            // Xcode writes ".Name" for a class of the current module.
            if className.hasPrefix("."), let policy = policyRegistry.byClassName[String(className.dropFirst())] { return policy }
            return nil
        }
    }
}
