import Foundation

/// How names reach SQL text: only names the library made from a checked model, and always quoted.
///
/// Model files are outside input. Entity and property names are checked when the model is built
/// (``isModelName(_:)``), and the store's table, column and index names are made from them; quoting them
/// where SQL is assembled keeps even a name that slipped past a check a name, never SQL.
enum SQLIdentifier {
    /// `name` as an SQL identifier: in double quotes, any double quote inside doubled.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Whether `name` is a name Core Data accepts for an entity or property: a letter, then letters,
    /// digits and underscores. SQLite reads such a name as one identifier token.
    static func isModelName(_ name: String) -> Bool { isIdentifier(name, leadingUnderscore: false) }

    /// Whether `name` is a plain identifier for an index: letters, digits and underscores, not starting with
    /// a digit.
    static func isIndexName(_ name: String) -> Bool { isIdentifier(name, leadingUnderscore: true) }

    private static func isIdentifier(_ name: String, leadingUnderscore: Bool) -> Bool {
        guard let first = name.unicodeScalars.first,
              CharacterSet.letters.contains(first) || leadingUnderscore && first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || CharacterSet.alphanumerics.contains($0) }
    }
}
