// swift-tools-version:6.0
import PackageDescription

/// Every function in a section of its own (issue 18), for the code linked into the engine: the
/// linker can then place the functions that typing runs next to each other (see `engineLinking`).
let functionSections: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(platforms: [.linux]))]

/// The engine's code in the order of `Sources/InklingEngine/FunctionOrder.txt` (issue 18): the
/// functions a typing run executes first, together, then the rest. The kernel maps a file's pages
/// 64 KB around every page a fault touches, so typing's ~600 kB of code scattered over 10 MB of
/// text kept ~7 MB of the binary resident; packed, the same code spans a few dozen such blocks.
/// Functions the file names that no longer exist are ignored (a stale file only packs less);
/// `bench/engine_function_order.py` writes a fresh one. gold (binutils) reads the file; it is
/// the linker Swift uses on Linux, named here so that the option is always understood. `-z now`
/// binds every library symbol at the start: bound lazily, the first call of each while typing
/// ran ld.so's code and read the binary's symbol tables, which then stayed resident (~0.9 MB).
let engineLinking: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-use-ld=gold", "-Xlinker", "-z", "-Xlinker", "now", "-Xlinker",
            "--section-ordering-file=\(Context.packageDirectory)/Sources/InklingEngine/FunctionOrder.txt",
        ], .when(platforms: [.linux]))
]

/// Release builds of the decision code skip the run-time exclusivity checks (issue 18): the
/// predictor's caches are class properties, and every access to one called `swift_beginAccess`
/// (a thread-local access set) — 5 % of a prediction's time. Debug builds, where every unit test
/// and the session fuzzer run, keep the checks, so an overlapping access still fails a test;
/// the compiler's static checks apply in both.
let releaseWithoutDynamicExclusivity: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
]

let package = Package(
    name: "Inkling",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "inkling", targets: ["inkling"]),
        .library(name: "InklingCore", targets: ["InklingCore"]),
        .executable(name: "ibus-engine-inkling", targets: ["InklingEngine"]),
        .executable(name: "inkling-cloud", targets: ["InklingCloud"]),
        .executable(name: "inkling-server", targets: ["InklingServer"]),
        .executable(name: "inkling-setup", targets: ["InklingSetup"]),
        .executable(name: "inkling-dictate", targets: ["InklingDictate"]),
    ],
    targets: [
        /// Everything that decides: text units, language packs, prediction, the input session.
        /// Pure Swift (standard library and FoundationEssentials), no C imports.
        .target(name: "InklingCore", swiftSettings: functionSections + releaseWithoutDynamicExclusivity),
        /// Fixtures and helpers shared by the test targets (tiny packs, marked text).
        .target(name: "InklingTestSupport", dependencies: ["InklingCore"]),
        /// The command-line conventions of the three executables: options, help, usage errors,
        /// bounded line reading. Pure Swift (Glibc for the terminal); InklingCore for `tr`.
        .target(name: "InklingCommandLine", dependencies: ["InklingCore"], swiftSettings: functionSections),
        .testTarget(name: "InklingCommandLineTests", dependencies: ["InklingCommandLine"]),
        /// The `inkling` command-line tool: a thin shell over InklingCore.
        .executableTarget(
            name: "inkling",
            dependencies: [
                "InklingCore", "InklingCommandLine", "CGio", "CCurl", "InklingStore", "InklingDigest", "InklingAccount",
                "InklingServerProtocol", "InklingGettext",
            ]),
        /// SHA-256 of pack files (GLib's GChecksum), shared by the CLI and the engine.
        .target(name: "InklingDigest", dependencies: ["CGio"], swiftSettings: functionSections),
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
        /// gettext from glibc (`libintl.h`, `locale.h`); part of libc, nothing to link.
        .systemLibrary(name: "CIntl", path: "Sources/CIntl"),
        /// Binds the `inkling` text domain and installs gettext as InklingCore's `Translation`
        /// lookup; used by the engine, the settings app and the CLI (see `po/`).
        .target(name: "InklingGettext", dependencies: ["InklingCore", "CIntl"], swiftSettings: functionSections),
        /// The log of the engine and the cloud helper: GLib structured logging, to the journal
        /// when ibus-daemon discarded stderr (the choice is `LogDestination` in InklingCore).
        .target(name: "InklingLog", dependencies: ["InklingCore", "CGio"], swiftSettings: functionSections),
        /// `ibus-engine-inkling`: the IBus glue. Translates callbacks to the InputSession, renders effects.
        .executableTarget(
            name: "InklingEngine",
            dependencies: [
                "InklingCore", "InklingCommandLine", "CIBus", "CXkbCommon", "InklingStore", "InklingDigest",
                "InklingLog", "InklingGettext",
            ],
            path: "Sources/InklingEngine",
            exclude: ["FunctionOrder.txt"],
            swiftSettings: functionSections,
            linkerSettings: engineLinking
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
        /// The blocking libcurl POST client and monotonic clock of the cloud check, shared by
        /// `inkling-cloud` and `inkling-server`'s upstream gateway.
        .target(name: "InklingCloudClient", dependencies: ["CCurl", "InklingCore"]),
        /// `inkling-cloud`: the opt-in cloud-check helper process (JSON lines on stdin/stdout ⇄ HTTPS).
        .executableTarget(
            name: "InklingCloud",
            dependencies: [
                "InklingCore", "InklingCommandLine", "CCurl", "CSecret", "InklingLog", "InklingCloudClient",
                "InklingAccount", "InklingServerProtocol",
            ],
            path: "Sources/InklingCloud"
        ),
        /// The client side of an Inkling Server account: the device token in the keyring
        /// (libsecret), rotation and 401 decisions, HTTP for `inkling account`. Used by the
        /// `inkling` CLI and the `inkling-cloud` helper, never by the engine.
        .target(
            name: "InklingAccount",
            dependencies: [
                "InklingCore", "InklingCommandLine", "InklingServerProtocol", "InklingCloudClient", "CSecret",
            ]
        ),
        .testTarget(
            name: "InklingAccountTests",
            dependencies: ["InklingAccount", "InklingServerProtocol", "InklingCore"],
            path: "Tests/Account/Unit"
        ),
        .testTarget(
            name: "InklingCloudTests",
            dependencies: ["InklingCloud", "InklingCommandLine", "InklingCore"],
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
            dependencies: ["InklingDictate", "InklingCommandLine", "InklingCore"],
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
        .target(name: "InklingStore", dependencies: ["InklingCore", "CSQLite"], swiftSettings: functionSections),
        .testTarget(
            name: "InklingStoreTests",
            dependencies: ["InklingStore", "InklingCore"]
        ),
        /// The Inkling Server's HTTP API (paths, JSON bodies), shared by the server and its
        /// clients. Pure Swift over InklingCore's cloud types.
        .target(name: "InklingServerProtocol", dependencies: ["InklingCore"]),
        .testTarget(name: "InklingServerProtocolTests", dependencies: ["InklingServerProtocol", "InklingCore"]),
        /// The Inkling Server's decisions: token lifecycle, limits, sign-in throttling, the SQL of
        /// both databases, the HTTP routes and the upstream gateway. Pure Swift; clock, randomness,
        /// password hashing, database drivers and the upstream transport are injected.
        .target(name: "InklingServerCore", dependencies: ["InklingServerProtocol", "InklingCore"]),
        /// libmicrohttpd (pkg-config `libmicrohttpd`) for inkling-server's HTTP; typed wrappers.
        .systemLibrary(
            name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        /// libargon2 (pkg-config `libargon2`) for inkling-server's password hashes; getrandom.
        .systemLibrary(
            name: "CArgon2", path: "Sources/CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        /// libpq (pkg-config `libpq`) for inkling-server's PostgreSQL storage.
        .systemLibrary(name: "CPQ", path: "Sources/CPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        /// inkling-server's drivers: SQLite and PostgreSQL connections, Argon2id, getrandom, clock.
        .target(name: "InklingServerStore", dependencies: ["InklingServerCore", "CSQLite", "CPQ", "CArgon2"]),
        /// `inkling-server`: the Inkling Server (HTTP on libmicrohttpd, admin commands).
        .executableTarget(
            name: "InklingServer",
            dependencies: [
                "InklingServerCore", "InklingServerStore", "InklingServerProtocol", "InklingCore", "InklingCloudClient",
                "CMicroHTTPD", "CGio", "InklingLog",
            ],
            path: "Sources/InklingServer"
        ),
        .testTarget(
            name: "InklingServerTests",
            dependencies: ["InklingServerCore", "InklingServerStore", "InklingServerProtocol", "InklingCore"]
        ),
        /// The decisions of the settings app (rows ↔ settings, shortcut checks, messages, heartbeat).
        /// Pure Swift over InklingCore; the GTK glue in InklingSetup only translates.
        .target(name: "InklingSetupModel", dependencies: ["InklingCore"]),
        .testTarget(name: "InklingSetupModelTests", dependencies: ["InklingSetupModel", "InklingCore"]),
        /// GTK 4 and libadwaita (pkg-config `libadwaita-1`, which pulls in `gtk4`) for the settings app.
        .systemLibrary(
            name: "CGtk",
            path: "Sources/CGtk",
            pkgConfig: "libadwaita-1",
            providers: [.apt(["libadwaita-1-dev", "libgtk-4-dev"])]
        ),
        /// `inkling-setup`: the settings app (GNOME Settings' Preferences button opens it).
        .executableTarget(
            name: "InklingSetup",
            dependencies: [
                "InklingSetupModel", "InklingCore", "InklingCommandLine", "InklingStore", "CGtk", "InklingGettext",
            ],
            path: "Sources/InklingSetup",
            // GTK is single-threaded C: its callbacks all run on the main loop.
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "InklingCoreTests",
            dependencies: ["InklingCore", "InklingTestSupport"]
        ),
    ]
)
