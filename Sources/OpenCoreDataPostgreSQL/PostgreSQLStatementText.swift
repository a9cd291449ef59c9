/// SQLite-style statement text turned into PostgreSQL's: `?` placeholders numbered `$1`, `$2`, … in order.
///
/// The store's statement builders are shared with SQLite and write `?`; PostgreSQL numbers its parameters.
/// Question marks inside string literals (`'…'`) and quoted identifiers (`"…"`) are left alone.
enum PostgreSQLStatementText {
    /// `sql` with each placeholder numbered, and how many there were.
    static func numberingPlaceholders(_ sql: String) -> (sql: String, count: Int) {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var count = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                result.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                result.append(character)
            } else if character == "?" {
                count += 1
                result += "$\(count)"
            } else {
                result.append(character)
            }
        }
        return (result, count)
    }
}
