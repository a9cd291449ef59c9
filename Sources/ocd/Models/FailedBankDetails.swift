import Foundation
import OpenCoreData

/// A bank's closing details (seed 004), the other side of ``FailedBankInfo/details``.
final class FailedBankDetails: ManagedObject {
    @Managed("closeDate") var closeDate: Date?
    @Managed("updatedDate") var updatedDate: Date?
    @Managed("zip") var zip: Int32?
    @Managed("info") var info: FailedBankInfo?
}
