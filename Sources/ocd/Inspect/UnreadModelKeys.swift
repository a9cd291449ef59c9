import OpenCoreData
import OpenCoreDataImport

/// What `inspect` and `model convert` say of a model read from a compiled model whose archive holds keys
/// the library does not read (docs/INTEROP.md), so nothing in the file is left out without a word.
enum UnreadModelKeys {
    /// A heading and one indented line per unread key (escaped: the names come from the file); nothing
    /// when everything was read.
    static func note(for model: ManagedObjectModel, version: String? = nil) -> [String] {
        guard !model.unreadCompiledModelKeys.isEmpty else { return [] }
        let heading = "Not read from the compiled model\(version.map { " '\(TerminalText.escaped($0))'" } ?? "") (docs/INTEROP.md):"
        return [heading] + model.unreadCompiledModelKeys.map { "  " + TerminalText.escaped($0) }
    }
}
