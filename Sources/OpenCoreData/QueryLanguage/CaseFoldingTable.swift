import Foundation

/// What `[c]` does to each Unicode scalar, taken from the running Foundation so that a store whose SQL cannot
/// call Swift (PostgreSQL) folds text exactly as memory and SQLite do.
///
/// `[c]` is `String.folding(options: .caseInsensitive, locale: nil)`. Unlike `[d]`, it works scalar by
/// scalar: folding a string gives the same scalars as folding each of its scalars alone and joining the
/// results (`CaseFoldingTableTests` checks this on generated text), and nothing folds to nothing. So the fold is
/// a table: scalars that become one other scalar (`A` → `a`), and scalars that become several (`ß` → `ss`,
/// `ǰ` → `j` + U+030C). Only scalars that Unicode says change under case mapping or case folding can change,
/// so the table is built from those alone (about 1,700 foldings, once per process).
package struct CaseFoldingTable: Sendable {
    /// Scalars that fold to one other scalar, in scalar order.
    package let singles: [(from: Unicode.Scalar, to: Unicode.Scalar)]
    /// Scalars that fold to two or more scalars, in scalar order.
    package let expansions: [(from: Unicode.Scalar, to: String)]
    /// The first 8 bytes of the SHA-256 of the table, in hexadecimal: differs when a Foundation folds any
    /// scalar differently, so stores can keep one folding function per table.
    package let digest: String

    /// The table of this process's Foundation.
    package static let current = CaseFoldingTable()

    private init() {
        var singles: [(Unicode.Scalar, Unicode.Scalar)] = []
        var expansions: [(Unicode.Scalar, String)] = []
        var hasher = SHA256()
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value),
                  scalar.properties.changesWhenCaseMapped || scalar.properties.changesWhenCaseFolded else { continue }
            let folded = String(scalar).folding(options: .caseInsensitive, locale: nil)
            let scalars = Array(folded.unicodeScalars)
            if scalars == [scalar] { continue }
            if scalars.count == 1 { singles.append((scalar, scalars[0])) } else { expansions.append((scalar, folded)) }
            hasher.update(Array("\(value):".utf8) + scalars.flatMap { Array("\($0.value),".utf8) } + [0x0A])
        }
        self.singles = singles
        self.expansions = expansions
        digest = hasher.finalize().prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The name of the SQL function that folds text by this table, which a PostgreSQL store installs in its
    /// schema (one per table, so processes whose Foundations differ never share a function).
    package var functionName: String { "ocd_fold_case_" + digest }
}
