import Foundation
import Testing
@testable import OpenCoreData

/// `ContextDidSave.changedKeys` as a save records it (runs of objects sharing keys) behaves as a plain
/// dictionary value: reads, element writes, and copies that do not see each other's writes.
@Suite struct ContextChangesTests {
    @Test func recordedChangedKeysReadAndWriteLikeADictionary() throws {
        let model = try TestModels.todo()
        let item = model.entitiesByName["Item"]!
        let ids = (1...5).map { ManagedObjectID(entity: item, primaryKey: Int64($0), store: nil) }
        var report = ContextDidSave()
        report.changedKeyGroups.append(ids[0], keys: ["name"], sameAsPrevious: false)
        report.changedKeyGroups.append(ids[1], keys: ["name"], sameAsPrevious: true)
        report.changedKeyGroups.append(ids[2], keys: ["done", "name"], sameAsPrevious: false)
        var expected: [ManagedObjectID: Set<String>] = [ids[0]: ["name"], ids[1]: ["name"], ids[2]: ["done", "name"]]
        #expect(report.changedKeys == expected)

        let copy = report
        report.changedKeys[ids[3]] = ["big"]
        expected[ids[3]] = ["big"]
        #expect(report.changedKeys == expected)
        #expect(copy.changedKeys[ids[3]] == nil)

        // Recording after the dictionary was read (and shared with a copy) keeps both right.
        let read = report
        _ = read.changedKeys
        report.changedKeyGroups.append(ids[4], keys: ["score"], sameAsPrevious: false)
        expected[ids[4]] = ["score"]
        #expect(report.changedKeys == expected)
        #expect(read.changedKeys[ids[4]] == nil)
    }
}
