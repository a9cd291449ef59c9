import OpenCoreData

/// A bank of seed 004's list, read and written through typed properties (the entity's class in
/// ``BankModel``, so every fetch and insert of the entity makes one).
final class FailedBankInfo: ManagedObject {
    @Managed("name") var name: String?
    @Managed("city") var city: String?
    @Managed("state") var state: String?
    @Managed("details") var details: FailedBankDetails?
}
