// swift-tools-version:6.1
// A model layer written as Core Data code that builds unchanged against Core Data on Apple's systems and
// against OpenCoreData elsewhere (the DocC article PortingFromCoreData.md, "One model layer for both").
import PackageDescription

#if canImport(Darwin)
// Xcode's model compiler turns the model source into the `.momd` Core Data reads.
let modelResource = Resource.process("Resources/Notes.xcdatamodeld")
let storage: [Target.Dependency] = []
#else
// OpenCoreData reads the model source itself.
let modelResource = Resource.copy("Resources/Notes.xcdatamodeld")
let storage: [Target.Dependency] = [.product(name: "OpenCoreData", package: "OpenCoreData")]
#endif

let package = Package(
    name: "PortableNotes",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "OpenCoreData", path: "../.."),
    ],
    targets: [
        .target(name: "NotesModel", dependencies: storage, resources: [modelResource]),
        .executableTarget(name: "portable-notes", dependencies: ["NotesModel"]),
    ],
    swiftLanguageModes: [.v6]
)
