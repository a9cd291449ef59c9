import Foundation
import OpenCoreData

/// The crash harness's model. Tests/OpenCoreDataTests/Reliability/CrashModel.swift declares the same
/// model; a difference shows up as `StoreError.incompatibleModel` when the test opens the store.
enum CrashModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Folder") {
                Attribute("name", .string, optional: false)
                ToMany("notes", "Note", inverse: "folder", deleteRule: .cascade)
            }
            EntityDescription("Note") {
                Attribute("title", .string, optional: false)
                Attribute("rank", .integer64, default: Int64(0))
                Attribute("body", .string)
                Attribute("blob", .binaryData)
                ToOne("folder", "Folder", inverse: "notes")
                ToMany("labels", "Label", inverse: "notes")
                ToOne("attachment", "Attachment", inverse: "note", deleteRule: .cascade)
            }
            EntityDescription("Label") {
                Attribute("name", .string, optional: false)
                ToMany("notes", "Note", inverse: "labels")
            }
            EntityDescription("Attachment") {
                Attribute("path", .string, optional: false)
                ToOne("note", "Note", inverse: "attachment")
            }
            EntityDescription("Progress") {
                Attribute("iteration", .integer64, default: Int64(0))
            }
        }
    }
}

/// A small deterministic generator (SplitMix64): the same iteration number always yields the same plan.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 0x1234_5678 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(next() % UInt64(bound)) }
    mutating func pick<T>(_ values: [T]) -> T? { values.isEmpty ? nil : values[below(values.count)] }
}

/// Deterministic blob bytes; the harness compares (size, checksum) only.
enum Blob {
    static func bytes(size: Int, seed: Int) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) })
    }
    /// FNV-1a, 32 bits; the test computes the same.
    static func checksum(_ data: Data) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in data { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash
    }
}

/// What the store should hold, by names (primary keys differ after crashes: reserved keys are skipped).
struct LogicalState {
    struct Note {
        var rank: Int64
        var body: String
        var blobSize: Int
        var blobSeed: Int
        var folder: String?
        var labels: Set<String>
        var attachment: String?
    }
    var folders: Set<String> = []
    var notes: [String: Note] = [:]
    var labels: Set<String> = []
    var iteration = 0

    /// One line per object, sorted: the form the test builds from the store too.
    var canonicalLines: [String] {
        var lines: [String] = []
        for folder in folders { lines.append("folder \(folder)") }
        for label in labels { lines.append("label \(label)") }
        for (title, note) in notes {
            let checksum = Blob.checksum(Blob.bytes(size: note.blobSize, seed: note.blobSeed))
            let blob = note.blobSize == 0 ? "-" : "\(note.blobSize)/\(checksum)"
            lines.append("note \(title) rank=\(note.rank) body=\(note.body) blob=\(blob) folder=\(note.folder ?? "-") "
                + "attachment=\(note.attachment ?? "-") labels=\(note.labels.sorted().joined(separator: ","))")
            if let attachment = note.attachment { lines.append("attachment \(attachment) note=\(title)") }
        }
        if iteration > 0 { lines.append("progress \(iteration)") }
        return lines.sorted()
    }
}

/// One iteration's changes, by names, decided from the state before it.
struct Plan {
    struct NewNote {
        var title: String
        var rank: Int64
        var body: String
        var blobSize: Int
        var folder: String?
        var labels: [String]
        var attachment: String?
    }
    struct Edit {
        var title: String
        var rank: Int64
        var body: String
        var toggledLabel: String?
        /// nil: leave the folder; "-": no folder; else a folder name.
        var moveTo: String?
    }
    enum Batch {
        /// Every note's rank set to this value.
        case updateRanks(Int64)
        /// These notes deleted (their attachments cascade, label links go).
        case deleteNotes([String])
        /// These labels inserted.
        case insertLabels([String])
    }

    var iteration: Int
    var batch: Batch?
    var newFolders: [String] = []
    var newLabels: [String] = []
    var newNotes: [NewNote] = []
    var edits: [Edit] = []
    var deletedNotes: [String] = []
    var deletedFolders: [String] = []
    var deletedLabels: [String] = []

    static func make(iteration: Int, state: LogicalState) -> Plan {
        var random = SplitMix64(seed: UInt64(iteration))
        var plan = Plan(iteration: iteration)
        let titles = state.notes.keys.sorted()
        if iteration % 5 == 0 {
            switch (iteration / 5) % 3 {
            case 0: plan.batch = .updateRanks(Int64(iteration))
            case 1:
                var victims: [String] = []
                for _ in 0..<2 { if let title = random.pick(titles), !victims.contains(title) { victims.append(title) } }
                plan.batch = .deleteNotes(victims)
            default: plan.batch = .insertLabels(["B\(iteration)-0", "B\(iteration)-1"])
            }
            return plan
        }
        let folders = state.folders.sorted()
        let labels = state.labels.sorted()
        if labels.count < 6 { plan.newLabels.append("G\(iteration)") }
        let folder = "F\(iteration)"
        plan.newFolders.append(folder)
        for index in 0..<(1 + random.below(3)) {
            var chosen: [String] = []
            for _ in 0..<random.below(3) { if let label = random.pick(labels), !chosen.contains(label) { chosen.append(label) } }
            // Mostly small blobs; now and then a large one, so some saves span many pages.
            let blobSize = iteration % 17 == 0 && index == 0 ? 600_000 : random.below(4000)
            plan.newNotes.append(NewNote(title: "N\(iteration)-\(index)", rank: Int64(random.below(1000)),
                                         body: "b\(iteration)", blobSize: blobSize, folder: index == 2 ? nil : folder,
                                         labels: chosen, attachment: random.below(2) == 0 ? "A\(iteration)-\(index)" : nil))
        }
        for _ in 0..<random.below(4) {
            guard let title = random.pick(titles), !plan.edits.contains(where: { $0.title == title }) else { continue }
            let move: String? = switch random.below(4) {
            case 0: "-"
            case 1: random.pick(folders)
            default: nil
            }
            plan.edits.append(Edit(title: title, rank: Int64(random.below(1000)), body: "e\(iteration)",
                                   toggledLabel: random.pick(labels), moveTo: move))
        }
        let edited = Set(plan.edits.map(\.title))
        if random.below(3) == 0, let title = random.pick(titles.filter { !edited.contains($0) }) {
            plan.deletedNotes.append(title)
        }
        if folders.count > 5, let victim = random.pick(folders) { plan.deletedFolders.append(victim) }
        if labels.count > 4, random.below(4) == 0, let victim = random.pick(labels) { plan.deletedLabels.append(victim) }
        return plan
    }

    /// The batch part only (what the store holds if the process dies between the batch request and the save).
    func applyBatch(to state: inout LogicalState) {
        switch batch {
        case .updateRanks(let rank)?:
            for title in state.notes.keys { state.notes[title]!.rank = rank }
        case .deleteNotes(let titles)?:
            for title in titles { state.notes[title] = nil }
        case .insertLabels(let names)?:
            state.labels.formUnion(names)
        case nil: break
        }
    }

    func apply(to state: inout LogicalState) {
        applyBatch(to: &state)
        state.folders.formUnion(newFolders)
        state.labels.formUnion(newLabels)
        for note in newNotes {
            state.notes[note.title] = LogicalState.Note(rank: note.rank, body: note.body, blobSize: note.blobSize,
                                                        blobSeed: iteration, folder: note.folder,
                                                        labels: Set(note.labels), attachment: note.attachment)
        }
        for edit in edits {
            guard var note = state.notes[edit.title] else { continue }
            note.rank = edit.rank
            note.body = edit.body
            if let label = edit.toggledLabel {
                if note.labels.contains(label) { note.labels.remove(label) } else { note.labels.insert(label) }
            }
            if let move = edit.moveTo { note.folder = move == "-" ? nil : move }
            state.notes[edit.title] = note
        }
        for title in deletedNotes { state.notes[title] = nil }
        for label in deletedLabels {
            state.labels.remove(label)
            for title in state.notes.keys { state.notes[title]!.labels.remove(label) }
        }
        for folder in deletedFolders {
            state.folders.remove(folder)
            state.notes = state.notes.filter { $0.value.folder != folder }
        }
        state.iteration = iteration
    }

    static func simulate(through iteration: Int) -> LogicalState {
        var state = LogicalState()
        for index in stride(from: 1, through: iteration, by: 1) {
            make(iteration: index, state: state).apply(to: &state)
        }
        return state
    }
}
