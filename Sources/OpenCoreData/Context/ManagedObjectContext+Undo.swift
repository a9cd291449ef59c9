import Foundation

/// Undo and redo of a context's changes (see ``UndoRecorder`` for how they are recorded).
extension ManagedObjectContext {
    /// The undo manager the context records its changes with; nil (the default, as in Core Data) records
    /// nothing and costs nothing.
    ///
    /// With one set, every change the context records can be undone and redone: inserts, deletes (with
    /// what their delete rules did), attribute values, and relationships on both sides of an inverse.
    /// Changes go into the manager's open group, or into one the first change opens (``UndoManager/groupsByEvent``)
    /// that ``processPendingChanges()`` closes. An undo after a save marks the objects changed again, so
    /// the next save writes it. ``rollback()`` and ``reset()`` remove every action from the manager.
    /// Transient values and the values a parent context takes in from a child's new objects are not recorded.
    public var undoManager: UndoManager? {
        get { undoRecorder?.manager }
        set {
            guard newValue !== undoRecorder?.manager else { return }
            undoRecorder = newValue.map(UndoRecorder.init(manager:))
        }
    }

    /// Closes the current group and undoes it (Core Data's `undo()`), then tells observers what changed.
    public func undo() {
        QueueCheck.use(of: self, "undo()")
        processPendingChanges()
        undoManager?.undo()
        processPendingChanges()
    }

    /// Redoes the last group undone (Core Data's `redo()`), then tells observers what changed.
    public func redo() {
        QueueCheck.use(of: self, "redo()")
        processPendingChanges()
        undoManager?.redo()
        processPendingChanges()
    }

    /// Runs an undo batch recorded by this context: the undo manager's action for it.
    func playBack(_ batch: UndoBatch) {
        UndoRecorder.playBack(batch, in: self)
    }
}
