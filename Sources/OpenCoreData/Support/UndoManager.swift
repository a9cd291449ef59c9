import Foundation

/// Records changes as groups of actions that undo them, and runs them back: Foundation's `UndoManager`,
/// which Foundation on Linux does not have, in the same shape. Give one to a context
/// (``ManagedObjectContext/undoManager``) and every change the context records can be undone and redone.
///
/// ```swift
/// let undoManager = UndoManager()
/// context.undoManager = undoManager
/// try item.setValue("Buy bread", forKey: "name")
/// context.processPendingChanges()      // closes the group, as the end of an event does on Apple's systems
/// undoManager.undo()                   // the name is "Buy milk" again
/// ```
///
/// The name is Foundation's: on Linux there is no other, so code importing Foundation too names it plainly.
/// On Apple's systems, where Foundation has its own, a file importing both modules writes
/// `OpenCoreData.UndoManager` (the bare name is ambiguous there).
///
/// Differences from Foundation's: there is no run loop to open and close a group for each event, so with
/// ``groupsByEvent`` a registration outside any group opens one, and the group stays open until the
/// context's `processPendingChanges()` (or ``undo()``/``redo()``, or ``endUndoGrouping()``) closes it.
/// ``undo()`` and ``redo()`` close groups left open first, where Foundation raises an exception, and an
/// unbalanced ``endUndoGrouping()`` does nothing. Handlers run on the queue that calls ``undo()``.
public final class UndoManager: @unchecked Sendable {
    // @unchecked Sendable: like the context it serves, an undo manager is used on one queue only (the
    // context's); nothing in it is guarded for use from several threads at once.

    /// One registered action: what to run, and the target it was registered with (held weakly, so an
    /// undo stack does not keep a context or document alive; an action whose target is gone does nothing).
    struct Action {
        weak var target: AnyObject?
        let run: (AnyObject) -> Void
        /// A context's records, when the action plays them back: told when the top-level group holding the
        /// action closes (it lets go of the index it needs only while its group is open), and measured.
        var batch: UndoBatch?
    }

    /// A group of actions, undone together (last registered, first run).
    final class Group {
        var actions: [Action] = []
        var actionName = ""
        /// Opened by a registration outside any group (``groupsByEvent``), not by the caller.
        let isEventGroup: Bool
        init(isEventGroup: Bool) { self.isEventGroup = isEventGroup }
    }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// The groups open now, outermost first.
    private var openGroups: [Group] = []
    private var disabledCount = 0
    private var state: State = .idle
    private enum State { case idle, undoing, redoing }

    /// Whether a registration outside any group opens one (Foundation's default: on).
    public var groupsByEvent = true
    /// How many top-level groups the undo stack keeps; the oldest go first. 0 keeps them all.
    public var levelsOfUndo = 0 {
        didSet { trim(&undoStack); trim(&redoStack) }
    }

    /// Creates an empty undo manager.
    public init() {}

    // MARK: Notifications (Foundation's names)

    /// Posted after ``beginUndoGrouping()`` opened a group.
    public static let didOpenUndoGroupNotification = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted before ``endUndoGrouping()`` closes a group.
    public static let willCloseUndoGroupNotification = Notification.Name("NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted after ``endUndoGrouping()`` closed a group.
    public static let didCloseUndoGroupNotification = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")
    /// Posted before ``undo()`` runs a group.
    public static let willUndoChangeNotification = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted after ``undo()`` ran a group.
    public static let didUndoChangeNotification = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted before ``redo()`` runs a group.
    public static let willRedoChangeNotification = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted after ``redo()`` ran a group.
    public static let didRedoChangeNotification = Notification.Name("NSUndoManagerDidRedoChangeNotification")

    private func post(_ name: Notification.Name) {
        NotificationCenter.default.post(name: name, object: self)
    }

    // MARK: State

    /// Whether there is a group to undo (a group still open counts when ``undo()`` would close it).
    public var canUndo: Bool { !undoStack.isEmpty || openGroups.contains { !$0.actions.isEmpty } }
    /// Whether there is a group to redo.
    public var canRedo: Bool { !redoStack.isEmpty }
    /// Whether ``undo()`` is running a group now.
    public var isUndoing: Bool { state == .undoing }
    /// Whether ``redo()`` is running a group now.
    public var isRedoing: Bool { state == .redoing }
    /// How deeply groups are open now (0: none).
    public var groupingLevel: Int { openGroups.count }
    /// Whether registrations are recorded (see ``disableUndoRegistration()``).
    public var isUndoRegistrationEnabled: Bool { disabledCount == 0 }

    /// The name of the group ``undo()`` would undo ("" when unnamed or none).
    public var undoActionName: String { openGroups.first?.actionName ?? undoStack.last?.actionName ?? "" }
    /// The name of the group ``redo()`` would redo ("" when unnamed or none).
    public var redoActionName: String { redoStack.last?.actionName ?? "" }

    /// Names the group being built (or, when none is open, the group on top of the undo stack), for menus
    /// ("Undo Rename"). Undoing it names its redo group the same.
    public func setActionName(_ actionName: String) {
        if let group = openGroups.last { group.actionName = actionName } else { undoStack.last?.actionName = actionName }
    }

    // MARK: Groups

    /// Opens a group: what is registered until the matching ``endUndoGrouping()`` is undone together.
    /// Groups nest; a nested group's actions become part of the group around it.
    public func beginUndoGrouping() {
        openGroup(isEventGroup: false)
    }

    private func openGroup(isEventGroup: Bool) {
        openGroups.append(Group(isEventGroup: isEventGroup))
        post(Self.didOpenUndoGroupNotification)
    }

    /// Closes the innermost open group. A top-level group with actions goes onto the undo stack (onto the
    /// redo stack while undoing); an empty one is dropped. Does nothing when no group is open.
    public func endUndoGrouping() {
        guard let group = openGroups.last else { return }
        post(Self.willCloseUndoGroupNotification)
        openGroups.removeLast()
        if let outer = openGroups.last {
            outer.actions += group.actions
            if outer.actionName.isEmpty { outer.actionName = group.actionName }
        } else if !group.actions.isEmpty {
            for action in group.actions { action.batch?.seal() }
            switch state {
            case .undoing:
                redoStack.append(group)
                trim(&redoStack)
            case .redoing:
                undoStack.append(group)
                trim(&undoStack)
            case .idle:
                undoStack.append(group)
                trim(&undoStack)
            }
        }
        post(Self.didCloseUndoGroupNotification)
    }

    /// Closes the group a registration opened by itself (``groupsByEvent``), if it is the only one open: the
    /// end of an event. A context calls it from `processPendingChanges()`.
    func endEventGroup() {
        if openGroups.count == 1, openGroups[0].isEventGroup { endUndoGrouping() }
    }

    private func trim(_ stack: inout [Group]) {
        if levelsOfUndo > 0, stack.count > levelsOfUndo { stack.removeFirst(stack.count - levelsOfUndo) }
    }

    // MARK: Registering

    /// Records that `handler(target)` undoes a change just made. Registered while undoing, it goes to the
    /// redo stack (that is how a redo is made); registered otherwise, it clears the redo stack. Nothing is
    /// recorded while registration is disabled, or when no group is open and ``groupsByEvent`` is off.
    public func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
        register(Action(target: target, run: { handler($0 as! Target) }, batch: nil))
    }

    /// The group registrations go to now, opening an event group when ``groupsByEvent`` allows; nil when
    /// nothing would be recorded. The context's record keeps the group it added its action to and adds to
    /// that action while it is still this group.
    func groupForRegistering() -> Group? {
        guard isUndoRegistrationEnabled else { return nil }
        if openGroups.isEmpty {
            guard groupsByEvent else { return nil }
            openGroup(isEventGroup: true)
        }
        if state == .idle { redoStack.removeAll() }
        return openGroups.last
    }

    func register(_ action: Action) {
        groupForRegistering()?.actions.append(action)
    }

    /// Stops recording registrations until the matching ``enableUndoRegistration()`` (calls nest).
    public func disableUndoRegistration() { disabledCount += 1 }

    /// Undoes one ``disableUndoRegistration()``; registrations are recorded again when every one is undone.
    /// Extra calls do nothing.
    public func enableUndoRegistration() { disabledCount = max(0, disabledCount - 1) }

    // MARK: Undoing and redoing

    /// Undoes the last group: closes any group still open, then runs the group's actions last first. What
    /// they register becomes the group ``redo()`` runs. Does nothing when there is nothing to undo.
    public func undo() {
        guard state == .idle else { return }
        while !openGroups.isEmpty { endUndoGrouping() }
        guard let group = undoStack.popLast() else { return }
        run(group, as: .undoing, will: Self.willUndoChangeNotification, did: Self.didUndoChangeNotification)
    }

    /// Redoes the last group undone (closing any group still open first). Does nothing when there is
    /// nothing to redo.
    public func redo() {
        guard state == .idle else { return }
        while !openGroups.isEmpty { endUndoGrouping() }
        guard let group = redoStack.popLast() else { return }
        run(group, as: .redoing, will: Self.willRedoChangeNotification, did: Self.didRedoChangeNotification)
    }

    private func run(_ group: Group, as running: State, will: Notification.Name, did: Notification.Name) {
        post(will)
        state = running
        openGroup(isEventGroup: false)
        openGroups[0].actionName = group.actionName
        for action in group.actions.reversed() {
            if let target = action.target { action.run(target) }
        }
        endUndoGrouping()
        state = .idle
        post(did)
    }

    /// About how many bytes the stacks and open groups hold (tests and diagnostics): groups, actions, and
    /// the records of contexts' batches with what they keep outside themselves; a handler's captures are
    /// counted as a small closure context each.
    var approximateByteCount: Int {
        var bytes = 0
        for group in undoStack + redoStack + openGroups {
            bytes += 64 + 32 + group.actions.capacity * MemoryLayout<Action>.stride
            for action in group.actions { bytes += 32 + (action.batch?.approximateByteCount ?? 0) }
        }
        return bytes
    }

    // MARK: Clearing

    /// Forgets every group on both stacks, and the actions of groups still open.
    public func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        for group in openGroups { group.actions.removeAll() }
    }

    /// Forgets the actions registered with `target` (compared by identity); groups left empty go too.
    public func removeAllActions(withTarget target: AnyObject) {
        func keep(_ action: Action) -> Bool { action.target.map { $0 !== target } ?? false }
        for group in undoStack + redoStack + openGroups { group.actions.removeAll { !keep($0) } }
        undoStack.removeAll { $0.actions.isEmpty }
        redoStack.removeAll { $0.actions.isEmpty }
    }
}
