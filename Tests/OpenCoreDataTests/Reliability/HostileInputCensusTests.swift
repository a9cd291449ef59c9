import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataImport

extension Reliability {
    /// The hostile-input table of docs/RELIABILITY.md: for each kind of input the library reads from outside
    /// (predicate formats, model XML, compiled models, store metadata, import rows, model caches, XML stores;
    /// PostgreSQL URLs in `PostgreSQLURLCensusTests`), inputs made from the fuzz
    /// corpus's seeds by deterministic mutations and from the shapes that once crashed or hung, each fed to the
    /// public entry point and its result classified:
    /// - accepted: a value came back, and its own check held (a predicate prints back to itself, metadata
    ///   writes back to the same hashes, every import row is converted or refused once);
    /// - refused: the layer's typed error came back;
    /// - wrong: another error type, or the value's check failed;
    /// - slow: one input took more than `slowSeconds` (a hang would be here; none may be).
    /// A crash would end the test process, so a finished run is itself the "crashed: 0" column.
    ///
    /// `OCD_HOSTILE_INPUTS` sets the inputs per kind (default 400); `OCD_HOSTILE_TABLE=path` writes the
    /// Markdown table there (docs/RELIABILITY.md holds a 4,000-input run).
    @Suite struct HostileInputCensusTests {
        static var inputsPerKind: Int {
            ProcessInfo.processInfo.environment["OCD_HOSTILE_INPUTS"].flatMap(Int.init) ?? 400
        }
        /// Far above any input's real cost (milliseconds in a debug build): only a hang reaches it.
        static let slowSeconds = 10.0

        enum Outcome { case accepted, refused, wrong(String) }

        struct Tally {
            let kind: String
            var tried = 0, accepted = 0, refused = 0, slow = 0
            var wrong: [String] = []
            var slowest = 0.0

            mutating func record(_ outcome: Outcome, seconds: Double) {
                tried += 1
                slowest = max(slowest, seconds)
                if seconds > HostileInputCensusTests.slowSeconds { slow += 1 }
                switch outcome {
                case .accepted: accepted += 1
                case .refused: refused += 1
                case .wrong(let why): wrong.append(why)
                }
            }

            var markdownRow: String {
                "| \(kind) | \(tried) | \(accepted) | \(refused) | 0 | \(slow) | \(wrong.count) | \(String(format: "%.1f", slowest * 1000)) ms |"
            }
        }

        // MARK: Inputs

        static var corpusRoot: URL {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")
        }

        static func seeds(_ folder: String) -> [Data] {
            let directory = corpusRoot.appendingPathComponent(folder)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
            return names.compactMap { try? Data(contentsOf: directory.appendingPathComponent($0)) }
        }

        /// SplitMix64: the same inputs on every run and machine.
        struct Generator: RandomNumberGenerator {
            var state: UInt64
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }

        /// `count` inputs: the seeds and `extra` as they are, then mutations of them: bytes flipped, a token of
        /// `tokens` inserted, a slice repeated many times, a prefix wrapped in deep nesting, cut short, or given
        /// a NUL, a control character or invalid UTF-8.
        static func inputs(seeds: [Data], extra: [Data], tokens: [String], nesting: (String, String),
                           count: Int, seed: UInt64) -> [Data] {
            var random = Generator(state: seed)
            let base = (seeds + extra).filter { !$0.isEmpty }
            var result = Array((seeds + extra).prefix(count))
            guard !base.isEmpty else { return result }
            while result.count < count {
                var bytes = [UInt8](base[Int.random(in: 0..<base.count, using: &random)])
                for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                    let at = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<7, using: &random) {
                    case 0: bytes[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                    case 1: bytes.insert(contentsOf: Array((tokens.randomElement(using: &random) ?? "").utf8), at: at)
                    case 2:
                        let end = min(bytes.count, at + Int.random(in: 1...16, using: &random))
                        let slice = bytes[at..<end]
                        bytes.insert(contentsOf: Array(repeating: slice, count: Int.random(in: 50...3_000, using: &random)).joined(), at: at)
                    case 3:
                        let depth = Int.random(in: 100...20_000, using: &random)
                        bytes = Array(String(repeating: nesting.0, count: depth).utf8) + bytes
                            + Array(String(repeating: nesting.1, count: depth).utf8)
                    case 4: bytes.removeSubrange(at...)
                    case 5: bytes.insert([0x00, 0x1B, 0x7F].randomElement(using: &random) ?? 0, at: at)
                    default: bytes.insert(contentsOf: [[0xC3], [0xFF, 0xFE], [0xED, 0xA0, 0x80]].randomElement(using: &random) ?? [], at: at)
                    }
                }
                result.append(Data(bytes))
            }
            return result
        }

        static func run(kind: String, inputs: [Data], check: (Data) -> Outcome) -> Tally {
            var tally = Tally(kind: kind)
            for input in inputs {
                let start = DispatchTime.now().uptimeNanoseconds
                let outcome = check(input)
                tally.record(outcome, seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            return tally
        }

        // MARK: Checks, one per kind

        static func predicate(_ data: Data) -> Outcome {
            let text = String(decoding: data, as: UTF8.self)
            let predicate: QueryPredicate
            do {
                predicate = try QueryPredicate(format: text)
            } catch is QueryLanguageError {
                return .refused
            } catch {
                return .wrong("predicate: \(type(of: error)) \(error)")
            }
            let printed = predicate.predicateFormat
            guard let again = try? QueryPredicate(format: printed), again == predicate else {
                return .wrong("predicate \(text.prefix(80).debugDescription) prints as \(printed.prefix(80).debugDescription), which does not read back to it")
            }
            _ = try? predicate.evaluate(with: ["name": "Émile", "age": 42, "tags": ["a", "b"]])
            return .accepted
        }

        static func modelXML(_ data: Data) -> Outcome {
            let model: ManagedObjectModel
            do {
                model = try ManagedObjectModel(xmlData: data, source: "census")
            } catch is ModelError {
                return .refused
            } catch {
                return .wrong("model XML: \(type(of: error)) \(error)")
            }
            _ = model.entityVersionHashesByName
            do {
                let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
                try coordinator.addPersistentStore(type: .inMemory)
            } catch is StoreError {
            } catch is ModelError {
            } catch {
                return .wrong("a loaded model's in-memory store: \(type(of: error)) \(error)")
            }
            return .accepted
        }

        static func compiledModel(_ data: Data) -> Outcome {
            do {
                let model = try ManagedObjectModel(compiledModelData: data, source: "census")
                _ = model.entityVersionHashesByName
                return .accepted
            } catch is ModelError {
                return .refused
            } catch {
                return .wrong("compiled model: \(type(of: error)) \(error)")
            }
        }

        static func storeMetadata(_ data: Data) -> Outcome {
            let metadata: StoreMetadata
            do {
                metadata = try StoreMetadata(plistData: data, storePath: "census")
            } catch is StoreError {
                return .refused
            } catch {
                return .wrong("store metadata: \(type(of: error)) \(error)")
            }
            guard let written = try? metadata.plistData(),
                  let again = try? StoreMetadata(plistData: written, storePath: "census round trip"),
                  again.versionHashes == metadata.versionHashes else {
                return .wrong("store metadata that was read does not write back to the same hashes")
            }
            return .accepted
        }

        static let modelCacheNumbers: [[String: Int]?] = [nil, ["Author": 2, "Book": 1, "Novel": 3]]

        /// A store's `Z_MODELCACHE` content: raw DEFLATE of a keyed archive, as Core Data writes it. Accepted
        /// when a model loads whose every entity maps to a layout; a decompressed archive past the size limit
        /// is wrong even when refused later.
        static func modelCache(_ data: Data) -> Outcome {
            if let archive = try? StoreModelCache.archive(fromContent: data, path: "census"),
               archive.count > StoreModelCache.maximumModelSize {
                return .wrong("model cache decompressed to \(archive.count) bytes, past the limit")
            }
            do {
                let model = try StoreModelCache.model(fromContent: data, path: "census",
                                                      storeNumbers: modelCacheNumbers[data.count % modelCacheNumbers.count])
                _ = model.entityVersionHashesByName
                for entity in model.entities { _ = model.schema.mapping(for: entity) }
                return .accepted
            } catch is StoreError {
                return .refused
            } catch is ModelError {
                return .refused
            } catch {
                return .wrong("model cache: \(type(of: error)) \(error)")
            }
        }

        /// A folder for the XML stores the census writes, removed with the process's temporary files.
        static let xmlFolder: URL = {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-census-xml-\(UUID().uuidString)")
            try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }()

        /// Opens an XML store file with the model its objects describe, counts every entity's objects and
        /// writes it to a new XML file.
        static func openAndWriteBack(_ data: Data, name: String) throws -> (objects: Int, written: Data) {
            let source = xmlFolder.appendingPathComponent("\(name).xml")
            let copy = xmlFolder.appendingPathComponent("\(name)-copy.xml")
            try? FileManager.default.removeItem(at: copy)
            try data.write(to: source)
            let model = try ManagedObjectModel.derivedModel(ofXMLStoreAt: source)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .xml, at: source, options: StoreOptions(readOnly: true))
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            var objects = 0
            for entity in model.entities {
                let request = OpenCoreData.FetchRequest<ManagedObject>(entityName: entity.name)
                request.includesSubentities = false
                objects += try context.count(for: request)
            }
            try SQLiteStore.copyContents(of: store, model: model, toNewStoreAt: copy, type: .xml)
            return (objects, try Data(contentsOf: copy))
        }

        /// A Core Data XML store file. Accepted when it opens, and the file written from it opens again with
        /// as many objects.
        static func xmlStore(_ data: Data) -> Outcome {
            let first: (objects: Int, written: Data)
            do {
                first = try openAndWriteBack(data, name: "input")
            } catch is XMLStoreError {
                return .refused
            } catch {
                return .wrong("XML store: \(type(of: error)) \(error)")
            }
            guard let again = try? openAndWriteBack(first.written, name: "written"), again.objects == first.objects else {
                return .wrong("an XML store that opened does not open again as written, with as many objects")
            }
            return .accepted
        }

        static let importEntity: EntityDescription? = {
            let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Row" representedClassName="Row">
                    <attribute name="name" attributeType="String"/>
                    <attribute name="small" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
                    <attribute name="large" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                    <attribute name="ratio" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                    <attribute name="amount" optional="YES" attributeType="Decimal"/>
                    <attribute name="flag" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
                    <attribute name="when" optional="YES" attributeType="Date"/>
                    <attribute name="blob" optional="YES" attributeType="Binary"/>
                    <attribute name="identifier" optional="YES" attributeType="UUID"/>
                    <attribute name="link" optional="YES" attributeType="URI"/>
                </entity>
            </model>
            """
            return (try? ManagedObjectModel(xmlData: Data(xml.utf8), source: "census"))?.entitiesByName["Row"]
        }()

        static func importRows(_ data: Data) -> Outcome {
            guard let entity = importEntity else { return .wrong("the import entity does not load") }
            // An empty file: `ocd import` refuses it ("has no rows to import").
            guard let form = data.first else { return .refused }
            let text = String(decoding: data.dropFirst(), as: UTF8.self)
            let columns: [String], records: [ImportRecord]
            if form % 2 == 0 {
                do {
                    (columns, records) = try ImportRecordReader.csv(text)
                } catch is ImportError {
                    return .refused
                } catch {
                    return .wrong("CSV: \(type(of: error)) \(error)")
                }
            } else {
                (columns, records) = ImportRecordReader.jsonLines(text)
            }
            guard let mapping = try? ColumnMapping(columns: columns, entity: entity, overrides: []) else {
                return .wrong("mapping columns without overrides threw")
            }
            let (rows, refused) = RecordImporter.convert(records, mapping: mapping, entity: entity)
            guard rows.count + refused.count == records.count else {
                return .wrong("\(records.count) rows read, \(rows.count) converted, \(refused.count) refused")
            }
            return refused.isEmpty ? .accepted : .refused
        }

        // MARK: The census

        @Test func everyHostileInputIsAcceptedOrRefusedNeverWrongNeverHung() throws {
            let count = Self.inputsPerKind
            let deep = String(repeating: "(", count: 600) + "a == 1" + String(repeating: ")", count: 600)
            let predicateExtras = [
                "(age" + String(repeating: "+0", count: 3_000) + ")[FIRST] == 1",
                Array(repeating: "rel", count: 1_300).joined(separator: ".") + " == nil",
                Array(repeating: "a == 1", count: 20_000).joined(separator: " AND "),
                deep, "name MATCHES '(a|aa)*b'", "name == \"\u{0}\"", "SELF == SELF",
            ].map { Data($0.utf8) }
            // Compiled models written here from models of the test fixtures (the corpus holds only an archive).
            let compiled = Self.seeds("ModelXML").prefix(6).compactMap { try? ManagedObjectModel(xmlData: $0, source: "seed") }
                .map(CompiledModelFixture.momData) + [CompiledModelFixture.momData(
                    try ManagedObjectModel(xmlData: RenumberedStoreFixture.xml, source: "inheritance"))]
            let xmlDeep = Data(("<model>" + String(repeating: "<entity>", count: 30_000) + "</model>").utf8)
            let tallies = [
                Self.run(kind: "predicate formats", inputs: Self.inputs(
                    seeds: Self.seeds("Predicates"), extra: predicateExtras,
                    tokens: ["ANY ", " SUBQUERY(", "$x", "@count", "[cd]", " MATCHES ", "{", "'", "%@", "FUNCTION(", "0x"],
                    nesting: ("(", ")"), count: count, seed: 1), check: Self.predicate),
                Self.run(kind: "model XML (`contents`)", inputs: Self.inputs(
                    seeds: Self.seeds("ModelXML"), extra: [xmlDeep],
                    tokens: ["<entity name=\"E\">", "<attribute name=\"a\" attributeType=\"String\"/>", "parentEntity=\"E\"",
                             "<!DOCTYPE x [<!ENTITY a \"aaaa\">]>", "&a;", "<?x?>", "inverseName=\"r\""],
                    nesting: ("<a>", "</a>"), count: count, seed: 2), check: Self.modelXML),
                Self.run(kind: "compiled models (`.mom`)", inputs: Self.inputs(
                    seeds: Self.seeds("CompiledModel"), extra: compiled,
                    tokens: ["$objects", "$top", "NS.objects", "CF$UID", "bplist00"],
                    nesting: ("", ""), count: count, seed: 3), check: Self.compiledModel),
                Self.run(kind: "store metadata (`Z_PLIST`)", inputs: Self.inputs(
                    seeds: Self.seeds("StoreMetadata"), extra: [],
                    tokens: ["NSStoreModelVersionHashes", "NSStoreType", "bplist00"],
                    nesting: ("", ""), count: count, seed: 4), check: Self.storeMetadata),
                Self.run(kind: "import rows (CSV, JSON Lines)", inputs: Self.inputs(
                    seeds: Self.seeds("ImportRows"), extra: [],
                    tokens: [",", "\"", "\r\n", "{\"name\":", "null", "9223372036854775808", "1e400", "2011-02-30", "\u{FEFF}"],
                    nesting: ("[", "]"), count: count, seed: 5), check: Self.importRows),
                Self.run(kind: "model caches (`Z_MODELCACHE`)", inputs: Self.inputs(
                    seeds: Self.seeds("ModelCache"), extra: [],
                    tokens: ["NSKnownKeysDictionary1", "$objects", "CF$UID", "bplist00", "\u{78}\u{9C}"],
                    nesting: ("", ""), count: count, seed: 6), check: Self.modelCache),
                Self.run(kind: "XML stores", inputs: Self.inputs(
                    seeds: Self.seeds("XMLStore"), extra: [],
                    tokens: ["<object type=\"E\" id=\"z1\">", "idrefs=\"z1 z1\"", "type=\"1/1\"", "<attribute name=\"a\" type=\"date\">",
                             "inf", "nan", "-1e300", "<!ENTITY a \"aaaa\">", "&#0;", "<![CDATA[x]]>"],
                    nesting: ("<object type=\"E\" id=\"z9\">", "</object>"), count: count, seed: 7), check: Self.xmlStore),
            ]
            let table = (["| input kind | tried | accepted | refused (typed error) | crashed | slow (> 10 s) | wrong | slowest |",
                          "|---|---:|---:|---:|---:|---:|---:|---:|"] + tallies.map(\.markdownRow)).joined(separator: "\n")
            print(table)
            if let path = ProcessInfo.processInfo.environment["OCD_HOSTILE_TABLE"] {
                try (table + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            }
            for tally in tallies {
                #expect(tally.tried >= min(count, 50), "\(tally.kind): only \(tally.tried) inputs (are the Fuzz/Corpus seeds there?)")
                #expect(tally.wrong.isEmpty, "\(tally.kind): \(tally.wrong.count) wrong, e.g. \(tally.wrong.prefix(3))")
                #expect(tally.slow == 0, "\(tally.kind): \(tally.slow) inputs took over \(Self.slowSeconds) s")
            }
        }
    }
}
