import Foundation
import GRDB

/// A mapping-model migration writes a new store whose values kept outside their rows are new files. A
/// failed migration removes the files its destination wrote; a migration in place, once written back,
/// removes the files of the values before it (``MappingModelMigration``).
extension ExternalBinaryStorage {
    /// The files the rows of the store at `url` name in `model`'s flagged columns, read through a
    /// read-only connection; empty for a model without such columns.
    ///
    /// - Throws: the ``StoreError`` of opening or reading the file.
    static func referencedFiles(ofStoreAt url: URL, model: ManagedObjectModel) throws -> Set<String> {
        guard let storage = ExternalBinaryStorage(storeURL: url, model: model) else { return [] }
        let schema = model.schema
        return try ReadOnlyStoreFile.read(url.path) { db in
            var names: Set<String> = []
            for table in schema.tables {
                let columns = storage.columnNames(ofTable: table.name, schema: schema)
                guard !columns.isEmpty, try db.tableExists(table.name) else { continue }
                names.formUnion(try referencedFiles(db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table.name)",
                                                    arguments: []))
            }
            return names
        }
    }

    /// Removes from `directory` (nil: the folder next to the file) the files the store at `url` names,
    /// but those the store at `kept` (read with `keptModel`) names too. A store that cannot be read removes
    /// nothing: a file too many stays behind, none a row names is lost. Without a `directory`, the folder
    /// and its `_SUPPORT` parent are removed when that leaves them empty.
    static func removeFiles(ofStoreAt url: URL, model: ManagedObjectModel, directory: URL?,
                            keeping kept: URL? = nil, model keptModel: ManagedObjectModel? = nil) {
        guard var names = try? referencedFiles(ofStoreAt: url, model: model) else { return }
        if let kept, let keptModel {
            guard let keptNames = try? referencedFiles(ofStoreAt: kept, model: keptModel) else { return }
            names.subtract(keptNames)
        }
        let folder = directory ?? Self.directory(forStoreAt: url)
        for name in names { remove(name, from: folder) }
        if directory == nil {
            // rmdir removes only empty folders.
            rmdir(folder.path)
            rmdir(folder.deletingLastPathComponent().path)
        }
    }
}
