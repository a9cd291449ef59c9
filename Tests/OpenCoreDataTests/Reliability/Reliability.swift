import Testing

/// The reliability harnesses (docs/RELIABILITY.md), one suite per concept, gathered so that
/// `swift test --filter Reliability` runs them all. Serialized: several measure time or memory, and the
/// crash and soak runs would starve each other on a small machine.
@Suite(.serialized) enum Reliability {}
