import Foundation

/// The clauses of a `CREATE TABLE` statement that make SQLite change what a write does without failing
/// it: a conflict resolution (`… ON CONFLICT REPLACE` deletes the row a new one collides with, `IGNORE`
/// drops the new row, both while the statement succeeds) and a foreign key (`REFERENCES … ON DELETE
/// CASCADE` deletes rows of its own accord). Neither Core Data nor this library declares either on an
/// entity or join table, so a writable open refuses a table that does (``ForeignSchemaObjects``).
enum TableDeclarationClauses {
    /// Each such clause in `sql`, as it reads (`ON CONFLICT REPLACE`, `REFERENCES`), in order; empty for
    /// a plain declaration. Quoted names, string literals and comments are skipped, so a column named
    /// "on conflict" is no clause.
    static func silentlyActing(in sql: String) -> [String] {
        let words = self.words(of: sql)
        var found: [String] = []
        for (position, word) in words.enumerated() {
            if word == "ON", position + 1 < words.count, words[position + 1] == "CONFLICT" {
                found.append("ON CONFLICT" + (position + 2 < words.count ? " " + words[position + 2] : ""))
            } else if word == "REFERENCES" {
                found.append("REFERENCES")
            }
        }
        return found
    }

    /// The unquoted words of `sql`, uppercased.
    private static func words(of sql: String) -> [String] {
        let scalars = Array(sql.unicodeScalars)
        var words: [String] = []
        var current = ""
        var index = 0
        func endWord() {
            if !current.isEmpty { words.append(current.uppercased()) }
            current = ""
        }
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "'", "\"", "`", "[":
                endWord()
                let closing: Unicode.Scalar = scalar == "[" ? "]" : scalar
                index += 1
                while index < scalars.count {
                    if scalars[index] == closing {
                        // A doubled quote is the quote itself, inside the same literal.
                        if closing != "]", index + 1 < scalars.count, scalars[index + 1] == closing { index += 2; continue }
                        break
                    }
                    index += 1
                }
                words.append("")
            case "-" where index + 1 < scalars.count && scalars[index + 1] == "-":
                endWord()
                while index < scalars.count, scalars[index] != "\n" { index += 1 }
            case "/" where index + 1 < scalars.count && scalars[index + 1] == "*":
                endWord()
                index += 2
                while index + 1 < scalars.count, !(scalars[index] == "*" && scalars[index + 1] == "/") { index += 1 }
                index += 1
            case _ where scalar.properties.isAlphabetic || scalar == "_" || ("0"..."9").contains(scalar):
                current.unicodeScalars.append(scalar)
            default:
                endWord()
            }
            index += 1
        }
        endWord()
        return words
    }
}
