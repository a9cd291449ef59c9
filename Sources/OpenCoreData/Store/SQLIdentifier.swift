import Foundation

/// How names reach SQL text: only names the library made from a checked model.
///
/// Model files are outside input. Entity, property and index names are checked when the model is built
/// (``isModelName(_:)``, ``isPlainName(_:)``), and the store's table, column and index names are made from
/// them, each checked to be a plain name once more. The statements that create or inspect the layout quote
/// them as well; queries and writes paste them as they are, so the SQL log reads like Core Data's.
enum SQLIdentifier {
    /// `name` as an SQL identifier: in double quotes, any double quote inside doubled.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Whether `name` is a name Core Data accepts for an entity or property: a letter, then letters,
    /// digits and underscores. SQLite reads such a name as one identifier token.
    static func isModelName(_ name: String) -> Bool { isIdentifier(name, leadingUnderscore: false) }

    /// Whether `name` is a plain identifier, as index names and every name the layout makes must be:
    /// letters, digits and underscores, not starting with a digit. SQLite reads it as one token, and no
    /// keyword starts with the `Z` the layout's names do.
    static func isPlainName(_ name: String) -> Bool { isIdentifier(name, leadingUnderscore: true) }

    private static func isIdentifier(_ name: String, leadingUnderscore: Bool) -> Bool {
        guard let first = name.unicodeScalars.first,
              CharacterSet.letters.contains(first) || leadingUnderscore && first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || CharacterSet.alphanumerics.contains($0) }
    }
}
