#if DEBUG
/// What tests (and debug builds after each change of the pool) check about the spare pool; not built in release.
extension SparePool {
    /// What breaks the pool's invariants, in words: empty when it is sound.
    ///
    /// - A spare kept for reuse (still flagged registered) is one ``accepts(_:)`` allows to be given another
    ///   row; every other spare is forgotten (not flagged registered) and only waits to be freed.
    /// - No spare appears twice (it would be given two rows).
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var seen = Set<ObjectIdentifier>()
        for (index, object) in objects.enumerated() {
            if object.flags.contains(.registered) && !Self.accepts(object) {
                problems.append("spare \(index) (\(object.objectID)) is kept for reuse but may not be given another row")
            }
            if !seen.insert(ObjectIdentifier(object)).inserted { problems.append("spare \(index) (\(object.objectID)) is in the pool twice") }
        }
        return problems
    }
}
#endif
