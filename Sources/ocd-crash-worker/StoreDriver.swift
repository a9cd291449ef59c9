import Foundation
import OpenCoreData

/// Carries out plans on a real store through the library, and reads its progress back.
struct StoreDriver {
    let coordinator: PersistentStoreCoordinator

    /// Opens the store, with persistent history tracking when `history` is set.
    init(storePath: String, history: Bool = false) throws {
        coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: storePath),
                                           options: StoreOptions(persistentHistoryTracking: history))
    }

    /// A context whose commits the history records under `author`.
    func context(author: String? = nil) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = author
        return context
    }

    /// The last iteration whose save committed (0 for a new store).
    func committedIteration() throws -> Int {
        let progress = try context().fetch(FetchRequest<ManagedObject>(entityName: "Progress"))
        guard let first = progress.first else { return 0 }
        return Int(try first.value(forKey: "iteration") as? Int64 ?? 0)
    }

    private func byName(_ context: ManagedObjectContext, _ entity: String, _ key: String) throws -> [String: ManagedObject] {
        var result: [String: ManagedObject] = [:]
        for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity)) {
            if let name = try object.value(forKey: key) as? String { result[name] = object }
        }
        return result
    }

    /// Runs one iteration: the batch request (idempotent, so a rerun after a crash is harmless), then one
    /// save that also records the iteration number.
    func perform(_ plan: Plan) throws {
        if let batch = plan.batch { try perform(batch, iteration: plan.iteration) }
        let context = context(author: "save")
        let folders = try byName(context, "Folder", "name")
        let notes = try byName(context, "Note", "title")
        let labels = try byName(context, "Label", "name")
        var newFolders: [String: ManagedObject] = [:]
        for name in plan.newFolders {
            let folder = try context.insertNewObject(forEntityName: "Folder")
            try folder.setValue(name, forKey: "name")
            newFolders[name] = folder
        }
        var allLabels = labels
        for name in plan.newLabels {
            let label = try context.insertNewObject(forEntityName: "Label")
            try label.setValue(name, forKey: "name")
            allLabels[name] = label
        }
        let allFolders = folders.merging(newFolders) { a, _ in a }
        for spec in plan.newNotes {
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue(spec.title, forKey: "title")
            try note.setValue(spec.rank, forKey: "rank")
            try note.setValue(spec.body, forKey: "body")
            if spec.blobSize > 0 {
                try note.setValue(Blob.bytes(size: spec.blobSize, seed: plan.iteration), forKey: "blob")
            }
            if let folder = spec.folder { try note.setValue(allFolders[folder], forKey: "folder") }
            for label in spec.labels { try note.add(allLabels[label]!, toKey: "labels") }
            if let path = spec.attachment {
                let attachment = try context.insertNewObject(forEntityName: "Attachment")
                try attachment.setValue(path, forKey: "path")
                try note.setValue(attachment, forKey: "attachment")
            }
        }
        for edit in plan.edits {
            guard let note = notes[edit.title] else { continue }
            try note.setValue(edit.rank, forKey: "rank")
            try note.setValue(edit.body, forKey: "body")
            if let name = edit.toggledLabel, let label = allLabels[name] {
                let current = try note.value(forKey: "labels") as? Set<ManagedObject> ?? []
                if current.contains(label) { try note.remove(label, fromKey: "labels") } else { try note.add(label, toKey: "labels") }
            }
            if let move = edit.moveTo { try note.setValue(move == "-" ? nil : allFolders[move], forKey: "folder") }
        }
        for title in plan.deletedNotes { if let note = notes[title] { context.delete(note) } }
        for name in plan.deletedLabels { if let label = labels[name] { context.delete(label) } }
        for name in plan.deletedFolders { if let folder = folders[name] { context.delete(folder) } }
        let progress = try context.fetch(FetchRequest<ManagedObject>(entityName: "Progress")).first
            ?? context.insertNewObject(forEntityName: "Progress")
        try progress.setValue(Int64(plan.iteration), forKey: "iteration")
        try context.save()
    }

    private func perform(_ batch: Plan.Batch, iteration: Int) throws {
        let context = context(author: "batch")
        switch batch {
        case .updateRanks(let rank):
            let request = BatchUpdateRequest(entityName: "Note")
            request.propertiesToUpdate = ["rank": rank]
            _ = try context.execute(request)
        case .deleteNotes(let titles):
            let notes = try byName(context, "Note", "title")
            let ids = titles.compactMap { notes[$0]?.objectID }
            if !ids.isEmpty { _ = try context.execute(BatchDeleteRequest(objectIDs: ids)) }
        case .insertLabels(let names):
            let labels = try byName(context, "Label", "name")
            if labels[names[0]] == nil {
                _ = try context.execute(BatchInsertRequest(entityName: "Label", objects: names.map { ["name": $0] }))
            }
        }
    }
}
