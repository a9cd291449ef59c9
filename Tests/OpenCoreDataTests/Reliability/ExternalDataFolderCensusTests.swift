import Foundation
import Testing
@testable import OpenCoreData

extension Reliability {
    /// The `_EXTERNAL_DATA` row of docs/RELIABILITY.md's hostile-input table: a store's folder of values kept
    /// outside rows laid out by another program — `.<name>_SUPPORT` or `_EXTERNAL_DATA` a symbolic link to a
    /// folder elsewhere, a value's file a link to a file elsewhere, a FIFO or a folder — then read (every
    /// value), saved to (a new value and a delete), copied (`migratePersistentStore`) and replaced
    /// (`replacePersistentStore`). Elsewhere holds files of the same names with other bytes. Each operation is
    /// accepted (it worked, and no value read is elsewhere's), refused (the layer's typed error), or wrong
    /// (another error, elsewhere's bytes read, or anything elsewhere created, changed or removed).
    /// `OCD_HOSTILE_INPUTS` sets the operations (default 80); `OCD_HOSTILE_TABLE=path` appends the row there.
    @Suite struct ExternalDataFolderCensusTests {
        typealias Base = ExternalBinaryStorageTests

        static let sentinel = Data(repeating: 0x5A, count: 200_000)

        /// Every file under `folder` (links not followed) with its bytes, or what it is.
        static func snapshot(_ folder: URL) -> [String: String] {
            var files: [String: String] = [:]
            let enumerator = FileManager.default.enumerator(atPath: folder.path)
            while let path = enumerator?.nextObject() as? String {
                let full = folder.appendingPathComponent(path).path
                var status = stat()
                guard lstat(full, &status) == 0 else { continue }
                switch status.st_mode & S_IFMT {
                case S_IFREG: files[path] = (FileManager.default.contents(atPath: full) ?? Data()).base64EncodedString()
                case S_IFLNK: files[path] = "link to " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: full)) ?? "?")
                default: files[path] = "kind \(status.st_mode & S_IFMT)"
                }
            }
            return files
        }

        enum Layout: CaseIterable { case untouched, supportLinked, externalLinked, fileLinked, fileIsFIFO, fileIsFolder }

        /// A store of three photos with values in files, its folder laid out as `layout`, and elsewhere's
        /// folder (holding a `_EXTERNAL_DATA` with files of the store's names).
        static func place(_ layout: Layout) throws -> (stack: TestStack, elsewhere: URL, expected: [String: Data?]) {
            let stack = try Base.stack(names: ["p0", "p1", "p2"])
            let context = stack.context()
            var expected: [String: Data?] = [:]
            for (index, photo) in try Base.photos(context).enumerated() {
                let value = Base.bytes(150_000 + index, seed: UInt8(index))
                try photo.setValue(value, forKey: "image")
                expected[try #require(photo.value(forKey: "name") as? String)] = value
            }
            try context.save()
            let folder = Base.folder(stack)
            let elsewhere = stack.directory.file("elsewhere")
            let elsewhereData = elsewhere.appendingPathComponent("_EXTERNAL_DATA")
            try FileManager.default.createDirectory(at: elsewhereData, withIntermediateDirectories: true)
            let names = Base.files(stack)
            for name in names { try sentinel.write(to: elsewhereData.appendingPathComponent(name)) }
            let first = folder.appendingPathComponent(try #require(names.first))
            switch layout {
            case .untouched: break
            case .supportLinked:
                let support = folder.deletingLastPathComponent()
                try FileManager.default.removeItem(at: support)
                try FileManager.default.createSymbolicLink(at: support, withDestinationURL: elsewhere)
            case .externalLinked:
                try FileManager.default.removeItem(at: folder)
                try FileManager.default.createSymbolicLink(at: folder, withDestinationURL: elsewhereData)
            case .fileLinked:
                try FileManager.default.removeItem(at: first)
                try FileManager.default.createSymbolicLink(at: first, withDestinationURL: elsewhereData.appendingPathComponent(first.lastPathComponent))
            case .fileIsFIFO:
                try FileManager.default.removeItem(at: first)
                #expect(mkfifo(first.path, 0o644) == 0)
            case .fileIsFolder:
                try FileManager.default.removeItem(at: first)
                try FileManager.default.createDirectory(at: first, withIntermediateDirectories: false)
            }
            return (stack, elsewhere, expected)
        }

        enum Outcome { case accepted, refused, wrong(String) }

        /// Runs `body`: accepted when it returns nil, wrong when it returns a reason or throws anything but
        /// the layer's typed errors.
        static func classify(_ body: () throws -> String?) -> Outcome {
            do {
                if let reason = try body() { return .wrong(reason) }
                return .accepted
            } catch is StoreError {
                return .refused
            } catch is MigrationError {
                return .refused
            } catch let error as ObjectGraphError {
                if case .storeCopyRefused = error { return .refused }
                return .wrong("\(error)")
            } catch {
                return .wrong("\(type(of: error)) \(error)")
            }
        }

        static func read(_ url: URL, model: ManagedObjectModel, expected: [String: Data?]) throws -> String? {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: true))
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            var refused: Error?
            for photo in try Base.photos(context) {
                let name = try #require(photo.value(forKey: "name") as? String)
                do {
                    let value = try photo.value(forKey: "image") as? Data
                    if value == sentinel { return "\(name) read elsewhere's bytes" }
                    if let wanted = expected[name], value != wanted { return "\(name) read other bytes than its own" }
                } catch {
                    refused = error
                }
            }
            if let refused { throw refused }
            return nil
        }

        @Test func noOperationReadsOrWritesOutsideTheStoresFolder() throws {
            let count = ProcessInfo.processInfo.environment["OCD_HOSTILE_INPUTS"].flatMap(Int.init).map { max(24, $0 / 10) } ?? 80
            var random = SeededGenerator(seed: 10)
            var accepted = 0, refused = 0, slowest = 0.0, tried = 0
            var wrong: [String] = []
            while tried < count {
                let layout = Layout.allCases[Int.random(in: 0..<Layout.allCases.count, using: &random)]
                let (stack, elsewhere, expected) = try Self.place(layout)
                let before = Self.snapshot(elsewhere)
                let model = stack.model
                let operations: [(String, () throws -> String?)] = [
                    ("read", { try Self.read(stack.url, model: model, expected: expected) }),
                    ("copy", {
                        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
                        let store = try coordinator.addPersistentStore(type: .sqlite, at: stack.url, options: StoreOptions(readOnly: true))
                        let copy = stack.directory.file("Copy-\(tried).sqlite")
                        try coordinator.migratePersistentStore(store, to: copy, type: .sqlite)
                        return try Self.read(copy, model: model, expected: expected)
                    }),
                    ("replace", {
                        let destination = try TestStack(model: model)
                        try PersistentStoreCoordinator(managedObjectModel: model).replacePersistentStore(
                            at: destination.url, withPersistentStoreFrom: stack.url, ofType: SQLiteStoreType)
                        return try Self.read(destination.url, model: model, expected: expected)
                    }),
                    ("save", {  // last: it changes the values the others expect
                        let context = try stack.freshContext()
                        let photos = try Base.photos(context)
                        try photos[1].setValue(Base.bytes(170_000, seed: 99), forKey: "image")
                        context.delete(photos[2])
                        try context.save()
                        return nil
                    }),
                ]
                for (name, operation) in operations where tried < count {
                    tried += 1
                    let started = Date()
                    var outcome = Self.classify(operation)
                    slowest = max(slowest, Date().timeIntervalSince(started))
                    if Self.snapshot(elsewhere) != before { outcome = .wrong("changed the folder elsewhere") }
                    switch outcome {
                    case .accepted: accepted += 1
                    case .refused: refused += 1
                    case .wrong(let reason): wrong.append("\(layout) \(name): \(reason)")
                    }
                }
            }
            let row = "| `_EXTERNAL_DATA` folders with links, FIFOs, folders | \(tried) | \(accepted) | \(refused) | 0 | 0 | \(wrong.count) | \(String(format: "%.1f", slowest * 1000)) ms |"
            print(row)
            if let path = ProcessInfo.processInfo.environment["OCD_HOSTILE_TABLE"], let handle = FileHandle(forWritingAtPath: path) {
                handle.seekToEndOfFile()
                handle.write(Data((row + "\n").utf8))
                try handle.close()
            }
            #expect(accepted > 0 && refused > 0, "\(accepted) accepted, \(refused) refused")
            #expect(wrong.isEmpty, "\(wrong.count) wrong, e.g. \(wrong.prefix(3))")
        }
    }
}
