// swift-tools-version:6.1
// Fuzz targets for OpenCoreData, kept out of the root package so that `swift build` and `swift test`
// never need libFuzzer. Build and run them with `scripts/fuzz.sh` (see docs/FUZZING.md); the script
// passes `-sanitize=fuzzer`, which supplies `main` and the coverage instrumentation.
import PackageDescription

let package = Package(
    name: "OpenCoreDataFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "OpenCoreData", path: ".."),
    ],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(
            name: "FuzzPredicate",
            dependencies: ["FuzzDriver", .product(name: "OpenCoreData", package: "OpenCoreData")]
        ),
        .executableTarget(
            name: "FuzzModelXML",
            dependencies: ["FuzzDriver", .product(name: "OpenCoreData", package: "OpenCoreData")]
        ),
        .executableTarget(
            name: "FuzzStoreMetadata",
            dependencies: ["FuzzDriver", .product(name: "OpenCoreData", package: "OpenCoreData")]
        ),
        .executableTarget(
            name: "FuzzCompiledModel",
            dependencies: ["FuzzDriver", .product(name: "OpenCoreData", package: "OpenCoreData")]
        ),
        .executableTarget(
            name: "FuzzXMLStore",
            dependencies: ["FuzzDriver", .product(name: "OpenCoreData", package: "OpenCoreData")]
        ),
        .executableTarget(
            name: "FuzzModelCache",
            dependencies: ["FuzzDriver", .product(name: "OpenCoreData", package: "OpenCoreData")]
        ),
        .executableTarget(
            name: "FuzzPostgreSQLURL",
            dependencies: [
                "FuzzDriver",
                .product(name: "OpenCoreData", package: "OpenCoreData"),
                .product(name: "OpenCoreDataPostgreSQL", package: "OpenCoreData"),
            ]
        ),
        .executableTarget(
            name: "FuzzImportRows",
            dependencies: [
                "FuzzDriver",
                .product(name: "OpenCoreData", package: "OpenCoreData"),
                .product(name: "OpenCoreDataImport", package: "OpenCoreData"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
