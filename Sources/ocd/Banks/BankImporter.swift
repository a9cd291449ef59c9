import Foundation
import OpenCoreData

/// Loads the FDIC list into seed 004's model: one FailedBankInfo and its FailedBankDetails per bank.
enum BankImporter {
    /// The list shipped with ocd.
    static func bundledCSV() throws -> String {
        guard let url = Bundle.module.url(forResource: "failed-banks", withExtension: "csv", subdirectory: "Resources")
                ?? Bundle.module.url(forResource: "failed-banks", withExtension: "csv") else {
            throw OCDError("the bundled failed-banks.csv is missing from ocd's resources")
        }
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// Inserts every record (in one save) and returns how many were inserted.
    @discardableResult
    static func importRecords(_ records: [FailedBankRecord], into context: ManagedObjectContext,
                              importedAt: Date = Date()) throws -> Int {
        try context.performAndWait {
            for record in records {
                try insert(record, into: context, updatedAt: importedAt)
            }
            try context.save()
            return records.count
        }
    }

    /// Inserts one bank (call on the context's queue; the caller saves).
    @discardableResult
    static func insert(_ record: FailedBankRecord, into context: ManagedObjectContext, updatedAt: Date) throws -> ManagedObject {
        let info = try context.insertNewObject(forEntityName: "FailedBankInfo")
        try info.setValue(record.name, forKey: "name")
        try info.setValue(record.city, forKey: "city")
        try info.setValue(record.state, forKey: "state")
        let details = try context.insertNewObject(forEntityName: "FailedBankDetails")
        try details.setValue(record.closeDate, forKey: "closeDate")
        try details.setValue(updatedAt, forKey: "updatedDate")
        try details.setValue(record.cert, forKey: "zip")
        try info.setValue(details, forKey: "details")
        return info
    }

    /// How many banks the store holds.
    static func count(in context: ManagedObjectContext) throws -> Int {
        try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "FailedBankInfo")) }
    }
}
