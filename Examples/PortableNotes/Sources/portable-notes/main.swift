import Foundation
import NotesModel

// Adds notes on the main context and in the background, then lists them in title order.
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portable-notes-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

let storeURL = directory.appendingPathComponent("Notes.sqlite")
// As an app does before it opens its store: a store of an earlier model version is migrated first.
let migrator = NoteStoreMigrator()
if try migrator.requiresMigration(at: storeURL) { try migrator.migrateStore(at: storeURL) }
let store = try NoteStore(url: storeURL)
try store.add(title: "Zebra crossing")
try await store.importTitles(["Émile's letter", "apple pie", "Ωmega project"])
for note in try store.notes() { print(note.title ?? "") }
print("containing 'e':", try store.notes(containing: "E").count)
// Written by the current version, the store needs no migrating.
print("needs migrating:", try migrator.requiresMigration(at: storeURL))
