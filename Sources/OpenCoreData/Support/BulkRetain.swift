import CSwiftRuntime

// Unsafe: the runtime's counts are changed by hand, so each caller must balance them as the methods below
// say (`BulkRetainTests` check the counts are left as found). Saves an atomic increment of one shared cache
// line per value holding the object (at 1,000,000 rows `async-fetch-ids` 1.24–1.26× → 1.09–1.10×, `fetch-all`
// 1.92–1.94× → 1.83–1.84×; docs/performance-log.md, "References added in bulk").
extension Unmanaged {
    /// Adds `count` strong references to the object with one atomic increment per 2³² − 1 of them, where
    /// `count` separate retains would each be one. Every reference added must then be taken exactly once,
    /// with `takeRetainedValue()` (which hands it over without retaining again) or given back with
    /// ``release(count:)``.
    @inline(__always)
    func retain(count: Int) {
        var remaining = count
        while remaining > 0 {
            let step = min(remaining, Int(UInt32.max))
            _ = swift_retain_n(toOpaque(), UInt32(step))
            remaining -= step
        }
    }

    /// Removes `count` strong references added with ``retain(count:)`` and not taken.
    @inline(__always)
    func release(count: Int) {
        var remaining = count
        while remaining > 0 {
            let step = min(remaining, Int(UInt32.max))
            swift_release_n(toOpaque(), UInt32(step))
            remaining -= step
        }
    }
}

/// Strong references to one object for many values made in a row that each hold it (object IDs and their
/// entity, a batch's objects and their context, rows and their block): added a batch at a time with one
/// atomic increment and handed out one by one, where each value would otherwise retain the object itself,
/// one increment of the same cache line each.
///
/// The object must stay alive while references are handed out (the caller holds it); ``finish()`` gives
/// back those not handed out, and must run before the value goes (a `defer` where the loop may throw).
struct SharedReferences<Object: AnyObject> {
    // Unretained: the caller holds the object while references are handed out, and every reference handed
    // out was added by `retain(count:)`, so `takeRetainedValue()` takes no retain of its own.
    private let object: Unmanaged<Object>
    private var available = 0

    init(to object: Object) {
        self.object = .passUnretained(object)
    }

    /// One strong reference for the caller to keep. When none is left, `upcoming` are added at once (at
    /// least one): the references the caller expects to take from here on, this one included.
    @inline(__always)
    mutating func take(expecting upcoming: Int) -> Object {
        if available == 0 {
            available = max(1, upcoming)
            object.retain(count: available)
        }
        available -= 1
        return object.takeRetainedValue()
    }

    /// Gives back the references added and not taken.
    @inline(__always)
    mutating func finish() {
        if available > 0 {
            object.release(count: available)
            available = 0
        }
    }
}
