import Foundation

/// Running a migration in Core Data's words: an app makes a ``MigrationManager`` for two model versions and
/// migrates a store file into a new one through a mapping model.
extension MigrationManager {
    /// Makes the store at `destinationURL` (which must not exist) from the store at `sourceURL` through
    /// `mapping` (Core Data's `migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)`;
    /// nil: the inferred mapping, ``MappingModel/inferredMappingModel(forSourceModel:destinationModel:)``).
    /// The source is opened read-only and never changed. While it runs, ``migrationProgress`` and
    /// ``currentEntityMapping`` say how far it is, and ``userInfo`` reaches the entity migration policies.
    /// ``cancelMigrationWithError(_:)`` stops it at its next batch of objects.
    ///
    /// - Throws: ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for a store type other than
    ///   ``SQLiteStoreType``; what ``StoreOptions/init(optionDictionary:)`` throws for an option that is not read; what ``MappingModelMigration/migrate(storeAt:sourceModel:destinationModel:mapping:into:batchSize:)``
    ///   throws; the error given to ``cancelMigrationWithError(_:)``. On failure no destination file is left.
    public func migrateStore(from sourceURL: URL, sourceType: String, options: [AnyHashable: Any]? = nil,
                             with mapping: MappingModel?, toDestinationURL destinationURL: URL, destinationType: String,
                             destinationOptions: [AnyHashable: Any]? = nil) throws {
        for type in [sourceType, destinationType] where try StoreType(coreDataName: type) != .sqlite {
            throw ObjectGraphError.unsupportedStoreType(name: type, operation: "A mapping migration")
        }
        _ = try StoreOptions(optionDictionary: options)
        _ = try StoreOptions(optionDictionary: destinationOptions)
        let mapping = try mapping ?? MappingModel.inferredMappingModel(forSourceModel: sourceModel, destinationModel: destinationModel)
        state.progress = 0
        try MappingModelMigration.migrate(storeAt: sourceURL, sourceModel: sourceModel, destinationModel: destinationModel,
                                          mapping: mapping, into: destinationURL, batchSize: MappingModelMigration.defaultBatchSize,
                                          externalData: nil, reportingTo: self)
    }

    /// Stops the migration this manager runs at its next batch of objects: it throws `error`, and the
    /// half-made destination is removed (Core Data's `cancelMigrationWithError(_:)`). Safe to call from any
    /// thread; a migration started afterwards runs (the cancellation is used up by the one it stops, or by
    /// the next one to start).
    public func cancelMigrationWithError(_ error: any Error) {
        state.cancellation = error
    }
}
