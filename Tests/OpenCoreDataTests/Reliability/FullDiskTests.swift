import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// A save that cannot be written (the file may not grow: RLIMIT_FSIZE in the worker, as a full disk
    /// would do) fails with a `StoreError`, leaves the store consistent, and a smaller save afterwards works.
    @Suite struct FullDiskTests {
        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
        func aSaveThatCannotBeWrittenFailsCleanly() throws {
            let directory = TemporaryDirectory()
            let url = directory.file("Full.sqlite")
            do {
                let coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
                try coordinator.addPersistentStore(type: .sqlite, at: url)
                let context = ManagedObjectContext(concurrencyType: .confinement)
                context.persistentStoreCoordinator = coordinator
                try context.insertNewObject(forEntityName: "Folder").setValue("kept", forKey: "name")
                try context.save()
            }
            let result = try WorkerProcess.run(["file-limit", url.path, String(1 << 20)])
            #expect(result.status == 0, "the worker died: \(result.output)")
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("big: StoreError") == true, "\(lines)")
            #expect(lines.dropFirst().first == "small: saved", "\(lines)")

            let model = try CrashModel.make()
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .sqlite, at: url)
            #expect(try StoreInvariants.violations(at: url, model: model).isEmpty)
            let lines2 = try CrashModel.canonicalLines(of: coordinator)
            #expect(lines2.contains("folder kept"))
            #expect(!lines2.contains { $0.hasPrefix("note big ") }, "the failed save left its note")
            print("FullDiskTests: \(lines.joined(separator: " | "))")
        }
    }
}
