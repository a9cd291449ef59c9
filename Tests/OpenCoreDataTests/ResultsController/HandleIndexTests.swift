import Testing
@testable import OpenCoreData

/// The handle index against a plain dictionary, through random sets, moves and removals of dense keys,
/// keys past the end, far keys and negative (unsaved) handles.
@Suite struct HandleIndexTests {
    private func check(_ index: HandleIndex, _ reference: [Int64: UInt32], probes: [Int64]) {
        #expect(index.count == reference.count)
        for handle in probes where index[handle] != reference[handle] {
            Issue.record("handle \(handle): \(String(describing: index[handle])) instead of \(String(describing: reference[handle]))")
            return
        }
    }

    @Test(arguments: [0, 1, 2, 3])
    func agreesWithADictionary(shape: Int) {
        var generator = SeededGenerator(seed: UInt64(shape) &+ 99)
        // Shapes: dense from 1; dense with holes; sparse from the start; empty.
        let initial: [Int64] = switch shape {
        case 0: Array(1...2_000)
        case 1: (1...3_000).filter { $0 % 3 != 0 }
        case 2: (0..<500).map { Int64($0) * 1_000_003 + 7 }
        default: []
        }
        var reference: [Int64: UInt32] = [:]
        var index = HandleIndex(largest: initial.max() ?? 0, count: initial.count)
        for handle in initial {
            let chunk = UInt32.random(in: 0..<40, using: &generator)
            index.set(handle, chunk: chunk)
            reference[handle] = chunk
        }
        var probes = Set(initial)
        check(index, reference, probes: Array(probes))
        let largest = initial.max() ?? 0
        for _ in 0..<4_000 {
            let handle: Int64 = switch Int.random(in: 0..<6, using: &generator) {
            case 0: Int64.random(in: 1...max(1, largest), using: &generator)      // an existing area
            case 1: largest + Int64.random(in: 1...64, using: &generator)          // the next keys
            case 2: -Int64.random(in: 1...500, using: &generator)                  // unsaved objects
            case 3: Int64.random(in: 1...Int64.max / 2, using: &generator)         // far away
            default: reference.keys.randomElement(using: &generator) ?? 1
            }
            probes.insert(handle)
            if Bool.random(using: &generator) {
                let chunk = UInt32.random(in: 0..<40, using: &generator)
                index.set(handle, chunk: chunk)
                reference[handle] = chunk
            } else {
                #expect(index.remove(handle) == reference.removeValue(forKey: handle))
            }
        }
        check(index, reference, probes: Array(probes) + [0, Int64.min, Int64.max])
    }
}
