import Foundation
import Testing
@testable import OpenCoreData

/// A context with an undo manager: each kind of change undone and redone on a real SQLite store, groups
/// closed by `processPendingChanges`, undo after save written by the next save, the stack cleared by
/// rollback and reset, a property test over random edit sequences, and what the stack costs per edit.
@Suite struct UndoTests {
    /// Folders hold notes in order (cascade) and have one owner; notes and labels are many-to-many. Every
    /// object has a `key` the tests never change, naming it across contexts.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Folder") {
                Attribute("key", .string)
                Attribute("title", .string)
                ToMany("notes", "Note", inverse: "folder", deleteRule: .cascade, ordered: true)
                ToOne("owner", "Person", inverse: "folder")
            }
            EntityDescription("Note") {
                Attribute("key", .string)
                Attribute("text", .string)
                Attribute("rank", .integer32)
                ToOne("folder", "Folder", inverse: "notes")
                ToMany("labels", "Label", inverse: "notes")
            }
            EntityDescription("Label") {
                Attribute("key", .string)
                Attribute("name", .string)
                ToMany("notes", "Note", inverse: "labels")
            }
            EntityDescription("Person") {
                Attribute("key", .string)
                Attribute("name", .string)
                ToOne("folder", "Folder", inverse: "owner")
            }
        }
    }

    static let entityNames = ["Folder", "Note", "Label", "Person"]

    // MARK: Helpers

    @discardableResult
    static func insert(_ entity: String, _ key: String, into context: ManagedObjectContext,
                       _ values: [String: Any] = [:]) throws -> ManagedObject {
        let object = try context.insertNewObject(forEntityName: entity)
        try object.setValue(key, forKey: "key")
        for (name, value) in values { try object.setValue(value, forKey: name) }
        return object
    }

    static func fetchAll(_ entity: String, in context: ManagedObjectContext) throws -> [ManagedObject] {
        try context.fetch(FetchRequest<ManagedObject>(entityName: entity))
    }

    static func object(_ key: String, _ entity: String, in context: ManagedObjectContext) throws -> ManagedObject {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try QueryPredicate(format: "key == %@", key)
        let found = try context.fetch(request)
        return try #require(found.first, "no \(entity) \(key)")
    }

    static func key(_ object: Any?) throws -> String {
        guard let object = object as? ManagedObject else { return "nil" }
        return try object.value(forKey: "key") as? String ?? "?"
    }

    static func keys(_ objects: Any?) throws -> [String] {
        if let ordered = objects as? [ManagedObject] { return try ordered.map(key) }
        return try (objects as? Set<ManagedObject> ?? []).map(key).sorted()
    }

    /// Every object given, described by its key: attribute values, related keys (in order for an ordered
    /// to-many, sorted otherwise).
    static func describe(_ objects: [ManagedObject]) throws -> [String: String] {
        var result: [String: String] = [:]
        for object in objects {
            var parts = [object.entity.name]
            for property in object.entity.allProperties.sorted(by: { $0.name < $1.name }) where property.name != "key" {
                let value = try object.value(forKey: property.name)
                if let relationship = property as? RelationshipDescription {
                    parts.append("\(property.name)=\(relationship.isToMany ? try keys(value).joined(separator: ",") : try key(value))")
                } else {
                    parts.append("\(property.name)=\(value.map { "\($0)" } ?? "nil")")
                }
            }
            result[try key(object)] = parts.joined(separator: " ")
        }
        return result
    }

    /// The graph a context holds: its registered objects that are not deleted.
    static func graph(of context: ManagedObjectContext) throws -> [String: String] {
        try describe(context.registeredObjects.filter { !$0.isDeleted })
    }

    /// The graph the store holds, read by a fresh context.
    static func storedGraph(_ stack: TestStack) throws -> [String: String] {
        let fresh = stack.context()
        return try describe(entityNames.flatMap { try fetchAll($0, in: fresh) })
    }

    /// A store with folder F1 (notes N1, N2, owner P1), folder F2 (note N3), label L1 on N1 and N3.
    static func savedStack() throws -> TestStack {
        let stack = try TestStack(model: try model())
        let context = stack.context()
        let f1 = try insert("Folder", "F1", into: context, ["title": "Home"])
        let f2 = try insert("Folder", "F2", into: context, ["title": "Work"])
        let n1 = try insert("Note", "N1", into: context, ["text": "milk", "rank": 1, "folder": f1])
        try insert("Note", "N2", into: context, ["text": "bread", "rank": 2, "folder": f1])
        let n3 = try insert("Note", "N3", into: context, ["text": "report", "rank": 3, "folder": f2])
        try insert("Person", "P1", into: context, ["name": "Ann", "folder": f1])
        try insert("Label", "L1", into: context, ["name": "urgent", "notes": Set([n1, n3])])
        try context.save()
        return stack
    }

    /// A context on the stack with an undo manager.
    static func undoingContext(_ stack: TestStack) -> (ManagedObjectContext, UndoManager) {
        let context = stack.context()
        let manager = UndoManager()
        context.undoManager = manager
        return (context, manager)
    }

    // MARK: The manager on a context

    @Test func aContextHasNoUndoManagerUntilGivenOne() throws {
        let stack = try Self.savedStack()
        let context = stack.context()
        #expect(context.undoManager == nil)
        try Self.object("N1", "Note", in: context).setValue("eggs", forKey: "text")
        context.undo()
        #expect(try Self.object("N1", "Note", in: context).value(forKey: "text") as? String == "eggs")
    }

    @Test func anAttributeEditIsUndoneAndRedone() throws {
        let stack = try Self.savedStack()
        let (context, manager) = Self.undoingContext(stack)
        let note = try Self.object("N1", "Note", in: context)
        try note.setValue("eggs", forKey: "text")
        try note.setValue("ham", forKey: "text")
        try note.setValue(9, forKey: "rank")
        context.undo()
        #expect(try note.value(forKey: "text") as? String == "milk")
        #expect(try note.value(forKey: "rank") as? Int32 == 1)
        #expect(!manager.canUndo && manager.canRedo)
        context.redo()
        #expect(try note.value(forKey: "text") as? String == "ham")
        #expect(try note.value(forKey: "rank") as? Int32 == 9)
    }

    @Test func processPendingChangesClosesAGroup() throws {
        let stack = try Self.savedStack()
        let (context, _) = Self.undoingContext(stack)
        let note = try Self.object("N1", "Note", in: context)
        try note.setValue("eggs", forKey: "text")
        context.processPendingChanges()
        try note.setValue("ham", forKey: "text")
        context.undo()
        #expect(try note.value(forKey: "text") as? String == "eggs")
        context.undo()
        #expect(try note.value(forKey: "text") as? String == "milk")
    }

    @Test func aGroupOfTheCallersOwnSpansEvents() throws {
        let stack = try Self.savedStack()
        let (context, manager) = Self.undoingContext(stack)
        let note = try Self.object("N1", "Note", in: context)
        manager.beginUndoGrouping()
        try note.setValue("eggs", forKey: "text")
        context.processPendingChanges()
        manager.beginUndoGrouping()
        try note.setValue(5, forKey: "rank")
        manager.endUndoGrouping()
        context.processPendingChanges()
        try note.setValue("ham", forKey: "text")
        manager.endUndoGrouping()
        manager.setActionName("Edit Note")
        #expect(manager.undoActionName == "Edit Note")
        context.undo()
        #expect(try note.value(forKey: "text") as? String == "milk")
        #expect(try note.value(forKey: "rank") as? Int32 == 1)
        #expect(!manager.canUndo)
        #expect(manager.redoActionName == "Edit Note")
    }

    @Test func anInsertIsUndoneAndRedone() throws {
        let stack = try Self.savedStack()
        let (context, _) = Self.undoingContext(stack)
        let folder = try Self.object("F2", "Folder", in: context)
        let note = try Self.insert("Note", "N9", into: context, ["text": "new", "folder": folder])
        context.undo()
        #expect(!context.insertedObjects.contains(note))
        #expect(context.registeredObject(for: note.objectID) == nil)
        #expect(try Self.keys(folder.value(forKey: "notes")) == ["N3"])
        #expect(!context.hasChanges || context.insertedObjects.isEmpty)
        context.redo()
        #expect(context.insertedObjects.contains(note))
        #expect(try note.value(forKey: "text") as? String == "new")
        #expect(try Self.keys(folder.value(forKey: "notes")) == ["N3", "N9"])
        try context.save()
        #expect(try Self.storedGraph(stack)["N9"] == "Note folder=F2 labels= rank=nil text=new")
    }

    @Test func insertingAnObjectAlreadyInTheContextLeavesTheRedo() throws {
        let stack = try Self.savedStack()
        let (context, manager) = Self.undoingContext(stack)
        let note = try Self.object("N1", "Note", in: context)
        try note.setValue("eggs", forKey: "text")
        context.undo()
        context.insert(note)
        #expect(manager.canRedo)
        #expect(manager.groupingLevel == 0)
        // Inserting a deleted object again takes the delete back, and is undone as a change of its own.
        context.delete(note)
        context.processPendingChanges()
        context.insert(note)
        #expect(!note.isDeleted)
        context.undo()
        #expect(note.isDeleted)
        context.undo()
        #expect(!note.isDeleted)
    }

    @Test func aDeleteWithItsCascadeIsUndoneAndRedone() throws {
        let stack = try Self.savedStack()
        let (context, _) = Self.undoingContext(stack)
        for entity in Self.entityNames { _ = try Self.fetchAll(entity, in: context) }
        let before = try Self.graph(of: context)
        let folder = try Self.object("F1", "Folder", in: context)
        context.delete(folder)
        #expect(context.deletedObjects.count == 3)
        let after = try Self.graph(of: context)
        #expect(after["P1"] == "Person folder=nil name=Ann")
        #expect(after["L1"] == "Label name=urgent notes=N3")
        context.undo()
        #expect(context.deletedObjects.isEmpty)
        #expect(try Self.graph(of: context) == before)
        context.redo()
        #expect(context.deletedObjects.count == 3)
        #expect(try Self.graph(of: context) == after)
        try context.save()
        #expect(try Self.storedGraph(stack) == after)
    }

    @Test func relationshipEditsAreUndoneOnBothSides() throws {
        let stack = try Self.savedStack()
        let (context, _) = Self.undoingContext(stack)
        for entity in Self.entityNames { _ = try Self.fetchAll(entity, in: context) }
        let before = try Self.graph(of: context)
        let n1 = try Self.object("N1", "Note", in: context)
        let f2 = try Self.object("F2", "Folder", in: context)
        let l1 = try Self.object("L1", "Label", in: context)
        let p2 = try Self.insert("Person", "P2", into: context)
        context.processPendingChanges()

        // To-one with an ordered to-many inverse.
        try n1.setValue(f2, forKey: "folder")
        context.processPendingChanges()
        // One-to-one: P2 takes F2, F2 had no owner; then F1's owner P1 is displaced by taking F1.
        try p2.setValue(try Self.object("F1", "Folder", in: context), forKey: "folder")
        context.processPendingChanges()
        // Many-to-many, from either side.
        try n1.remove(l1, fromKey: "labels")
        try l1.add(try Self.object("N2", "Note", in: context), toKey: "notes")
        context.processPendingChanges()
        // An ordered to-many reordered.
        try f2.setValue([n1, try Self.object("N3", "Note", in: context)], forKey: "notes")
        context.processPendingChanges()
        let after = try Self.graph(of: context)
        #expect(after["F2"] == "Folder notes=N1,N3 owner=nil title=Work")
        #expect(after["P1"] == "Person folder=nil name=Ann")
        #expect(after["L1"] == "Label name=urgent notes=N2,N3")

        for _ in 0..<5 { context.undo() }
        #expect(try Self.graph(of: context) == before)
        for _ in 0..<5 { context.redo() }
        #expect(try Self.graph(of: context) == after)
        try context.save()
        #expect(try Self.storedGraph(stack) == after)
    }

    @Test func anUndoAfterSaveIsWrittenByTheNextSave() throws {
        let stack = try Self.savedStack()
        let (context, _) = Self.undoingContext(stack)
        let start = try Self.storedGraph(stack)
        let note = try Self.object("N1", "Note", in: context)
        try note.setValue("eggs", forKey: "text")
        try note.setValue(try Self.object("F2", "Folder", in: context), forKey: "folder")
        try context.save()
        #expect(try Self.storedGraph(stack)["N1"] == "Note folder=F2 labels=L1 rank=1 text=eggs")
        context.undo()
        #expect(note.isUpdated)
        #expect(context.hasChanges)
        try context.save()
        #expect(try Self.storedGraph(stack) == start)
        context.redo()
        try context.save()
        #expect(try Self.storedGraph(stack)["N1"] == "Note folder=F2 labels=L1 rank=1 text=eggs")
    }

    @Test func anInsertUndoneAfterSaveIsDeletedByTheNextSave() throws {
        let stack = try Self.savedStack()
        let (context, _) = Self.undoingContext(stack)
        let start = try Self.storedGraph(stack)
        let note = try Self.insert("Note", "N9", into: context, ["text": "new", "folder": try Self.object("F1", "Folder", in: context)])
        try context.save()
        #expect(try Self.storedGraph(stack)["N9"] != nil)
        context.undo()
        #expect(note.isDeleted)
        try context.save()
        #expect(try Self.storedGraph(stack) == start)
        // Redone after that save: the note comes back as new, with its values and folder.
        context.redo()
        #expect(note.isInserted)
        try context.save()
        #expect(try Self.storedGraph(stack)["N9"] == "Note folder=F1 labels= rank=nil text=new")
        #expect(try Self.storedGraph(stack)["F1"] == "Folder notes=N1,N2,N9 owner=P1 title=Home")
    }

    @Test func aDeleteUndoneAfterSaveInsertsTheObjectsAgain() throws {
        let stack = try Self.savedStack()
        let (context, _) = Self.undoingContext(stack)
        let start = try Self.storedGraph(stack)
        context.delete(try Self.object("F1", "Folder", in: context))
        try context.save()
        #expect(try Self.storedGraph(stack)["N1"] == nil)
        context.undo()
        #expect(context.insertedObjects.count == 3)
        try context.save()
        #expect(try Self.storedGraph(stack) == start)
        context.redo()
        try context.save()
        #expect(try Self.storedGraph(stack)["F1"] == nil)
        #expect(try Self.storedGraph(stack)["N2"] == nil)
    }

    @Test func rollbackAndResetClearTheStack() throws {
        let stack = try Self.savedStack()
        let (context, manager) = Self.undoingContext(stack)
        try Self.object("N1", "Note", in: context).setValue("eggs", forKey: "text")
        context.processPendingChanges()
        #expect(manager.canUndo)
        context.rollback()
        #expect(!manager.canUndo && !manager.canRedo)

        try Self.object("N1", "Note", in: context).setValue("ham", forKey: "text")
        context.undo()
        #expect(manager.canRedo)
        context.reset()
        #expect(!manager.canUndo && !manager.canRedo)
    }

    @Test func aChildsSavePushedIntoTheParentIsUndoneThere() throws {
        let stack = try Self.savedStack()
        let (parent, _) = Self.undoingContext(stack)
        let child = ManagedObjectContext(concurrencyType: .confinement)
        child.parent = parent
        try Self.object("N1", "Note", in: child).setValue("eggs", forKey: "text")
        child.delete(try Self.object("N2", "Note", in: child))
        try child.save()
        let n1 = try Self.object("N1", "Note", in: parent)
        let n2 = try #require(parent.registeredObjects.first { (try? Self.key($0)) == "N2" })
        #expect(try n1.value(forKey: "text") as? String == "eggs")
        #expect(n2.isDeleted)
        parent.undo()
        #expect(try n1.value(forKey: "text") as? String == "milk")
        #expect(!n2.isDeleted)
        parent.redo()
        #expect(try n1.value(forKey: "text") as? String == "eggs")
        #expect(n2.isDeleted)
    }

    @Test func changeObserversHearWhatAnUndoChanged() throws {
        let stack = try Self.savedStack()
        let (context, _) = Self.undoingContext(stack)
        let note = try Self.object("N1", "Note", in: context)
        try note.setValue("eggs", forKey: "text")
        let inserted = try Self.insert("Note", "N9", into: context)
        context.processPendingChanges()
        var heard: [ObjectsDidChange] = []
        let token = context.addChangeObserver { _, change in heard.append(change) }
        defer { context.removeChangeObserver(token) }
        context.undo()
        #expect(heard.count == 1)
        #expect(heard.first?.updated.contains(note) == true)
        #expect(heard.first?.deleted.contains(inserted) == true)
        #expect(heard.first?.changedKeys(of: note) == ["text"])
    }

    @Test func disabledRegistrationRecordsNothing() throws {
        let stack = try Self.savedStack()
        let (context, manager) = Self.undoingContext(stack)
        manager.disableUndoRegistration()
        try Self.object("N1", "Note", in: context).setValue("eggs", forKey: "text")
        manager.enableUndoRegistration()
        context.processPendingChanges()
        #expect(!manager.canUndo)
    }

    // MARK: Property tests

    /// Makes random edits to a context's graph: inserts, deletes (folders cascade to their notes), attribute
    /// edits, and relationship edits of every kind (to-one, ordered to-many, one-to-one, many-to-many), with
    /// a log of what it did for failure messages.
    final class RandomEditor {
        let context: ManagedObjectContext
        var random: SeededGenerator
        var pool: [String: [ManagedObject]] = [:]
        var made = 0
        var log: [String] = []

        init(context: ManagedObjectContext, seed: UInt64) throws {
            self.context = context
            random = SeededGenerator(seed: seed)
            for entity in UndoTests.entityNames { pool[entity] = try UndoTests.fetchAll(entity, in: context) }
        }

        func pick(_ entity: String) -> ManagedObject? {
            pool[entity, default: []].filter { $0.managedObjectContext === context && !$0.isDeleted
                && context.registeredObject(for: $0.objectID) === $0 }.randomElement(using: &random)
        }

        func edit() throws {
            switch Int.random(in: 0..<9, using: &random) {
            case 0:
                let entity = UndoTests.entityNames.randomElement(using: &random)!
                made += 1
                pool[entity, default: []].append(try UndoTests.insert(entity, "X\(made)", into: context))
                log.append("insert \(entity) X\(made)")
            case 1:
                let entity = UndoTests.entityNames.randomElement(using: &random)!
                if let victim = pick(entity) { log.append("delete \(try UndoTests.key(victim))"); context.delete(victim) }
            case 2, 3:
                let entity = UndoTests.entityNames.randomElement(using: &random)!
                if let object = pick(entity) {
                    let key = ["Folder": "title", "Note": "text", "Label": "name", "Person": "name"][entity]!
                    try object.setValue("v\(Int.random(in: 0..<1000, using: &random))", forKey: key)
                    if entity == "Note" { try object.setValue(Int.random(in: 0..<100, using: &random), forKey: "rank") }
                    log.append("set \(try UndoTests.key(object)).\(key)")
                }
            case 4:
                if let note = pick("Note") {
                    let folder = Bool.random(using: &random) ? pick("Folder") : nil
                    try note.setValue(folder, forKey: "folder")
                    log.append("\(try UndoTests.key(note)).folder = \(try UndoTests.key(folder))")
                }
            case 5:
                if let folder = pick("Folder") {
                    var notes = try folder.value(forKey: "notes") as? [ManagedObject] ?? []
                    if Bool.random(using: &random), let note = pick("Note"), !notes.contains(note) {
                        notes.insert(note, at: Int.random(in: 0...notes.count, using: &random))
                    } else if !notes.isEmpty {
                        notes.remove(at: Int.random(in: 0..<notes.count, using: &random))
                    }
                    notes.shuffle(using: &random)
                    try folder.setValue(notes, forKey: "notes")
                    log.append("\(try UndoTests.key(folder)).notes = \(try UndoTests.keys(notes))")
                }
            case 6, 7:
                if let note = pick("Note"), let label = pick("Label") {
                    let labels = try note.value(forKey: "labels") as? Set<ManagedObject> ?? []
                    let (owner, member, key) = Bool.random(using: &random) ? (note, label, "labels") : (label, note, "notes")
                    if labels.contains(label) { try owner.remove(member, fromKey: key) } else { try owner.add(member, toKey: key) }
                    log.append("toggle \(try UndoTests.key(note)) ~ \(try UndoTests.key(label))")
                }
            default:
                if let person = pick("Person") {
                    let folder = Bool.random(using: &random) ? pick("Folder") : nil
                    try person.setValue(folder, forKey: "folder")
                    log.append("\(try UndoTests.key(person)).folder = \(try UndoTests.key(folder))")
                }
            }
        }
    }

    /// Random edit sequences with group ends (and saves when `saving`) on a saved graph: undoing every
    /// group gives back the graph it started as, redoing every group the graph it ended as, and a save of
    /// that writes it.
    @Test(arguments: (1...20).map { (UInt64($0), $0 % 2 == 0) })
    func undoingEverythingGivesBackTheStartAndRedoingTheEnd(seed: UInt64, saving: Bool) throws {
        let stack = try Self.savedStack()
        let (context, manager) = Self.undoingContext(stack)
        let editor = try RandomEditor(context: context, seed: seed)
        let start = try Self.graph(of: context)
        do {
            for _ in 0..<80 {
                switch Int.random(in: 0..<12, using: &editor.random) {
                case 0...8:
                    try editor.edit()
                case 9, 10:
                    context.processPendingChanges()
                    editor.log.append("--")
                default:
                    if saving {
                        try context.save()
                        editor.log.append("save")
                    } else {
                        context.processPendingChanges()
                    }
                }
            }
            context.processPendingChanges()
            editor.log.append("== end")
            let end = try Self.graph(of: context)
            var groups = 0
            while manager.canUndo {
                context.undo()
                groups += 1
            }
            editor.log.append("== undone")
            #expect(try Self.graph(of: context) == start, "\(editor.log)")
            while manager.canRedo { context.redo() }
            editor.log.append("== redone")
            #expect(try Self.graph(of: context) == end, "\(editor.log)")
            try context.save()
            editor.log.append("== saved")
            #expect(try Self.storedGraph(stack) == end, "\(editor.log)")
            #expect(groups > 1)
        } catch {
            Issue.record("\(error) after \(editor.log)")
        }
    }

    /// Undo and redo interleaved with new edits and saves, against a naive reference: the graph after each
    /// group, kept on a stack. Each undo gives back the graph before its group, each redo the graph after
    /// it, a new group drops what could be redone, and the store ends as the graph does.
    @Test(arguments: 1...12)
    func interleavedUndoAndRedoFollowAStackOfSnapshots(seed: UInt64) throws {
        let stack = try Self.savedStack()
        let (context, manager) = Self.undoingContext(stack)
        let editor = try RandomEditor(context: context, seed: seed + 100)
        /// The graph after each group still undoable, the start first; the graphs each redo gives, next last.
        var after = [try Self.graph(of: context)]
        var redoable: [[String: String]] = []
        /// Ends the open event group as `end` does, keeping the reference in step when it closed one.
        func endGroup(_ end: () throws -> Void) throws {
            let open = manager.groupingLevel == 1
            try end()
            if open && manager.groupingLevel == 0 {
                after.append(try Self.graph(of: context))
                redoable = []
            }
        }
        do {
            for step in 0..<120 {
                switch Int.random(in: 0..<14, using: &editor.random) {
                case 0...6:
                    try editor.edit()
                    // A change recorded (into the group it opened) leaves nothing to redo.
                    if manager.groupingLevel == 1 { redoable = [] }
                case 7, 8:
                    try endGroup { context.processPendingChanges() }
                    editor.log.append("--")
                case 9:
                    try endGroup { try context.save() }
                    editor.log.append("save")
                case 10, 11:
                    try endGroup { context.processPendingChanges() }
                    guard after.count > 1 else { continue }
                    context.undo()
                    redoable.append(after.removeLast())
                    editor.log.append("undo")
                    #expect(try Self.graph(of: context) == after.last!, "step \(step): \(editor.log)")
                default:
                    try endGroup { context.processPendingChanges() }
                    guard let next = redoable.popLast() else { continue }
                    context.redo()
                    after.append(next)
                    editor.log.append("redo")
                    #expect(try Self.graph(of: context) == next, "step \(step): \(editor.log)")
                }
                #expect(manager.canRedo == !redoable.isEmpty, "step \(step): \(editor.log)")
            }
            try endGroup { try context.save() }
            #expect(try Self.storedGraph(stack) == after.last!, "\(editor.log)")
        } catch {
            Issue.record("\(error) after \(editor.log)")
        }
    }

    // MARK: Memory

    /// 100,000 attribute edits (of 10,000 objects, ten edits each in groups of 1,000) cost the undo stack
    /// under 100 bytes an edit: one record per object and key per group, not a closure per edit.
    @Test func anUndoStackOfManyEditsCostsLittleAnEdit() throws {
        let stack = try TestStack(model: try Self.model())
        let context = stack.context()
        let notes = try (0..<10_000).map { try Self.insert("Note", "N\($0)", into: context, ["rank": 0]) }
        try context.save()
        let manager = UndoManager()
        context.undoManager = manager
        var edits = 0
        for round in 1...10 {
            for (index, note) in notes.enumerated() {
                try note.setValue(round, forKey: "rank")
                edits += 1
                if index % 1_000 == 999 { context.processPendingChanges() }
            }
        }
        let bytes = manager.approximateByteCount
        #expect(bytes / edits < 100, "\(bytes) bytes for \(edits) edits")
        // The stack still undoes every edit.
        while manager.canUndo { context.undo() }
        #expect(try notes.allSatisfy { try $0.value(forKey: "rank") as? Int32 == 0 })
    }
}

