import Foundation
import Testing
@testable import OpenCoreData

@Suite struct ResultsPredicateTests {
    func controller(_ context: ManagedObjectContext, predicate: String, batchSize: Int = 0) throws -> FetchedResultsController<ManagedObject> {
        let request = BankFixture.request(batchSize: batchSize)
        request.predicate = try QueryPredicate(format: predicate)
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: "state", cacheName: nil)
        try controller.performFetch()
        return controller
    }

    @Test func objectsEnterAndLeaveThroughThePredicate() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        let banks = try BankFixture.seed(context, count: 24)
        let predicate = "state != 'TX' AND details.closeDate > CAST(2000, 'NSDate')"
        let frc = try controller(context, predicate: predicate, batchSize: 5)
        let recorder = ContractRecorder(frc)
        let fresh = { try self.controller(context, predicate: predicate).sectionObjectIDs }
        #expect(frc.sectionObjectIDs == (try fresh()))
        #expect(!(frc.sections ?? []).contains { $0.name == "TX" })

        // Leaves by its own key, comes in by its own key, leaves and comes back through a relationship.
        try banks[6].setValue("TX", forKey: "state")
        try banks[5].setValue("CA", forKey: "state")   // was TX
        let details = try #require(banks[7].value(forKey: "details") as? ManagedObject)
        try details.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "closeDate")
        context.processPendingChanges()
        #expect(recorder.state == (try fresh()))
        #expect(recorder.problems.isEmpty)
        try context.save()
        #expect(recorder.state == (try fresh()))

        // A save in another context, merged in.
        let other = stack.context()
        let copy = try other.existingObject(with: banks[7].objectID)
        let otherDetails = try #require(copy.value(forKey: "details") as? ManagedObject)
        try otherDetails.setValue(Date.distantFuture, forKey: "closeDate")
        let saved = Collector<ContextDidSave>()
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification,
                                                           object: other, queue: nil) { note in
            if let changes = note.userInfo?[ManagedObjectContext.didSaveKey] as? ContextDidSave { saved.append(changes) }
        }
        try other.save()
        NotificationCenter.default.removeObserver(token)
        context.mergeChanges(fromContextDidSave: try #require(saved.values.first))
        #expect(recorder.state == (try fresh()))
        #expect(frc.indexPath(forObject: banks[7]) != nil)
    }
}
