import Foundation
import OpenCoreData

/// What `[c]`, `uppercase:` and `lowercase:` do to each Unicode scalar, taken from the running Swift and
/// Foundation so that a store whose SQL cannot call Swift (PostgreSQL) maps text exactly as memory and SQLite
/// do.
///
/// `[c]` is `String.folding(options: .caseInsensitive, locale: nil)`; `uppercase:` and `lowercase:` are
/// `uppercased()` and `lowercased()`. Unlike `[d]`, all three work scalar by scalar: mapping a string gives
/// the same scalars as mapping each of its scalars alone and joining the results (`CaseMappingTableTests`
/// checks this on generated text), and no scalar maps to nothing. So each is a table: scalars that become one
/// other scalar (`A` → `a`), and scalars that become several (`ß` → `ss`, `ǰ` → `j` + U+030C). Only scalars
/// Unicode says change under case mapping or case folding can change, so a table is built from those alone
/// (about 1,700 mappings, once per process and kind).
package struct CaseMappingTable: Sendable {
    /// Which mapping a table holds.
    package enum Kind: String, Sendable, CaseIterable {
        /// `[c]`: Foundation's case-insensitive folding.
        case caseFolding = "ocd_fold_case_"
        /// `uppercase:`: `String.uppercased()`.
        case uppercase = "ocd_upper_"
        /// `lowercase:`: `String.lowercased()`.
        case lowercase = "ocd_lower_"
        /// `caseInsensitiveCompare:`'s folding of each scalar (the lowercase of its uppercase,
        /// `StringCollation.fold`), which, applied to canonically decomposed text, gives its sort key.
        case sortFolding = "ocd_sort_fold_"

        func map(_ text: String) -> String {
            switch self {
            case .caseFolding: return text.folding(options: .caseInsensitive, locale: nil)
            case .uppercase: return text.uppercased()
            case .lowercase: return text.lowercased()
            case .sortFolding:
                var folded: [Unicode.Scalar] = []
                for scalar in text.unicodeScalars { StringCollation.fold(scalar, into: &folded) }
                var view = String.UnicodeScalarView()
                view.append(contentsOf: folded)
                return String(view)
            }
        }
    }

    /// The mapping the table holds.
    package let kind: Kind
    /// Scalars that map to one other scalar, in scalar order.
    package let singles: [(from: Unicode.Scalar, to: Unicode.Scalar)]
    /// Scalars that map to two or more scalars, in scalar order.
    package let expansions: [(from: Unicode.Scalar, to: String)]
    /// The first 8 bytes of the SHA-256 of the table, in hexadecimal: differs when a Swift or Foundation maps
    /// any scalar differently, so stores can keep one function per table.
    package let digest: String

    /// `[c]`'s table in this process.
    package static let caseFolding = CaseMappingTable(.caseFolding)
    /// `uppercase:`'s table in this process.
    package static let uppercase = CaseMappingTable(.uppercase)
    /// `lowercase:`'s table in this process.
    package static let lowercase = CaseMappingTable(.lowercase)
    /// `caseInsensitiveCompare:`'s per-scalar folding in this process.
    package static let sortFolding = CaseMappingTable(.sortFolding)
    /// The four tables.
    package static var all: [CaseMappingTable] { [caseFolding, uppercase, lowercase, sortFolding] }

    private init(_ kind: Kind) {
        var singles: [(Unicode.Scalar, Unicode.Scalar)] = []
        var expansions: [(Unicode.Scalar, String)] = []
        var hasher = SHA256()
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value),
                  scalar.properties.changesWhenCaseMapped || scalar.properties.changesWhenCaseFolded else { continue }
            let mapped = kind.map(String(scalar))
            let scalars = Array(mapped.unicodeScalars)
            if scalars == [scalar] { continue }
            if scalars.count == 1 { singles.append((scalar, scalars[0])) } else { expansions.append((scalar, mapped)) }
            hasher.update(Array("\(value):".utf8) + scalars.flatMap { Array("\($0.value),".utf8) } + [0x0A])
        }
        self.kind = kind
        self.singles = singles
        self.expansions = expansions
        digest = hasher.finalize().prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether translating the singles first and then replacing the expansions maps text exactly: no single
    /// maps to a scalar that expands, and no expansion holds one (true of every table Unicode has given so
    /// far; `CaseMappingTableTests` checks it).
    package var composesSafely: Bool {
        let expanding = Set(expansions.map(\.from))
        return !singles.contains { expanding.contains($0.to) }
            && !expansions.contains { $0.to.unicodeScalars.contains(where: expanding.contains) }
    }

    /// Whether replacing the expansions first and then translating the singles maps text exactly: no
    /// expansion gives a scalar that the table maps again. The order for a table where a single gives a
    /// scalar that expands (``Kind/sortFolding`` maps `ẞ` to `ß`, and `ß` to `ss`).
    package var composesReplacingFirst: Bool {
        let mapped = Set(expansions.map(\.from) + singles.map(\.from))
        return !expansions.contains { $0.to.unicodeScalars.contains(where: mapped.contains) }
    }

    /// The name of the SQL function that maps text by this table, which a PostgreSQL store installs in its
    /// schema (one per table, so processes whose Swift or Foundation differ never share a function).
    package var functionName: String { kind.rawValue + digest }
}
