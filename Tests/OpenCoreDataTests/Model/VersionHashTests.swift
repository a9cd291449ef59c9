import Foundation
import Testing
@testable import OpenCoreData

/// Pins the version-hash rules of docs/INTEROP.md: what changes an entity's hash and what must not.
@Suite struct VersionHashTests {
    /// A small two-entity model; each test changes one thing through `configure` and compares `Book`'s hash.
    private func bookHash(_ configure: (EntityDescription, EntityDescription) -> Void = { _, _ in }) throws -> Data {
        let book = EntityDescription("Book") {
            Attribute("title", .string, optional: false)
            Attribute("pages", .integer32, default: Int32(1))
            ToOne("author", "Author", inverse: "books")
        }
        let author = EntityDescription("Author") {
            Attribute("name", .string)
            ToMany("books", "Book", inverse: "author")
        }
        configure(book, author)
        let model = try ManagedObjectModel(entities: [book, author])
        return try #require(model.entityVersionHashesByName["Book"])
    }

    private func attribute(_ entity: EntityDescription, _ name: String) -> AttributeDescription? {
        entity.properties.first { $0.name == name } as? AttributeDescription
    }

    private func relationship(_ entity: EntityDescription, _ name: String) -> RelationshipDescription? {
        entity.properties.first { $0.name == name } as? RelationshipDescription
    }

    @Test func hashesAre32BytesAndStable() throws {
        let first = try bookHash()
        #expect(first.count == 32)
        #expect(try bookHash() == first)
    }

    @Test(arguments: [
        "attribute name", "attribute type", "attribute optionality", "attribute becomes transient",
        "attribute read-only", "attribute hash modifier", "external storage", "preserve after deletion",
        "relationship optionality", "relationship destination", "relationship inverse", "maximum count",
        "minimum count", "entity hash modifier", "entity abstract", "uniqueness constraint", "new attribute",
    ])
    func changesThatChangeTheHash(change: String) throws {
        let original = try bookHash()
        let changed = try bookHash { book, author in
            switch change {
            case "attribute name": attribute(book, "title")?.name = "heading"
            case "attribute type": attribute(book, "pages")?.attributeType = .integer64
            case "attribute optionality": attribute(book, "title")?.isOptional = true
            case "attribute becomes transient": attribute(book, "pages")?.isTransient = true
            case "attribute read-only": attribute(book, "title")?.isReadOnly = true
            case "attribute hash modifier": attribute(book, "title")?.versionHashModifier = "v2"
            case "external storage": attribute(book, "pages")?.allowsExternalBinaryDataStorage = true
            case "preserve after deletion": attribute(book, "pages")?.preservesValueInHistoryOnDeletion = true
            case "relationship optionality": relationship(book, "author")?.isOptional = false
            case "relationship destination":
                // Same name, other entity: the old inverse goes too, so both sides stay consistent.
                relationship(book, "author")?.destinationEntityName = "Book"
                relationship(book, "author")?.inverseName = nil
                relationship(author, "books")?.inverseName = nil
            case "relationship inverse":
                relationship(book, "author")?.inverseName = nil
                relationship(author, "books")?.inverseName = nil
            case "maximum count": relationship(book, "author")?.maxCount = 0  // what a to-many has
            case "minimum count": relationship(book, "author")?.minCount = 1
            case "entity hash modifier": book.versionHashModifier = "v2"
            case "entity abstract": book.isAbstract = true
            case "uniqueness constraint": book.uniquenessConstraints = [["title"]]
            case "new attribute": book.addProperty(AttributeDescription(name: "isbn", type: .string))
            default: Issue.record("unknown change \(change)")
            }
        }
        #expect(changed != original, "\(change)")
    }

    @Test(arguments: [
        "delete rule", "default value", "class name", "entity userInfo", "property userInfo", "index",
        "minimum value", "maximum length", "regular expression", "renaming identifier",
        "transformer name", "transient attribute added", "declaration order",
    ])
    func changesThatKeepTheHash(change: String) throws {
        let original = try bookHash()
        let changed = try bookHash { book, _ in
            switch change {
            case "delete rule": relationship(book, "author")?.deleteRule = .cascade
            case "default value": attribute(book, "pages")?.defaultValue = Int32(42)
            case "class name": book.managedObjectClassName = "LibraryBook"
            case "entity userInfo": book.userInfo = ["key": "value"]
            case "property userInfo": attribute(book, "title")?.userInfo = ["key": "value"]
            case "index": book.indexes = [IndexDescription(name: "byTitle", propertyNames: ["title"])]
            case "minimum value": attribute(book, "pages")?.minValue = 1
            case "maximum length": attribute(book, "title")?.maxLength = 10
            case "regular expression": attribute(book, "title")?.regularExpression = "[a-z]+"
            case "renaming identifier": attribute(book, "title")?.renamingIdentifier = "name"
            case "transformer name": attribute(book, "pages")?.valueTransformerName = "Whatever"
            case "transient attribute added":
                let scratch = AttributeDescription(name: "scratch", type: .string)
                scratch.isTransient = true
                book.addProperty(scratch)
            case "declaration order":
                // Properties enter sorted by name, so declaring them in another order changes nothing.
                book.addProperty(AttributeDescription(name: "zzz", type: .string))
            default: Issue.record("unknown change \(change)")
            }
        }
        if change == "declaration order" {
            // Compare against the same properties declared in reverse order.
            let reversed = EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "zzz", type: .string),
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                AttributeDescription(name: "pages", type: .integer32),
                AttributeDescription(name: "title", type: .string, isOptional: false),
            ])
            let author = EntityDescription("Author") {
                Attribute("name", .string)
                ToMany("books", "Book", inverse: "author")
            }
            let model = try ManagedObjectModel(entities: [author, reversed])
            #expect(model.entityVersionHashesByName["Book"] == changed)
        } else {
            #expect(changed == original, "\(change)")
        }
    }

    @Test func orderingAndParentChangeTheHash() throws {
        func model(ordered: Bool, parentHasExtra: Bool) throws -> ManagedObjectModel {
            try ManagedObjectModel {
                EntityDescription("Base", abstract: true) {
                    Attribute("created", .date)
                    if parentHasExtra { Attribute("extra", .string) }
                }
                EntityDescription("List", parent: "Base") {
                    ToMany("items", "Entry", inverse: "list", ordered: ordered)
                }
                EntityDescription("Entry") { ToOne("list", "List", inverse: "items") }
            }
        }
        let plain = try model(ordered: false, parentHasExtra: false).entityVersionHashesByName
        let ordered = try model(ordered: true, parentHasExtra: false).entityVersionHashesByName
        let extended = try model(ordered: false, parentHasExtra: true).entityVersionHashesByName
        #expect(plain["List"] != ordered["List"])
        #expect(plain["Entry"] == ordered["Entry"])
        #expect(plain["Base"] != extended["Base"])
        #expect(plain["List"] != extended["List"])  // the parent's digest enters the child's
        #expect(plain["Entry"] == extended["Entry"])

        let standalone = try ManagedObjectModel {
            EntityDescription("List") {
                Attribute("created", .date)
                ToMany("items", "Entry", inverse: "list")
            }
            EntityDescription("Entry") { ToOne("list", "List", inverse: "items") }
        }
        #expect(standalone.entityVersionHashesByName["List"] != plain["List"])
    }

    @Test func aSelfInverseIsLeftOut() throws {
        let withSelf = try ManagedObjectModel {
            EntityDescription("Person") { ToOne("spouse", "Person", inverse: "spouse") }
        }
        let without = try ManagedObjectModel {
            EntityDescription("Person") { ToOne("spouse", "Person") }
        }
        #expect(withSelf.entityVersionHashesByName == without.entityVersionHashesByName)
    }

    @Test func namesSortByCodePoint() {
        #expect(codePointPrecedes("Zeta", "alpha"))
        #expect(codePointPrecedes("a", "ab"))
        #expect(!codePointPrecedes("b", "a"))
    }

    /// The loader and the builder must agree: FailedBanks from its model file equals the same model in code.
    @Test func loadedModelMatchesTheSameModelBuiltInCode() throws {
        let loaded = try ManagedObjectModel(contentsOf: InteropFixtures.url("FailedBanks.xcdatamodeld"))
        let details = ToOne("details", "FailedBankDetails", inverse: "info", deleteRule: .cascade)
        details.relationship.minCount = 1
        let info = ToOne("info", "FailedBankInfo", inverse: "details")
        info.relationship.minCount = 1
        let built = try ManagedObjectModel {
            EntityDescription("FailedBankInfo") {
                Attribute("name", .string)
                Attribute("city", .string)
                Attribute("state", .string)
                details
            }
            EntityDescription("FailedBankDetails") {
                Attribute("closeDate", .date)
                Attribute("updatedDate", .date)
                Attribute("zip", .integer32)
                info
            }
        }
        #expect(loaded.entityVersionHashesByName == built.entityVersionHashesByName)
    }

    @Test func libraryVersionsDiffer() throws {
        let v1 = try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld/Library.xcdatamodel"))
        let v2 = try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld"))
        #expect(v1.entityVersionHashesByName["Book"] != v2.entityVersionHashesByName["Book"])
        #expect(v2.entityVersionHashesByName.count == 6)
        #expect(v2.entityVersionHashesByName.values.allSatisfy { $0.count == 32 })
    }

    /// Known answer: FailedBankInfo's digest built byte by byte from the rules, independently of the
    /// implementation's helpers.
    @Test func knownAnswerFailedBankInfo() throws {
        let model = try ManagedObjectModel(contentsOf: InteropFixtures.url("FailedBanks.xcdatamodeld"))
        func sha(_ parts: [UInt8]...) -> [UInt8] { [UInt8](SHA256.hash(parts.flatMap { $0 })) }
        func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
        let optionalFlags: [UInt8] = [0x01, 0x00]             // u16(1): optional
        let stringType: [UInt8] = [0xBC, 0x02, 0x00, 0x00]     // i32(700) little-endian
        func stringAttribute(_ name: String) -> [UInt8] { sha(sha(utf8(name), optionalFlags), stringType) }
        let details = sha(sha(utf8("details"), optionalFlags), utf8("FailedBankDetails"), utf8("info"),
                          [0x01, 0x00, 0x00, 0x00],  // maxCount 1
                          [0x01, 0x00, 0x00, 0x00])  // minCount 1
        // Not abstract (0x00), no parent, properties in name order: city, details, name, state.
        let expected = sha(utf8("FailedBankInfo"), [0x00], stringAttribute("city"), details,
                           stringAttribute("name"), stringAttribute("state"))
        #expect(model.entityVersionHashesByName["FailedBankInfo"] == Data(expected))
        #expect(model.entitiesByName["FailedBankInfo"]?.versionHash == Data(expected))
    }
}
