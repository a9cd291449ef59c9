import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// Two processes read the same note; the first saves rank=1 and body=first; then the second saves its
    /// own edit (rank=2, and for store-trump body=second too) under each merge policy. The store must end as
    /// the policy says, and no change may vanish without the policy saying so.
    @Suite(.serialized) struct CrossProcessMergePolicyTests {
        struct Expectation: Sendable, CustomTestStringConvertible {
            var policy: String
            /// The second process's edit.
            var edit: [String]
            var secondSaves: Bool
            var rank: Int64
            var body: String
            var testDescription: String { policy }
        }

        static let cases: [Expectation] = [
            Expectation(policy: "error", edit: ["rank=2"], secondSaves: false, rank: 1, body: "first"),
            Expectation(policy: "rollback", edit: ["rank=2"], secondSaves: true, rank: 1, body: "first"),
            Expectation(policy: "objectTrump", edit: ["rank=2"], secondSaves: true, rank: 2, body: "first"),
            Expectation(policy: "storeTrump", edit: ["rank=2", "body=second"], secondSaves: true, rank: 1, body: "first"),
            // Overwrite writes the second process's whole object, as it read it: body goes back to "original".
            Expectation(policy: "overwrite", edit: ["rank=2"], secondSaves: true, rank: 2, body: "original"),
        ]

        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage), arguments: cases)
        func secondWriterFollowsItsPolicy(_ expected: Expectation) throws {
            let directory = TemporaryDirectory()
            let url = directory.file("Shared.sqlite")
            do {
                let coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
                try coordinator.addPersistentStore(type: .sqlite, at: url)
                let context = ManagedObjectContext(concurrencyType: .confinement)
                context.persistentStoreCoordinator = coordinator
                let note = try context.insertNewObject(forEntityName: "Note")
                try note.setValue("shared", forKey: "title")
                try note.setValue("original", forKey: "body")
                try context.save()
            }
            let first = try WorkerProcess.start(["edit", url.path, "error", "rank=1", "body=first"], withInput: true)
            #expect(first.waitForLine("read"))
            let second = try WorkerProcess.start(["edit", url.path, expected.policy] + expected.edit, withInput: true)
            #expect(second.waitForLine("read"))
            // Both have read; the first saves, then the second.
            first.send("go\n")
            let firstSaid = first.readAllOutput()
            try first.wait()
            second.send("go\n")
            let secondSaid = second.readAllOutput()
            try second.wait()
            #expect(firstSaid.contains("saved"))
            #expect(secondSaid.contains("saved") == expected.secondSaves, "\(expected.policy): \(secondSaid)")
            if !expected.secondSaves { #expect(secondSaid.contains("ObjectGraphError")) }

            let queue = try DatabaseQueue(path: url.path)
            let row = try #require(try queue.read { try Row.fetchOne($0, sql: "SELECT ZRANK, ZBODY, Z_OPT FROM ZNOTE") })
            #expect(row[0] as Int64 == expected.rank && row[1] as String == expected.body,
                    "\(expected.policy): rank \(row[0] as Int64), body \(row[1] as String)")
            #expect(try StoreInvariants.violations(at: url, model: try CrashModel.make()).isEmpty)
        }
    }
}
