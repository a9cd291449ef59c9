import Foundation
import Testing
@testable import OpenCoreData

final class Bank: ManagedObject {
    override class var entityName: String { "FailedBankInfo" }
    @Managed("name") var name: String?
    @Managed("state") var state: String?
    @Managed("details") var details: BankDetails?
}

final class BankDetails: ManagedObject {
    override class var entityName: String { "FailedBankDetails" }
    @Managed("closeDate") var closeDate: Date?
    @Managed("zip") var zip: Int?
    @Managed("info") var info: Bank?
}

class AnimalObject: ManagedObject {
    @Managed("name") var name: String?
}
protocol Barking: AnyObject { func bark() -> String }
final class DogObject: AnimalObject, Barking {
    func bark() -> String { "woof from \(name ?? "?")" }
}
final class CatObject: AnimalObject {}

@Suite struct TypedObjectTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("FailedBankInfo", class: Bank.self) {
                Attribute("name", .string)
                Attribute("state", .string)
                ToOne("details", "FailedBankDetails", inverse: "info", deleteRule: .cascade)
            }
            EntityDescription("FailedBankDetails", class: BankDetails.self) {
                Attribute("closeDate", .date)
                Attribute("zip", .integer32)
                ToOne("info", "FailedBankInfo", inverse: "details")
            }
        }
    }

    @Test func typedPropertiesReadAndWriteThroughRelationships() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        let bank = try context.insertNew(Bank.self)
        bank.name = "First Bank"
        bank.state = "IL"
        let details = try context.insertNew(BankDetails.self)
        details.closeDate = Date(timeIntervalSinceReferenceDate: 1000)
        details.zip = 60601
        bank.details = details
        #expect(details.info === bank)
        try context.save()

        let reader = stack.context()
        let banks = try reader.fetch(FetchRequest<Bank>())
        #expect(banks.count == 1)
        #expect(banks[0].name == "First Bank")
        #expect(banks[0].details?.closeDate == Date(timeIntervalSinceReferenceDate: 1000))
        #expect(banks[0].details?.zip == 60601)
        #expect(try banks[0].value(forKeyPath: "details.zip") as? Int32 == 60601)
    }

    /// A fetch's objects as the request's type across an entity hierarchy whose entities have classes of
    /// their own: a superclass takes them all, a class that only some are is refused naming the entity, and
    /// a protocol type gets working values.
    @Test func typedFetchesOverAHierarchyOfClasses() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Animal", class: AnimalObject.self) { Attribute("name", .string) }
            EntityDescription("Dog", parent: "Animal", class: DogObject.self)
            EntityDescription("Cat", parent: "Animal", class: CatObject.self)
        }
        let stack = try TestStack(model: model)
        let writer = stack.context()
        for (index, entity) in ["Dog", "Cat", "Dog", "Animal", "Dog", "Cat"].enumerated() {
            try writer.insertNewObject(forEntityName: entity).setValue("\(entity) \(index)", forKey: "name")
        }
        try writer.save()
        let context = stack.context()
        let byName = [QuerySortDescriptor(key: "name")]

        let all = FetchRequest<AnimalObject>(entityName: "Animal")
        all.sortDescriptors = byName
        let animals = try context.fetch(all)
        #expect(animals.map(\.name) == ["Animal 3", "Cat 1", "Cat 5", "Dog 0", "Dog 2", "Dog 4"])
        #expect(animals.map { String(describing: type(of: $0)) }
                == ["AnimalObject", "CatObject", "CatObject", "DogObject", "DogObject", "DogObject"])

        let untyped = FetchRequest<ManagedObject>(entityName: "Animal")
        untyped.sortDescriptors = byName
        #expect(try context.fetch(untyped).map { $0.objectID } == animals.map { $0.objectID })

        let dogsOnly = FetchRequest<DogObject>(entityName: "Animal")
        dogsOnly.sortDescriptors = [QuerySortDescriptor(key: "name", ascending: false)]
        let refusal = #expect(throws: ObjectGraphError.self) { try context.fetch(dogsOnly) }
        // Refused before reading, whatever the rows: the entity itself makes AnimalObjects.
        #expect("\(refusal.map { $0 } as Any)".contains("Objects of entity 'Animal' are AnimalObject, not DogObject"))

        let barkers = FetchRequest<any Barking>(entityName: "Dog")
        barkers.sortDescriptors = byName
        #expect(try context.fetch(barkers).map { $0.bark() } == ["woof from Dog 0", "woof from Dog 2", "woof from Dog 4"])
    }
}
