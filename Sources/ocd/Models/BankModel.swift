import OpenCoreData

/// Seed 004's FailedBanks model, declared in code exactly as the tutorial's `.xcdatamodeld` declares it
/// (the test fixture FailedBanks.xcdatamodeld has the same entities, so stores are interchangeable).
///
/// The FDIC list has no ZIP codes, so the import stores the bank's FDIC certificate number (CERT) in
/// `zip`, an Integer 32 as in the tutorial's model. The entities' classes, ``FailedBankInfo`` and
/// ``FailedBankDetails``, give typed properties (the classes are not part of the version hashes).
enum BankModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("FailedBankDetails", class: FailedBankDetails.self) {
                Attribute("closeDate", .date)
                Attribute("updatedDate", .date)
                Attribute("zip", .integer32, default: Int32(0))
                ToOne("info", "FailedBankInfo", inverse: "details")
            }
            EntityDescription("FailedBankInfo", class: FailedBankInfo.self) {
                Attribute("city", .string)
                Attribute("name", .string)
                Attribute("state", .string)
                ToOne("details", "FailedBankDetails", inverse: "info", deleteRule: .cascade)
            }
        }
    }
}
