import Foundation
import NotesModel

// Adds notes on the main context and in the background, then lists them in title order.
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portable-notes-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

let store = try NoteStore(url: directory.appendingPathComponent("Notes.sqlite"))
try store.add(title: "Zebra crossing")
try await store.importTitles(["Émile's letter", "apple pie", "Ωmega project"])
for note in try store.notes() { print(note.title ?? "") }
print("containing 'e':", try store.notes(containing: "E").count)
