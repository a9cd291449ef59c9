import Foundation
import OpenCoreData

/// Seed 002: fetch only object IDs on a background context (IDs are immutable and safe to pass between
/// threads), then turn them into objects in another context, which reads just the rows it uses.
enum BackgroundIDFetch {
    static func run(_ store: OpenedStore, show: Int) async throws -> (ids: Int, seconds: Double, names: [String]) {
        let started = Date()
        let background = store.newContext()
        let ids: [ManagedObjectID] = try await background.perform {
            let request = FetchRequest<ManagedObjectID>(objectIDsOf: "Item")
            request.sortDescriptors = [QuerySortDescriptor(key: "createdAt", ascending: false)]
            return Array(try background.fetch(request))
        }
        let seconds = Date().timeIntervalSince(started)
        let foreground = store.newContext()
        let names = try foreground.performAndWait {
            try ids.prefix(show).map { try foreground.object(with: $0).value(forKey: "name") as? String ?? "?" }
        }
        return (ids.count, seconds, names)
    }
}
