import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// The server the PostgreSQL tests run against: the one `OCD_POSTGRES_URL` names
/// (`export OCD_POSTGRES_URL=$(scripts/postgres-server.sh start)`). Without it those tests are skipped, each
/// suite saying so in one line.
enum PostgreSQLTestServer {
    static let urlVariable = "OCD_POSTGRES_URL"
    static let skipReason: Comment = "no PostgreSQL server: export OCD_POSTGRES_URL=$(scripts/postgres-server.sh start) to run these"

    static var url: String? { ProcessInfo.processInfo.environment[urlVariable].flatMap { $0.isEmpty ? nil : $0 } }
    static var isAvailable: Bool { url != nil }

    /// The server's configuration with a schema of its own (`ocd_test_…`), so tests running at once never meet.
    static func freshConfiguration(poolSize: Int = 4) throws -> PostgreSQLStoreConfiguration {
        var configuration = try PostgreSQLStoreConfiguration(url: url!)
        configuration.schema = "ocd_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        configuration.poolSize = poolSize
        return configuration
    }

    /// Drops the test's schema and everything in it.
    static func drop(_ configuration: PostgreSQLStoreConfiguration) {
        guard let schema = configuration.schema else { return }
        var admin = configuration
        admin.schema = nil
        let pool = PostgreSQLConnectionPool(configuration: admin)
        _ = try? pool.withSession { try $0.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE") }
        pool.close()
    }
}

/// A model with every attribute type the layout maps, a sub-entity sharing its parent's table, a to-one with
/// its to-many inverse and a many-to-many (a join table).
enum LibraryModel {
    static func make(extraAttribute: String? = nil) throws -> ManagedObjectModel {
        var authorProperties: [PropertyDescription] = [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "born", type: .date),
            AttributeDescription(name: "rating", type: .decimal),
            AttributeDescription(name: "score", type: .double),
            AttributeDescription(name: "photo", type: .binaryData),
            AttributeDescription(name: "active", type: .boolean),
            RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "author"),
        ]
        if let extraAttribute { authorProperties.append(AttributeDescription(name: extraAttribute, type: .integer64)) }
        let author = EntityDescription(name: "Author", properties: authorProperties)
        let book = EntityDescription(name: "Book", properties: [
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "pages", type: .integer32),
            RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "books"),
        ])
        let novel = EntityDescription(name: "Novel", properties: [AttributeDescription(name: "genre", type: .string)],
                                      superentityName: "Book")
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "label", type: .string),
            RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "tags"),
        ])
        return try ManagedObjectModel(entities: [author, book, novel, tag])
    }
}
