// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "OpenCoreData", targets: ["OpenCoreData"]),
        .library(name: "OpenCoreDataImport", targets: ["OpenCoreDataImport"]),
        .library(name: "OpenCoreDataPostgreSQL", targets: ["OpenCoreDataPostgreSQL"]),
        .library(name: "OpenCoreDataSync", targets: ["OpenCoreDataSync"]),
        .library(name: "OpenCoreDataSyncServer", targets: ["OpenCoreDataSyncServer"]),
        .executable(name: "ocd", targets: ["ocd"]),
        .executable(name: "ocd-bench", targets: ["ocd-bench"]),
        .executable(name: "ocd-crash-worker", targets: ["ocd-crash-worker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // Declarations of the Swift runtime's own functions that have no Swift spelling (see its header).
        .target(name: "CSwiftRuntime"),
        .target(
            name: "OpenCoreData",
            dependencies: [
                "CSwiftRuntime",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // Rows of CSV and JSON Lines files checked and converted into an entity's attributes (`ocd import`).
        .target(name: "OpenCoreDataImport", dependencies: ["OpenCoreData"]),
        // The PostgreSQL store (docs/POSTGRESQL.md): a module of its own so that apps on SQLite alone never
        // build SwiftNIO; it reaches the store layer's internals through `package` access.
        .target(
            name: "OpenCoreDataPostgreSQL",
            dependencies: [
                "OpenCoreData",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Sync (docs/SYNC.md): what travels between replicas and the client that mirrors a store through a
        // sync server. Plain Foundation networking, so apps that sync build no server stack.
        .target(name: "OpenCoreDataSync", dependencies: ["OpenCoreData"]),
        // The sync server (`ocd sync serve`): its state in a store of the library's own (SQLite or
        // PostgreSQL), HTTP through Hummingbird, bearer tokens through jwt-kit.
        .target(
            name: "OpenCoreDataSyncServer",
            dependencies: [
                "OpenCoreData",
                "OpenCoreDataSync",
                "OpenCoreDataPostgreSQL",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "ocd",
            dependencies: [
                "OpenCoreData",
                "OpenCoreDataImport",
                "OpenCoreDataPostgreSQL",
                "OpenCoreDataSyncServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `ocd serve` (docs/SERVE.md): the read-only store browser's HTTP server.
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Resources")]
        ),
        .executableTarget(
            name: "ocd-bench",
            dependencies: [
                "OpenCoreData",
                "OpenCoreDataPostgreSQL",
                "OpenCoreDataSync",
                "OpenCoreDataSyncServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The child process of the reliability harnesses (docs/RELIABILITY.md): saves until killed.
        .executableTarget(
            name: "ocd-crash-worker",
            dependencies: [
                "OpenCoreData",
                "OpenCoreDataSync",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "OpenCoreDataTests",
            dependencies: [
                "OpenCoreData",
                "OpenCoreDataImport",
                "ocd",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "OpenCoreDataSyncTests",
            dependencies: ["OpenCoreData", "OpenCoreDataSync", "OpenCoreDataSyncServer"]
        ),
        // Runs against a real server when OCD_POSTGRES_URL names one (scripts/postgres-server.sh starts one).
        .testTarget(
            name: "OpenCoreDataPostgreSQLTests",
            dependencies: [
                "OpenCoreData",
                "OpenCoreDataPostgreSQL",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
