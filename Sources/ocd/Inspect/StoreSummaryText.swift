import Foundation
import OpenCoreData
import OpenCoreDataImport

/// The lines `ocd inspect` prints about the store file itself: the framework version its metadata names,
/// and Core Data's persistent history and CloudKit tables with their rows (`StoreFileSummary`).
enum StoreSummaryText {
    /// The lines for the store at `url`; none when the file cannot be read (the caller reports that).
    static func lines(forStoreAt url: URL) -> [String] {
        guard let summary = try? StoreFileSummary(storeAt: url) else { return [] }
        var lines: [String] = []
        if let problem = summary.metadataProblem {
            lines.append("Metadata: unreadable (\(TerminalText.escaped(problem)))")
        } else {
            var text = "Written by framework version "
                + (summary.frameworkVersion.map(String.init) ?? "unknown") + " (NSPersistenceFrameworkVersion)"
            if let newest = summary.maximumFrameworkVersion {
                text += ", opened by versions up to \(newest) (NSPersistenceMaximumFrameworkVersion)"
            }
            if let hashes = summary.versionHashesVersion { text += ", version hashes version \(hashes)" }
            lines.append(text)
        }
        if summary.tables.isEmpty {
            lines.append("No persistent history or CloudKit tables")
        }
        for table in summary.tables {
            lines.append("\(TerminalText.escaped(table.name)) (\(table.kind.rawValue)) — \(table.rowCount) row\(table.rowCount == 1 ? "" : "s")")
        }
        return lines
    }
}
