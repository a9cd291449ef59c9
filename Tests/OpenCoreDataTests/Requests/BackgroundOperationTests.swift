import Foundation
import Testing
@testable import OpenCoreData

let mainQueueMark: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

final class RecordingDelegate: ContextOperationDelegate, @unchecked Sendable {
    let lock = NSLock()
    var reports: [(Int, Bool, [String: any Sendable])] = []
    var onReport: (() -> Void)?
    func operation(_ operation: ContextOperation, didCompleteWith result: Result<[String: any Sendable], Error>) {
        let onMain = DispatchQueue.getSpecific(key: mainQueueMark) == true
        lock.withLock { reports.append((operation.identifier, onMain, (try? result.get()) ?? [:])) }
        onReport?()
    }
}

final class AverageScoreOperation: ContextOperation, @unchecked Sendable {
    override func performWork(in context: ManagedObjectContext) throws -> [String: any Sendable] {
        let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
        let total = try items.reduce(0.0) { $0 + ((try $1.value(forKey: "score") as? Double) ?? 0) }
        return ["result": items.isEmpty ? 0 : total / Double(items.count)]
    }
}

@Suite struct BackgroundOperationTests {
    static func stack() throws -> TestStack {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        for index in 0..<10 {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("i\(index)", forKey: "name")
            try item.setValue(Double(index), forKey: "score")
            try item.setValue(index % 2 == 0, forKey: "done")
        }
        try context.save()
        return stack
    }

    @Test func operationsReportOnTheMainQueueAsEachFinishes() async throws {
        let stack = try Self.stack()
        _ = mainQueueMark
        let delegate = RecordingDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            delegate.onReport = {
                if delegate.lock.withLock({ delegate.reports.count }) == 2 { continuation.resume() }
            }
            let average = AverageScoreOperation(coordinator: stack.coordinator, delegate: delegate)
            average.identifier = 1
            let count = ContextOperation(coordinator: stack.coordinator, work: { context in
                let request = FetchRequest<ManagedObject>(entityName: "Item")
                return ["result": try context.count(for: request)]
            }, completion: { _, _ in })
            count.identifier = 2
            count.delegate = delegate
            queue.addOperations([average, count], waitUntilFinished: false)
        }
        let reports = delegate.lock.withLock { delegate.reports }
        #expect(reports.allSatisfy { $0.1 })
        let byID = Dictionary(uniqueKeysWithValues: reports.map { ($0.0, $0.2["result"]) })
        #expect(byID[1] as? Double == 4.5)
        #expect(byID[2] as? Int == 10)
    }

    @Test func idsFromABackgroundFetchMaterializeWithoutRerunningTheQuery() throws {
        let stack = try Self.stack()
        let background = stack.context(.privateQueue)
        let ids: [ManagedObjectID] = try background.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.sortDescriptors = [QuerySortDescriptor(key: "name")]
            return try background.fetch(request).map(\.objectID)
        }
        let main = stack.context(.confinement)
        let store = try #require(stack.coordinator.persistentStores[0] as? SQLiteStore)
        let readsBefore = store.readCount.load(ordering: .relaxed)
        let names = try ids.map { try main.object(with: $0).value(forKey: "name") as? String }
        #expect(names == (0..<10).map { "i\($0)" })
        #expect(store.readCount.load(ordering: .relaxed) == readsBefore)
    }
}
