// ibus-engine-inkling: the Inkling IBus engine process.
//
//   --supervise [--ibus]   the component's <exec>: runs the engine (this binary with --ibus) as a child
//               and restarts it when it dies by a signal (Supervisor.swift)
//   --ibus      the engine as started for ibus-daemon: owns org.freedesktop.IBus.Inkling
//   --xml       prints the component XML, with this binary's absolute path as <exec>
//   --version   prints the version; --help the usage
//   (none)      for development: registers the component with the running daemon itself
//
// The language pack is opened once per process; every engine object gets its own session.
import CIBus
import InklingCommandLine
import InklingCore
import InklingGettext
import InklingLog

#if canImport(Glibc)
    import Glibc
#endif

/// The engine's command line (shared conventions: `--help`, `--version`, exit status 2).
let commandSpec = CommandSpec(
    ["ibus-engine-inkling"], synopsis: "[--supervise] [--ibus] | --xml",
    summary:
        "The Inkling input method engine for IBus. ibus-daemon starts it with --supervise --ibus; without options it registers its component with the running daemon itself and serves it (development).",
    options: [
        OptionSpec(
            "--supervise",
            help: "run the engine as a child and restart it when it dies by a signal (the component's exec line)"),
        OptionSpec("--ibus", help: "run as started by ibus-daemon: own the component's bus name"),
        OptionSpec("--xml", help: "print the IBus component XML for this binary and exit"),
    ],
    details: """
        environment:
          INKLING_DEBUG_MEMORY=N   every N key presses, log RSS, peak RSS, the pack's mapped size,
                                   live engine objects and the engine's own key/suggestion times
          INKLING_DEBUG_EVENTS=1   log the IBus notifications received (names and numbers only)
        for tests and development (override GSettings; see CloudBridge.swift):
          INKLING_CLOUD_CHECK=1    turn the cloud check on in every session
          INKLING_CLOUD_ENDPOINT=URL, INKLING_CLOUD_MODEL=NAME   the helper's --endpoint and --model
          INKLING_CLOUD_TIMEOUT_MS=N   the helper's --timeout-ms
          INKLING_CLOUD_NO_KEYRING=1   the helper's --no-keyring
          INKLING_CLOUD_HELPER=PATH    another helper executable (tests)
        Logs go to the systemd journal when stderr is /dev/null (ibus-daemon discards its
        engines' stderr unless run with --verbose), else to stderr; they never contain typed text.
        """)

@MainActor
enum EngineProcess {
    /// The product's clock for the whole engine: sessions, dictation, helpers, cloud timers.
    static let clock = ProductClock.monotonic
    static var pack: LanguagePack?
    static var diagnostics: MemoryDiagnostics?
    static var connection: OpaquePointer?
    static var engineCount = 0

    /// Opens the bundled English pack; on failure every engine passes all keys through.
    static func loadPack() {
        defer {
            diagnostics = MemoryDiagnostics(
                environment: getenv("INKLING_DEBUG_MEMORY").map { String(cString: $0) }, packBytes: pack?.file.size ?? 0
            )
        }
        let executable = PackLocator.currentExecutablePath()
        guard let path = PackLocator.bundledPack(language: "en", executablePath: executable) else {
            log("no English language pack found near \(executable); keys will pass through unchanged")
            return
        }
        do {
            pack = try PackLoader.openBundled(path: path)
        } catch {
            log("cannot use the language pack \(path): \(error); keys will pass through unchanged")
        }
    }

    /// A new engine object for the daemon (one per `CreateEngine` call).
    static func createEngine(named name: String) -> UnsafeMutablePointer<IBusEngine>? {
        guard name == Component.engineName, let connection else { return nil }
        engineCount += 1
        let path = "/org/freedesktop/IBus/Engine/Inkling/\(engineCount)"
        // With focus ids the engine learns which input context has the focus and what kind of
        // client it is (a Qt window loses its composing word when it loses the focus).
        guard let engine = inkling_engine_new_with_focus_id(name, path, connection) else { return nil }
        let session = EngineSettings.makeSession()
        let instance = EngineInstance(engine: engine, session: session, diagnostics: diagnostics)
        wire(engine, to: instance)
        EngineRegistry.add(instance)
        return engine
    }
}

@MainActor
func runEngine(ownName: Bool) -> Never {
    EngineRecovery.adoptSupervisor()
    // Flush learning and leave the main loop on SIGTERM, SIGINT or SIGHUP (exit status 0).
    TerminationSignals.install(onMainLoop: { _ in
        MainActor.assumeIsolated {
            LearningBridge.shutdown()
            ibus_quit()
        }
        return 0  // G_SOURCE_REMOVE
    })
    let startStamp = MemoryDiagnostics.stamp()
    EngineProcess.loadPack()
    EngineProcess.diagnostics?.packOpenMicros = MemoryDiagnostics.now() - startStamp.wall
    PackLoader.start()
    LearningBridge.start()
    EngineSettings.start()
    HeartbeatWriter.start()
    ibus_init()
    guard let bus = ibus_bus_new(), ibus_bus_is_connected(bus) != 0 else {
        log("cannot connect to the IBus daemon")
        exit(1)
    }
    typealias BusHandler = @convention(c) (gpointer?, gpointer?) -> Void
    let disconnected: BusHandler = { _, _ in ibus_quit() }
    inkling_signal_connect(bus, "disconnected", unsafeBitCast(disconnected, to: GCallback.self), nil, nil)

    let connection = ibus_bus_get_connection(bus)
    EngineProcess.connection = connection
    let factory = ibus_factory_new(connection)
    typealias CreateHandler =
        @convention(c) (gpointer?, UnsafePointer<gchar>?, gpointer?) -> UnsafeMutablePointer<IBusEngine>?
    let create: CreateHandler = { _, name, _ in
        let engineName = name.map { String(cString: $0) } ?? ""
        // Pointers are not Sendable: cross the isolation boundary as an address.
        let address = MainActor.assumeIsolated {
            EngineProcess.createEngine(named: engineName).map { UInt(bitPattern: $0) }
        }
        return address.flatMap { UnsafeMutablePointer<IBusEngine>(bitPattern: $0) }
    }
    inkling_signal_connect(factory, "create-engine", unsafeBitCast(create, to: GCallback.self), nil, nil)

    if ownName {
        ibus_bus_request_name(bus, Component.busName, 0)
        EngineRecovery.reattachIfOrphaned(bus)
    } else {
        let xml = Component.xml(exec: PackLocator.currentExecutablePath())
        guard let node = ibus_xml_parse_buffer(xml), let component = ibus_component_new_from_xml_node(node) else {
            log("cannot build the component description")
            exit(1)
        }
        ibus_xml_free(node)
        if ibus_bus_register_component(bus, component) == 0 {
            log("the IBus daemon refused the component")
            exit(1)
        }
    }
    EngineProcess.diagnostics?.startupReady(since: startStamp)
    ibus_main()
    LearningBridge.shutdown()
    HeartbeatWriter.stop()
    exit(0)
}

ProcessLog.setUp(identifier: "ibus-engine-inkling")
// Before anything is typed: no core dumps of a process that holds the user's text.
if inkling_engine_harden_process() != 0 { log("could not disable core dumps", priority: .warning) }

Gettext.start()
let arguments = Terminal.parse(Array(CommandLine.arguments.dropFirst()), with: commandSpec, version: Component.version)
if arguments.has("--xml") && (arguments.has("--ibus") || arguments.has("--supervise")) {
    Terminal.exitWithUsageError(UsageError("--xml cannot be combined with --ibus or --supervise", command: commandSpec))
}
if arguments.has("--xml") {
    print(Component.xml(exec: PackLocator.currentExecutablePath()), terminator: "")
} else if arguments.has("--supervise") {
    Supervisor.run(engineArguments: arguments.has("--ibus") ? ["--ibus"] : [])
} else {
    runEngine(ownName: arguments.has("--ibus"))
}
