/// Carries a non-Sendable value across a queue hop whose ordering makes the access safe (for example,
/// objects built on a reader thread and handed, untouched, to their context's queue).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
