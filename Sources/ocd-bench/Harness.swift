import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Timing, medians and memory sampling. Nothing here knows about scenarios or SQLite.

/// Seconds on a monotonic clock.
func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

/// The median of some samples (the mean of the middle two for an even count); nil when empty.
func median(_ samples: [Double]) -> Double? {
    guard !samples.isEmpty else { return nil }
    let sorted = samples.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// A small deterministic random generator (SplitMix64), so ours and raw see the same "random" batches.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Resident memory of this process, read from /proc/self/statm (Linux).
enum ProcessMemory {
    static let pageSize: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
    }()

    /// Current resident set size in bytes (0 where /proc is not available).
    static func residentBytes(fd: Int32) -> Int {
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 127, 0) }
        guard count > 0 else { return 0 }
        // "size resident shared text lib data dt": the second field, in pages.
        var field = 0
        var value = 0
        for byte in buffer.prefix(count) {
            if byte == UInt8(ascii: " ") {
                if field == 1 { break }
                field += 1
                continue
            }
            if field == 1, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
        }
        return value * pageSize
    }

    static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return residentBytes(fd: fd)
    }

    /// Hands freed heap memory back to the kernel, so a run's baseline is not inflated by the last run's
    /// leftovers that malloc kept.
    static func trimHeap() {
        #if canImport(Glibc)
        // glibc's malloc_trim is not in the Glibc module; look it up once.
        if let trim = mallocTrim { _ = trim(0) }
        #endif
    }

    #if canImport(Glibc)
    private typealias MallocTrim = @convention(c) (Int) -> Int32
    private static let mallocTrim: MallocTrim? = {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: MallocTrim.self)
    }()
    #endif
}

/// Samples the resident set size on a background thread every `interval` and keeps the maximum.
///
/// VmHWM in /proc/self/status never goes down within a process, so it cannot tell one run's peak from
/// an earlier run's; this sampler measures the peak RSS *during* one run instead. Short spikes between
/// two samples can be missed; the interval is 2 ms.
final class MemorySampler: Sendable {
    private let peak = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let finished = Atomic<Bool>(false)
    let baseline: Int

    private init(baseline: Int) {
        self.baseline = baseline
        peak.store(baseline, ordering: .relaxed)
    }

    /// Starts sampling now; the baseline is the RSS at this moment.
    static func start(intervalMicroseconds: UInt32 = 2000) -> MemorySampler {
        let sampler = MemorySampler(baseline: ProcessMemory.residentBytes())
        let thread = Thread { [sampler] in
            let fd = open("/proc/self/statm", O_RDONLY)
            defer {
                if fd >= 0 { close(fd) }
                sampler.finished.store(true, ordering: .releasing)
            }
            guard fd >= 0 else { return }
            while sampler.running.load(ordering: .relaxed) {
                sampler.record(ProcessMemory.residentBytes(fd: fd))
                usleep(intervalMicroseconds)
            }
        }
        thread.stackSize = 1 << 16
        thread.start()
        return sampler
    }

    private func record(_ bytes: Int) {
        var current = peak.load(ordering: .relaxed)
        while bytes > current {
            let (exchanged, original) = peak.compareExchange(expected: current, desired: bytes, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }

    /// Stops sampling (taking one last sample) and returns the peak growth above the baseline, in bytes.
    func stop() -> Int {
        record(ProcessMemory.residentBytes())
        running.store(false, ordering: .relaxed)
        while !finished.load(ordering: .acquiring) { usleep(100) }
        return max(0, peak.load(ordering: .relaxed) - baseline)
    }
}

/// One run: what it took, how much memory it grew (memory runs only), and a checksum of the work it did.
struct RunSample {
    var seconds: Double
    var peakBytes: Int
    var checksum: Int
}

/// What a run measures. Each side's first run at a size measures memory: the heap is trimmed first, so
/// every page the run touches counts, and a thread samples the RSS. Its time is not counted. The timed
/// runs after it start from the heap as the previous run left it, as work in a running process does: a
/// trim before each of them made every byte a run allocated a page fault on both sides (a few
/// microseconds each on this machine), which timed the kernel's zeroing of pages more than the work.
enum RunKind: Sendable {
    case memory
    case timed

    /// The kind of the run in progress (read by scenarios and figures that only make sense in one of them).
    static var current: RunKind { currentIsMemory.load(ordering: .relaxed) ? .memory : .timed }
    fileprivate static let currentIsMemory = Atomic<Bool>(false)
}

func measure(_ kind: RunKind, _ prepare: () throws -> () throws -> Int) throws -> RunSample {
    // Set before `prepare`: figures recorded while a run is set up belong to that run too.
    RunKind.currentIsMemory.store(kind == .memory, ordering: .relaxed)
    defer { RunKind.currentIsMemory.store(false, ordering: .relaxed) }
    var body: (() throws -> Int)? = try prepare()
    var sampler: MemorySampler?
    if kind == .memory {
        ProcessMemory.trimHeap()
        sampler = MemorySampler.start()
    }
    let start = monotonicSeconds()
    var checksum = 0
    do {
        checksum = try body?() ?? 0
    } catch {
        _ = sampler?.stop()
        throw error
    }
    let seconds = monotonicSeconds() - start
    let peak = sampler?.stop() ?? 0
    body = nil
    return RunSample(seconds: seconds, peakBytes: peak, checksum: checksum)
}
