import Foundation

/// A note. Core Data code: `@Managed("key")` stands where `@NSManaged` would (the compatibility file
/// gives it on Apple's systems).
public final class Note: NSManagedObject {
    @Managed("title") public var title: String?
    @Managed("createdAt") public var createdAt: Date?
}
