import Foundation
import Testing
@testable import OpenCoreData

/// A validation error of the app's own, which must reach the caller of `save()` as it was thrown.
struct NoteRefused: Error, Equatable {
    var reason: String
}

/// Records the hooks the library calls, and refuses what its test asks it to.
final class HookedNote: ManagedObject {
    @Managed("title") var title: String?
    @Managed("rank") var rank: Int?

    nonisolated(unsafe) static var calls: [String] = []
    /// Titles whose save `validateForInsert`/`validateForUpdate` refuse; a title `validateValue` refuses.
    nonisolated(unsafe) static var refusedTitle: String?
    nonisolated(unsafe) static var refusedValue: String?
    nonisolated(unsafe) static var refuseDelete = false

    /// Records a hook with the title (read by key: a deleted object's value may no longer be there).
    private func note(_ hook: String) {
        Self.calls.append("\(hook) \(((try? value(forKey: "title")) ?? nil) as? String ?? "-")")
    }

    override func awakeFromInsert() { Self.calls.append("awakeFromInsert") }
    override func awakeFromFetch() { note("awakeFromFetch") }
    override func willSave() {
        note("willSave")
        // A value set here is saved with the rest.
        if !isDeleted, rank == nil { rank = 7 }
    }
    override func didSave() { note("didSave") }
    override func prepareForDeletion() { note("prepareForDeletion") }
    override func willTurnIntoFault() { note("willTurnIntoFault") }
    override func didTurnIntoFault() { Self.calls.append("didTurnIntoFault fault=\(isFault)") }
    override func validateForInsert() throws {
        note("validateForInsert")
        if title == Self.refusedTitle { throw NoteRefused(reason: "insert") }
    }
    override func validateForUpdate() throws {
        note("validateForUpdate")
        if title == Self.refusedTitle { throw NoteRefused(reason: "update") }
    }
    override func validateForDelete() throws {
        note("validateForDelete")
        if Self.refuseDelete { throw NoteRefused(reason: "delete") }
    }
    override func validateValue(_ value: Any?, forKey key: String) throws {
        if key == "title", let value = value as? String, value == Self.refusedValue { throw NoteRefused(reason: "value") }
    }
}

/// The lifecycle and validation hooks a subclass overrides are called at the moments Core Data calls them.
/// One serialized suite: the hooks record into shared static state.
@Suite(.serialized) struct LifecycleHookTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("HookedNote", class: HookedNote.self) {
                Attribute("title", .string)
                Attribute("rank", .integer64)
            }
        }
    }

    private func reset() {
        HookedNote.calls = []
        HookedNote.refusedTitle = nil
        HookedNote.refusedValue = nil
        HookedNote.refuseDelete = false
    }

    /// A fresh store and a context holding a note titled "a" (new, or saved), with the record cleared.
    private func savedOrNewNote(saved: Bool) throws -> (stack: TestStack, context: ManagedObjectContext, note: HookedNote) {
        reset()
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        let note = try HookedNote(context: context)
        note.title = "a"
        if saved {
            try context.save()
            HookedNote.calls = []
        }
        return (stack, context, note)
    }

    @Test func insertSaveFetchUpdateDelete() throws {
        let (stack, context, note) = try savedOrNewNote(saved: false)
        try context.save()
        #expect(HookedNote.calls == ["awakeFromInsert", "willSave a", "validateForInsert a", "didSave a"])
        #expect(note.rank == 7)

        HookedNote.calls = []
        let reader = stack.context()
        let fetched = try #require(try reader.fetch(HookedNote.fetchRequest()).first)
        #expect(fetched.rank == 7)
        #expect(HookedNote.calls == ["awakeFromFetch a"])

        HookedNote.calls = []
        fetched.title = "b"
        try reader.save()
        #expect(HookedNote.calls == ["willSave b", "validateForUpdate b", "didSave b"])

        HookedNote.calls = []
        reader.delete(fetched)
        try reader.save()
        #expect(HookedNote.calls == ["prepareForDeletion b", "willSave b", "validateForDelete b", "didSave b"])
    }

    @Test func refreshTurnsIntoAFault() throws {
        let (_, context, note) = try savedOrNewNote(saved: true)
        context.refresh(note, mergeChanges: false)
        #expect(HookedNote.calls == ["willTurnIntoFault a", "didTurnIntoFault fault=true"])
    }

    @Test func aHookErrorReachesTheCallerIntact() throws {
        reset()
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        HookedNote.refusedTitle = "no"
        let note = try HookedNote(context: context)
        note.title = "no"
        #expect(throws: NoteRefused(reason: "insert")) { try context.save() }
        note.title = "yes"
        try context.save()
        note.title = "no"
        #expect(throws: NoteRefused(reason: "update")) { try context.save() }
        HookedNote.refusedTitle = nil
        HookedNote.refusedValue = "no"
        #expect(throws: NoteRefused(reason: "value")) { try context.save() }
        HookedNote.refusedValue = nil
        try context.save()
        HookedNote.refuseDelete = true
        context.delete(note)
        #expect(throws: NoteRefused(reason: "delete")) { try context.save() }
    }

    /// The hook that existed before the others: its error was flattened into a message with an empty key.
    @Test func aValidateForSaveErrorReachesTheCallerIntact() throws {
        final class StrictNote: ManagedObject {
            override func validateForSave() throws { throw NoteRefused(reason: "save") }
        }
        let stack = try TestStack(model: ManagedObjectModel {
            EntityDescription("StrictNote", class: StrictNote.self) { Attribute("title", .string) }
        })
        let context = stack.context()
        try context.insertNewObject(forEntityName: "StrictNote").setValue("x", forKey: "title")
        #expect(throws: NoteRefused(reason: "save")) { try context.save() }
    }

    /// With other failures, each hook's error is kept in its failure, with the key it was about.
    @Test func hookErrorsAmongOthersAreKeptInTheirFailures() throws {
        reset()
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        HookedNote.refusedValue = "bad"
        HookedNote.refusedTitle = "bad"
        let note = try HookedNote(context: context)
        note.title = "bad"
        do {
            try context.save()
            Issue.record("the save should have failed")
        } catch ObjectGraphError.validationFailed(let failures) {
            #expect(failures.map(\.key) == ["title", ""])
            #expect(failures.compactMap { $0.underlyingError as? NoteRefused } == [NoteRefused(reason: "value"), NoteRefused(reason: "insert")])
        }
    }
}
