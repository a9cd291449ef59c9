import Foundation

/// Turning a context's change reports into the controller's reports.
extension FetchedResultsController {
    /// Called on the context's queue for each `ObjectsDidChange`.
    func contextDidChange(_ change: ObjectsDidChange) {
        guard tracker != nil else { return }
        do {
            if change.invalidatedAll {
                try refetchAndReport()
            } else {
                let candidates = try candidates(for: change)
                guard !candidates.isEmpty else { return }
                try apply(candidates)
            }
        } catch {
            // A key could not be read or compared: start over from the store, quietly.
            statistics.recoveryFetches += 1
            try? performFetch()
        }
    }

    /// The objects whose place in the results may have changed.
    private func candidates(for change: ObjectsDidChange) throws -> [ResultsChangeTracker.Candidate] {
        guard let tracker else { return [] }
        let context = managedObjectContext
        var candidates: [ResultsChangeTracker.Candidate] = []
        var seen = Set<ObjectIdentifier>()
        var seenIDs = Set<ManagedObjectID>()

        func consider(_ object: ManagedObject, oldID: ManagedObjectID? = nil) throws {
            guard seen.insert(ObjectIdentifier(object)).inserted else { return }
            let previous = oldID ?? object.objectID
            seenIDs.insert(previous)
            seenIDs.insert(object.objectID)
            let oldHandle = ResultsChangeTracker.handle(for: previous)
            var new: (handle: Int64, entity: Int32, keys: [StoreValue], id: ManagedObjectID)?
            do {
                if object.managedObjectContext === context, !object.isDeleted, try matches(object) {
                    let id = object.objectID
                    new = (ResultsChangeTracker.handle(for: id), Int32(id.entity.entityNumber),
                           try ordering(tracker).keyValues(of: object), id)
                }
            } catch ObjectGraphError.objectNotFound {
                new = nil       // its row is gone: it leaves the results
            }
            guard new != nil || tracker.rows.contains(oldHandle) else { return }
            candidates.append(.init(oldHandle: oldHandle, new: new, object: object, oldID: previous))
        }

        func isOfEntity(_ object: ManagedObject) -> Bool { isResultEntity(object.objectID.entity) }

        for (old, new) in change.renamedObjectIDs where tracker.rows.contains(ResultsChangeTracker.handle(for: old)) {
            if let object = context.registeredObject(for: new) { try consider(object, oldID: old) }
        }
        // Objects of other entities, with the keys they changed (nil: unknown): their owners are looked at
        // only when a key the request reads through them changed.
        var related: [(object: ManagedObject, changedKeys: Set<String>?)] = []
        for object in change.inserted.union(change.updated).union(change.refreshed) {
            if isOfEntity(object) { try consider(object) } else { related.append((object, change.changedKeys(of: object))) }
        }
        for object in change.deleted {
            if isOfEntity(object) {
                guard seen.insert(ObjectIdentifier(object)).inserted else { continue }
                seenIDs.insert(object.objectID)
                let handle = ResultsChangeTracker.handle(for: object.objectID)
                if tracker.rows.contains(handle) {
                    candidates.append(.init(oldHandle: handle, new: nil, object: object, oldID: object.objectID))
                }
            } else {
                related.append((object, nil))
            }
        }
        if let merged = change.mergedChanges {
            // IDs the context does not hold (or holds as faults) are not in the sets above.
            let changed = merged.updatedObjectIDs.union(merged.insertedObjectIDs).filter { !seenIDs.contains($0) }
            let mine = changed.filter { isResultEntity($0.entity) }
            if !mine.isEmpty { _ = try context.materializer.loadBatch(Array(mine)) }
            for id in mine {
                if let object = try? context.object(with: id) { try consider(object) }
            }
            for id in changed where !isResultEntity(id.entity) && isOnDependencyChain(id.entity) {
                if let object = try? context.object(with: id) { related.append((object, change.changedKeys(of: object))) }
            }
            for id in merged.deletedObjectIDs where isResultEntity(id.entity) && !seenIDs.contains(id) {
                let handle = ResultsChangeTracker.handle(for: id)
                if tracker.rows.contains(handle) {
                    candidates.append(.init(oldHandle: handle, new: nil, object: nil, oldID: id))
                }
            }
        }
        for (object, changedKeys) in related {
            for owner in owners(of: object, changedKeys: changedKeys) where isOfEntity(owner) { try consider(owner) }
        }
        return candidates
    }

    private func ordering(_ tracker: ResultsChangeTracker) -> ResultsOrdering { tracker.ordering }

    private func isResultEntity(_ candidate: EntityDescription) -> Bool {
        guard let entity = tracker?.ordering.entity else { return false }
        return (fetchedRequest?.includesSubentities ?? true) ? candidate.isKind(of: entity) : candidate === entity
    }

    private func isOnDependencyChain(_ candidate: EntityDescription) -> Bool {
        dependenciesForChanges.contains { dependency in
            dependency.relationships.contains { $0.destinationEntity.map { candidate.isKind(of: $0) } ?? false }
        }
    }

    /// The result-entity objects whose key paths pass through `object` (walking inverse relationships),
    /// through those paths that read one of `changedKeys` on it (nil: any key may have changed).
    func owners(of object: ManagedObject, changedKeys: Set<String>?,
                dependencies: [ResultsDependency]? = nil) -> [ManagedObject] {
        var owners: [ManagedObject] = []
        // A deleted object's owners hear of it through their own change (nullify or cascade).
        guard !object.isDeleted else { return owners }
        for dependency in dependencies ?? dependenciesForChanges {
            let chain = dependency.relationships
            for depth in chain.indices {
                guard let destination = chain[depth].destinationEntity, object.entity.isKind(of: destination),
                      dependency.matters(changedKeys, atDepth: depth) else { continue }
                var level: [ManagedObject] = [object]
                var complete = true
                for step in stride(from: depth, through: 0, by: -1) {
                    guard let inverse = chain[step].inverseRelationship else { complete = false; break }
                    var previous: [ManagedObject] = []
                    for member in level where !member.isDeleted {
                        switch try? member.value(forKey: inverse.name) {
                        case let single as ManagedObject: previous.append(single)
                        case let set as Set<ManagedObject>: previous.append(contentsOf: set)
                        case let array as [ManagedObject]: previous.append(contentsOf: array)
                        default: break
                        }
                    }
                    level = previous
                }
                if complete { owners.append(contentsOf: level) }
            }
        }
        return owners
    }

    /// Applies candidates and reports.
    private func apply(_ candidates: [ResultsChangeTracker.Candidate]) throws {
        guard var tracker = self.tracker else { return }
        self.tracker = nil      // keep the state uniquely referenced while it changes
        forgetRecentBatch()
        let outcome: ResultsChangeTracker.Outcome
        do {
            outcome = try tracker.apply(candidates)
            self.tracker = tracker
        } catch {
            self.tracker = tracker
            throw error
        }
        statistics.incrementalUpdates += 1
        report(outcome, candidates: candidates)
    }

    /// Re-reads everything (after a reset or rollback) and reports the difference from before.
    private func refetchAndReport() throws {
        guard let old = tracker else { return }
        let fresh = try freshTracker()
        var candidates: [ResultsChangeTracker.Candidate] = []
        old.rows.forEach { handle, entity, _ in
            var new: (handle: Int64, entity: Int32, keys: [StoreValue], id: ManagedObjectID)?
            if let found = fresh.rows.find(handle), let id = fresh.objectID(handle: handle, entity: found.entity) {
                new = (handle, found.entity, found.keys, id)
            }
            candidates.append(.init(oldHandle: handle, new: new, object: nil, oldID: old.objectID(handle: handle, entity: entity)))
        }
        fresh.rows.forEach { handle, entity, keys in
            guard !old.rows.contains(handle), let id = fresh.objectID(handle: handle, entity: entity) else { return }
            candidates.append(.init(oldHandle: nil, new: (handle, entity, Array(keys), id), object: nil, oldID: nil))
        }
        try apply(candidates)
    }

    private func reportedObject(_ candidate: ResultsChangeTracker.Candidate, id: ManagedObjectID?) -> ManagedObject? {
        if let object = candidate.object { return object }
        guard let id else { return nil }
        if let registered = managedObjectContext.registeredObject(for: id) { return registered }
        return id.entity.managedObjectClass.init(entity: id.entity, id: id)
    }

    private func report(_ outcome: ResultsChangeTracker.Outcome, candidates: [ResultsChangeTracker.Candidate]) {
        guard !outcome.isEmpty else { return }
        var difference = FetchedResultsDifference()
        difference.removedSections = outcome.deletedSections.map { .init(index: $0.index, name: $0.name) }
        difference.insertedSections = outcome.insertedSections.map { .init(index: $0.index, name: $0.name) }
        for item in outcome.items {
            let candidate = candidates[item.candidate]
            switch item.kind {
            case .delete:
                if let id = candidate.oldID, let path = item.oldIndexPath { difference.removals.append(.init(objectID: id, indexPath: path)) }
            case .insert:
                if let id = candidate.new?.id, let path = item.newIndexPath { difference.insertions.append(.init(objectID: id, indexPath: path)) }
            case .move:
                if let id = candidate.oldID, let path = item.oldIndexPath { difference.removals.append(.init(objectID: id, indexPath: path)) }
                if let id = candidate.new?.id, let path = item.newIndexPath { difference.insertions.append(.init(objectID: id, indexPath: path)) }
                if let id = candidate.new?.id { difference.movedObjectIDs.append(id) }
            case .update:
                if let id = candidate.new?.id { difference.updatedObjectIDs.append(id) }
            }
        }
        difference.removals.sort { $0.indexPath < $1.indexPath }
        difference.insertions.sort { $0.indexPath < $1.indexPath }

        if let delegate {
            delegate.controllerWillChangeContent(self)
            for section in outcome.deletedSections {
                let info = SectionInfo(name: section.name, indexTitle: sectionIndexTitle(forSectionName: section.name),
                                       numberOfObjects: 0, index: section.index, controller: self)
                delegate.controller(self, didChange: info, atSectionIndex: section.index, for: .delete)
            }
            for section in outcome.insertedSections {
                delegate.controller(self, didChange: sectionInfo(at: section.index), atSectionIndex: section.index, for: .insert)
            }
            let order: [ResultsChangeTracker.Outcome.Kind] = [.delete, .insert, .move, .update]
            for kind in order {
                for item in outcome.items where item.kind == kind {
                    let candidate = candidates[item.candidate]
                    let id = kind == .delete ? candidate.oldID : (candidate.new?.id ?? candidate.oldID)
                    guard let object = reportedObject(candidate, id: id) else { continue }
                    switch kind {
                    case .delete:
                        delegate.controller(self, didChange: object, at: item.oldIndexPath, for: .delete, newIndexPath: nil)
                    case .insert:
                        delegate.controller(self, didChange: object, at: nil, for: .insert, newIndexPath: item.newIndexPath)
                    case .move:
                        delegate.controller(self, didChange: object, at: item.oldIndexPath, for: .move,
                                            newIndexPath: item.newIndexPath)
                    case .update:
                        delegate.controller(self, didChange: object, at: item.oldIndexPath, for: .update,
                                            newIndexPath: item.newIndexPath)
                    }
                }
            }
            delegate.controllerDidChangeContent(self)
        }
        onDifference?(difference)
        differenceStreams.yield(difference)
    }
}
