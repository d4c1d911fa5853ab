// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Inkling",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "inkling", targets: ["inkling"]),
        .library(name: "InklingCore", targets: ["InklingCore"]),
    ],
    targets: [
        /// Everything that decides: text units, language packs, prediction, the input session.
        /// Pure Swift (standard library and FoundationEssentials), no C imports.
        .target(name: "InklingCore"),
        /// Fixtures and helpers shared by the test targets (tiny packs, marked text).
        .target(name: "InklingTestSupport", dependencies: ["InklingCore"]),
        /// The `inkling` command-line tool: a thin shell over InklingCore.
        .executableTarget(name: "inkling", dependencies: ["InklingCore"]),
        .testTarget(
            name: "InklingCoreTests",
            dependencies: ["InklingCore", "InklingTestSupport"]
        ),
    ]
)
