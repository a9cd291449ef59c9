import Foundation
import Testing
@testable import OpenCoreData

@Suite struct ResultsChangeTests {
    private func controller(_ context: ManagedObjectContext, batchSize: Int = 0) throws -> FetchedResultsController<ManagedObject> {
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(batchSize: batchSize),
                                                      managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        try controller.performFetch()
        return controller
    }

    private func fresh(_ context: ManagedObjectContext) throws -> [[ManagedObjectID]] {
        try controller(context).sectionObjectIDs
    }

    @Test func ownChangesOnProcessPendingChanges() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        let banks = try BankFixture.seed(context, count: 12)
        let frc = try controller(context)
        let recorder = ContractRecorder(frc)
        var differences: [FetchedResultsDifference] = []
        frc.onDifference = { differences.append($0) }

        let new = try BankFixture.insertBank(context, name: "N", state: "AK", closeDate: nil)
        context.processPendingChanges()
        #expect(recorder.sectionLog.map(\.0) == [.insert])
        #expect(recorder.log.map(\.0) == [.insert])
        #expect(recorder.log.first?.2 == IndexPath(item: 0, section: 0))
        #expect(frc.indexPath(forObject: new) == IndexPath(item: 0, section: 0))

        try banks[0].setValue("Renamed", forKey: "name")            // no key change: update
        context.processPendingChanges()
        #expect(recorder.log.map(\.0) == [.update])
        #expect(differences.last?.updatedObjectIDs == [banks[0].objectID])

        context.delete(new)                                         // last of its section: section goes
        context.processPendingChanges()
        #expect(recorder.sectionLog.map(\.0) == [.delete])
        #expect(recorder.log.map(\.0) == [.delete])

        // An edit of a related object (details.closeDate) moves its bank.
        let details = try #require(banks[0].value(forKey: "details") as? ManagedObject)
        try details.setValue(Date.distantFuture, forKey: "closeDate")
        context.processPendingChanges()
        #expect(recorder.log.map(\.0) == [.move])
        #expect(frc.indexPath(forObject: banks[0]) == IndexPath(item: 0, section: 0))

        try context.save()          // temporary IDs become permanent
        #expect(recorder.problems.isEmpty)
        #expect(recorder.state == frc.sectionObjectIDs)
        #expect(try fresh(context) == frc.sectionObjectIDs)
    }

    @Test func anotherContextsSaveMerged() throws {
        let stack = try TestStack(model: TestModels.banks())
        let writer = stack.context()
        let banks = try BankFixture.seed(writer, count: 12)
        let reader = stack.context()
        let frc = try controller(reader, batchSize: 4)     // rows not loaded: the context holds no objects
        let recorder = ContractRecorder(frc)
        let saved = Captured<ContextDidSave?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification,
                                                              object: writer, queue: nil) { note in
            saved.value = note.userInfo?[ManagedObjectContext.didSaveKey] as? ContextDidSave
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try banks[2].setValue("AL", forKey: "state")
        writer.delete(banks[3])
        try BankFixture.insertBank(writer, name: "Z", state: "ZZ", closeDate: Date())
        try writer.save()
        reader.mergeChanges(fromContextDidSave: try #require(saved.value))
        #expect(recorder.transactions == 1)
        #expect(recorder.problems.isEmpty)
        #expect(recorder.state == frc.sectionObjectIDs)
        #expect(try fresh(stack.context()) == frc.sectionObjectIDs)
        #expect(frc.sections?.first?.name == "AL")
    }

    @Test func childSavePushesIntoParent() throws {
        let stack = try TestStack(model: TestModels.banks())
        let parent = stack.context()
        let banks = try BankFixture.seed(parent, count: 6)
        let frc = try controller(parent)
        let recorder = ContractRecorder(frc)
        let child = ManagedObjectContext(concurrencyType: .confinement)
        child.parent = parent
        try BankFixture.insertBank(child, name: "Kid", state: "CA", closeDate: Date.distantFuture)
        let mine = try child.existingObject(with: banks[4].objectID)
        try mine.setValue("AA", forKey: "state")
        try child.save()
        #expect(recorder.transactions == 1)
        #expect(recorder.problems.isEmpty)
        #expect(recorder.state == frc.sectionObjectIDs)
        #expect(frc.sections?.map(\.name).first == "AA")
        #expect(try fresh(parent) == frc.sectionObjectIDs)
    }

    @Test func remoteSaveMergedIntoContexts() throws {
        let stack = try TestStack(model: TestModels.banks())
        let writer = stack.context()
        let banks = try BankFixture.seed(writer, count: 12)
        let reader = stack.context()
        let frc = try controller(reader)
        let recorder = ContractRecorder(frc)
        // As after a batch request: the store changed, the IDs are reported.
        try banks[5].setValue("MA", forKey: "state")
        writer.delete(banks[6])
        try writer.save()
        var changes = ContextDidSave()
        changes.updatedObjectIDs = [banks[5].objectID]
        changes.deletedObjectIDs = [banks[6].objectID]
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: changes, into: [reader])
        #expect(recorder.problems.isEmpty)
        #expect(recorder.state == frc.sectionObjectIDs)
        #expect(try fresh(stack.context()) == frc.sectionObjectIDs)
    }

    @Test func differencesStream() async throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        try BankFixture.seed(context, count: 3)
        let frc = try controller(context)
        let stream = frc.differences
        try BankFixture.insertBank(context, name: "X", state: "CA", closeDate: nil)
        context.processPendingChanges()
        var iterator = stream.makeAsyncIterator()
        let difference = try #require(await iterator.next())
        #expect(difference.insertions.count == 1)
        #expect(difference.insertedObjectIDsBySection.count == 1)
    }

    @Test func resetRefetchesAndReports() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        try BankFixture.seed(context, count: 6)
        let frc = try controller(context)
        let recorder = ContractRecorder(frc)
        try BankFixture.insertBank(context, name: "Gone", state: "AA", closeDate: nil)
        context.processPendingChanges()
        context.rollback()
        #expect(recorder.problems.isEmpty)
        #expect(recorder.state == frc.sectionObjectIDs)
        #expect(frc.sections?.count == 6)
    }

    /// Thousands of random change sets; after each, the reports applied to the previous state must give
    /// exactly what a fresh fetch gives.
    @Test func randomChangeSetsMatchFreshFetch() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        let states = ["AK", "CA", "FL", "NY", "TX", "WA", "ZZ"]
        try BankFixture.seed(context, count: 25, states: ["CA", "NY", "TX"])
        let frc = try controller(context, batchSize: 7)
        let recorder = ContractRecorder(frc)
        var differenceState = frc.sectionObjectIDs
        var differenceFailures = 0
        frc.onDifference = { difference in
            if let next = difference.applying(to: differenceState) { differenceState = next } else { differenceFailures += 1 }
        }
        var rng = SeededGenerator(seed: 0xF_2C)
        let rounds = 2000
        for round in 0..<rounds {
            let banks = Array(context.registeredObjects.filter { $0.entity.name == "FailedBankInfo" && !$0.isDeleted })
                .sorted { "\($0.objectID)" < "\($1.objectID)" }
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let dice = Int.random(in: 0..<100, using: &rng)
                if dice < 25 || banks.isEmpty {
                    try BankFixture.insertBank(context, name: "B\(round)", state: states.randomElement(using: &rng),
                                               closeDate: Bool.random(using: &rng)
                                                ? Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<50, using: &rng)))
                                                : nil)
                } else if let bank = banks.randomElement(using: &rng), !bank.isDeleted {
                    switch dice {
                    case 25..<45: context.delete(bank)
                    case 45..<70: try bank.setValue(states.randomElement(using: &rng), forKey: "state")
                    case 70..<80: try bank.setValue("renamed \(round)", forKey: "name")
                    default:
                        if let details = try bank.value(forKey: "details") as? ManagedObject {
                            try details.setValue(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<50, using: &rng))),
                                                 forKey: "closeDate")
                        }
                    }
                }
            }
            if round % 17 == 16 { try context.save() } else { context.processPendingChanges() }
            let expected = try fresh(context)
            #expect(recorder.problems.isEmpty, "round \(round): \(recorder.problems)")
            func brief(_ state: [[ManagedObjectID]]) -> String {
                state.map { $0.map { $0.uriRepresentation().lastPathComponent }.joined(separator: " ") }.joined(separator: " | ")
            }
            #expect(brief(recorder.state) == brief(expected), "round \(round)")
            #expect(brief(frc.sectionObjectIDs) == brief(expected), "round \(round)")
            #expect(brief(differenceState) == brief(expected), "round \(round)")
            if !recorder.problems.isEmpty || recorder.state != expected || differenceState != expected { break }
            // Keep the store from growing without bound.
            if frc.fetchedObjects?.count ?? 0 > 60 {
                for bank in banks.prefix(20) where !bank.isDeleted { context.delete(bank) }
                context.processPendingChanges()
            }
        }
        #expect(differenceFailures == 0)
        #expect(frc.statistics.incrementalUpdates > rounds / 2)
        #expect(frc.statistics.recoveryFetches == 0)
    }
}
