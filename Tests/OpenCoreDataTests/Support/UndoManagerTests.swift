import Foundation
import Testing
@testable import OpenCoreData

/// The undo manager on its own: groups and nesting, levels, redo, action names, registration switches,
/// removing actions, and the notifications, with the classic pattern of a setter that registers its undo.
@Suite struct UndoManagerTests {
    /// A value whose setter registers the setter call that undoes it (so an undo registers the redo).
    final class Box {
        let manager: UndoManager
        private(set) var value: Int
        /// The undo manager's state seen by each set made while undoing or redoing.
        var seen: [(undoing: Bool, redoing: Bool)] = []
        init(_ value: Int, manager: UndoManager) { self.value = value; self.manager = manager }
        func set(_ newValue: Int) {
            let old = value
            value = newValue
            if manager.isUndoing || manager.isRedoing { seen.append((manager.isUndoing, manager.isRedoing)) }
            manager.registerUndo(withTarget: self) { $0.set(old) }
        }
    }

    @Test func aGroupIsUndoneAndRedoneAsOne() {
        let manager = UndoManager()
        let box = Box(0, manager: manager)
        #expect(!manager.canUndo && !manager.canRedo)
        manager.beginUndoGrouping()
        box.set(1)
        box.set(2)
        manager.endUndoGrouping()
        manager.beginUndoGrouping()
        box.set(3)
        manager.endUndoGrouping()
        #expect(manager.canUndo && !manager.canRedo)

        manager.undo()
        #expect(box.value == 2)
        manager.undo()
        #expect(box.value == 0)
        #expect(!manager.canUndo && manager.canRedo)
        manager.undo()
        #expect(box.value == 0)

        manager.redo()
        #expect(box.value == 2)
        manager.redo()
        #expect(box.value == 3)
        #expect(manager.canUndo && !manager.canRedo)
        manager.redo()
        #expect(box.value == 3)
    }

    @Test func handlersSeeWhetherTheyUndoOrRedo() {
        let manager = UndoManager()
        let box = Box(0, manager: manager)
        box.set(1)
        #expect(!manager.isUndoing && !manager.isRedoing)
        manager.undo()
        manager.redo()
        #expect(box.seen.map(\.undoing) == [true, false])
        #expect(box.seen.map(\.redoing) == [false, true])
        #expect(!manager.isUndoing && !manager.isRedoing)
    }

    @Test func nestedGroupsAreUndoneWithTheGroupAroundThem() {
        let manager = UndoManager()
        let box = Box(0, manager: manager)
        manager.beginUndoGrouping()
        box.set(1)
        manager.beginUndoGrouping()
        #expect(manager.groupingLevel == 2)
        box.set(2)
        manager.endUndoGrouping()
        box.set(3)
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 0)
        manager.undo()
        #expect(box.value == 0)
        #expect(!manager.canUndo)
        manager.redo()
        #expect(box.value == 3)
    }

    @Test func groupsByEventOpensAGroupThatUndoCloses() {
        let manager = UndoManager()
        let box = Box(0, manager: manager)
        box.set(1)
        box.set(2)
        #expect(manager.groupingLevel == 1)
        manager.endEventGroup()
        #expect(manager.groupingLevel == 0)
        box.set(3)
        box.set(4)
        // The event group still open is closed by the undo, then undone.
        manager.undo()
        #expect(box.value == 2)
        #expect(manager.groupingLevel == 0)
        manager.undo()
        #expect(box.value == 0)
    }

    @Test func withoutGroupsByEventARegistrationOutsideAGroupIsNotRecorded() {
        let manager = UndoManager()
        manager.groupsByEvent = false
        let box = Box(0, manager: manager)
        box.set(1)
        #expect(!manager.canUndo)
        #expect(manager.groupingLevel == 0)
        manager.beginUndoGrouping()
        box.set(2)
        manager.endUndoGrouping()
        manager.undo()
        #expect(box.value == 1)
        // The redo group is made while undoing, without an event group.
        manager.redo()
        #expect(box.value == 2)
    }

    @Test func levelsOfUndoKeepsTheNewestGroups() {
        let manager = UndoManager()
        manager.levelsOfUndo = 3
        let box = Box(0, manager: manager)
        for value in 1...5 {
            box.set(value)
            manager.endEventGroup()
        }
        var undone = 0
        while manager.canUndo { manager.undo(); undone += 1 }
        #expect(undone == 3)
        #expect(box.value == 2)
        var redone = 0
        while manager.canRedo { manager.redo(); redone += 1 }
        #expect(redone == 3)
        #expect(box.value == 5)
        // Lowering the limit drops the oldest groups already kept.
        manager.levelsOfUndo = 1
        manager.undo()
        #expect(box.value == 4)
        #expect(!manager.canUndo)
    }

    @Test func aNewRegistrationClearsTheRedoStack() {
        let manager = UndoManager()
        let box = Box(0, manager: manager)
        box.set(1)
        manager.endEventGroup()
        box.set(2)
        manager.undo()
        #expect(manager.canRedo)
        box.set(7)
        #expect(!manager.canRedo)
        manager.redo()
        #expect(box.value == 7)
        manager.undo()
        #expect(box.value == 1)
    }

    @Test func actionNamesFollowTheirGroupsBetweenTheStacks() {
        let manager = UndoManager()
        let box = Box(0, manager: manager)
        #expect(manager.undoActionName == "" && manager.redoActionName == "")
        manager.beginUndoGrouping()
        box.set(1)
        manager.setActionName("Set One")
        manager.endUndoGrouping()
        box.set(2)
        manager.endEventGroup()
        // Without an open group, the name goes to the group on top of the undo stack.
        manager.setActionName("Set Two")
        #expect(manager.undoActionName == "Set Two")
        manager.undo()
        #expect(manager.undoActionName == "Set One")
        #expect(manager.redoActionName == "Set Two")
        manager.undo()
        #expect(manager.undoActionName == "")
        #expect(manager.redoActionName == "Set One")
        manager.redo()
        #expect(manager.undoActionName == "Set One")
        #expect(manager.redoActionName == "Set Two")
    }

    @Test func disabledRegistrationNestsAndRecordsNothing() {
        let manager = UndoManager()
        let box = Box(0, manager: manager)
        manager.disableUndoRegistration()
        manager.disableUndoRegistration()
        box.set(1)
        manager.enableUndoRegistration()
        #expect(!manager.isUndoRegistrationEnabled)
        box.set(2)
        manager.enableUndoRegistration()
        #expect(manager.isUndoRegistrationEnabled)
        #expect(!manager.canUndo)
        box.set(3)
        manager.undo()
        #expect(box.value == 2)
    }

    @Test func removingActionsByTargetKeepsTheOthers() {
        let manager = UndoManager()
        let first = Box(0, manager: manager)
        let second = Box(0, manager: manager)
        first.set(1)
        second.set(1)
        manager.endEventGroup()
        first.set(2)
        manager.endEventGroup()
        manager.removeAllActions(withTarget: first)
        // The second group held only the first box's action and went; the first keeps the second box's.
        manager.undo()
        #expect(first.value == 2 && second.value == 0)
        #expect(!manager.canUndo)
        manager.removeAllActions()
        #expect(!manager.canUndo && !manager.canRedo)
    }

    @Test func anActionWhoseTargetIsGoneDoesNothing() {
        let manager = UndoManager()
        var ran = false
        do {
            let target = NSObject()
            manager.registerUndo(withTarget: target) { _ in ran = true }
        }
        manager.undo()
        #expect(!ran)
    }

    @Test func unbalancedEndDoesNothing() {
        // The module-qualified name, as code on Apple's systems (where Foundation has its own) writes it.
        let manager: OpenCoreData.UndoManager = OpenCoreData.UndoManager()
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 0)
        #expect(!manager.canUndo)
    }

    @Test func undoAndRedoPostFoundationsNotifications() {
        let manager = UndoManager()
        let box = Box(0, manager: manager)
        final class Names: @unchecked Sendable { var names: [String] = [] }
        let heard = Names()
        let names: [Notification.Name] = [UndoManager.willUndoChangeNotification, UndoManager.didUndoChangeNotification,
                                          UndoManager.willRedoChangeNotification, UndoManager.didRedoChangeNotification]
        let tokens = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: manager, queue: nil) { note in
                heard.names.append(note.name.rawValue)
            }
        }
        defer { tokens.forEach(NotificationCenter.default.removeObserver) }
        box.set(1)
        manager.undo()
        manager.redo()
        #expect(heard.names == ["NSUndoManagerWillUndoChangeNotification", "NSUndoManagerDidUndoChangeNotification",
                                "NSUndoManagerWillRedoChangeNotification", "NSUndoManagerDidRedoChangeNotification"])
    }
}
