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
}
