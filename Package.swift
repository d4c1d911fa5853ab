// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Inkling",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "inkling", targets: ["inkling"]),
        .library(name: "InklingCore", targets: ["InklingCore"]),
        .executable(name: "ibus-engine-inkling", targets: ["InklingEngine"]),
        .executable(name: "inkling-cloud", targets: ["InklingCloud"]),
        .executable(name: "inkling-dictate", targets: ["InklingDictate"]),
    ],
    targets: [
        /// Everything that decides: text units, language packs, prediction, the input session.
        /// Pure Swift (standard library and FoundationEssentials), no C imports.
        .target(name: "InklingCore"),
        /// Fixtures and helpers shared by the test targets (tiny packs, marked text).
        .target(name: "InklingTestSupport", dependencies: ["InklingCore"]),
        /// The command-line conventions of the three executables: options, help, usage errors,
        /// bounded line reading. Pure Swift (Glibc for the terminal), no other dependencies.
        .target(name: "InklingCommandLine"),
        .testTarget(name: "InklingCommandLineTests", dependencies: ["InklingCommandLine"]),
        /// The `inkling` command-line tool: a thin shell over InklingCore.
        .executableTarget(
            name: "inkling", dependencies: ["InklingCore", "InklingCommandLine", "CGio", "CCurl", "InklingStore", "InklingDigest"]),
        /// SHA-256 of pack files (GLib's GChecksum), shared by the CLI and the engine.
        .target(name: "InklingDigest", dependencies: ["CGio"]),
        /// GIO (pkg-config `gio-2.0`) for `inkling config` (GSettings) and `InklingDigest` (GChecksum).
        .systemLibrary(
            name: "CGio",
            path: "Sources/CGio",
            pkgConfig: "gio-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        /// libibus (pkg-config `ibus-1.0`) for the engine; a header of inline helpers, no C target.
        .systemLibrary(
            name: "CIBus",
            path: "Sources/CIBus",
            pkgConfig: "ibus-1.0",
            providers: [.apt(["libibus-1.0-dev"])]
        ),
        /// libxkbcommon (pkg-config `xkbcommon`) for the engine: the system's Compose tables.
        .systemLibrary(
            name: "CXkbCommon",
            path: "Sources/CXkbCommon",
            pkgConfig: "xkbcommon",
            providers: [.apt(["libxkbcommon-dev"])]
        ),
        /// The log of the engine and the cloud helper: GLib structured logging, to the journal
        /// when ibus-daemon discarded stderr (the choice is `LogDestination` in InklingCore).
        .target(name: "InklingLog", dependencies: ["InklingCore", "CGio"]),
        /// `ibus-engine-inkling`: the IBus glue. Translates callbacks to the InputSession, renders effects.
        .executableTarget(
            name: "InklingEngine",
            dependencies: ["InklingCore", "InklingCommandLine", "CIBus", "CXkbCommon", "InklingStore", "InklingDigest", "InklingLog"],
            path: "Sources/InklingEngine"
        ),
        /// libcurl (pkg-config `libcurl`) for the cloud helper's HTTPS client; inline setopt wrappers.
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        /// libsecret (pkg-config `libsecret-1`) for the cloud helper's API key in the user's keyring.
        .systemLibrary(
            name: "CSecret",
            path: "Sources/CSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        /// `inkling-cloud`: the opt-in cloud-check helper process (JSON lines on stdin/stdout ⇄ HTTPS).
        .executableTarget(
            name: "InklingCloud",
            dependencies: ["InklingCore", "InklingCommandLine", "CCurl", "CSecret", "InklingLog"],
            path: "Sources/InklingCloud"
        ),
        .testTarget(
            name: "InklingCloudTests",
            dependencies: ["InklingCloud", "InklingCommandLine"],
            path: "Tests/Cloud/Unit"
        ),
        /// PocketSphinx (pkg-config `pocketsphinx`) and libpulse-simple for the dictation helper.
        .systemLibrary(
            name: "CPocketSphinx",
            path: "Sources/CPocketSphinx",
            pkgConfig: "pocketsphinx",
            providers: [.apt(["libpocketsphinx-dev", "libpulse-dev"])]
        ),
        /// `inkling-dictate`: the dictation helper process (JSON lines on stdin/stdout ⇄ speech
        /// recognised on this machine).
        .executableTarget(
            name: "InklingDictate",
            dependencies: ["InklingCore", "InklingCommandLine", "CPocketSphinx", "InklingLog"],
            path: "Sources/InklingDictate"
        ),
        .testTarget(
            name: "InklingDictateTests",
            dependencies: ["InklingDictate", "InklingCore"],
            path: "Tests/Dictate/Unit"
        ),
        /// SQLite (pkg-config `sqlite3`) for the user store. Only InklingStore imports it.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        /// The user's learned words on disk (SQLite, WAL) and the engine's background writer.
        .target(name: "InklingStore", dependencies: ["InklingCore", "CSQLite"]),
        .testTarget(
            name: "InklingStoreTests",
            dependencies: ["InklingStore", "InklingCore"]
        ),
        .testTarget(
            name: "InklingCoreTests",
            dependencies: ["InklingCore", "InklingTestSupport"]
        ),
    ]
)
