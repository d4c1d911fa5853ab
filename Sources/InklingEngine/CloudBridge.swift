import CIBus
import FoundationEssentials
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The engine side of the opt-in cloud check: one `inkling-cloud` helper per engine process,
/// started on demand, spoken to over its stdin/stdout pipes from the GLib main loop.
///
/// Nothing here waits for the helper: requests are written with non-blocking writes (and dropped
/// if the pipe stays full), replies are read by a pollable-stream source, the cloud timer of each
/// engine object is one `g_timeout_add`. Decisions stay in `InputSession`; this file only moves
/// lines and renders effects.
///
/// Robustness: a helper that exits, breaks its pipe, floods (more than `maximumLinesPerSecond`
/// lines a second or a line over `CloudProtocol.maximumLineBytes`) or leaves a request unanswered
/// past `cloudRequestTimedOut` is killed and treated as gone; it is restarted lazily, with
/// `RestartBackoff`, when the next request needs it. Request ids are per session, so the bridge
/// gives every request a process-wide id on the way out and restores the session's id on the way
/// back.
///
/// Where the settings come from:
/// - `cloud-check`: `session.settings.cloudCheck` (set by the settings glue from GSettings).
/// - `cloud-endpoint`, `cloud-model`: GSettings `org.freedesktop.ibus.engine.inkling`, read here
///   when that schema is installed; changing them restarts the helper; turning `cloud-check` off
///   shuts it down.
/// - For tests and development, environment variables read when the engine starts override them:
///   `INKLING_CLOUD_CHECK=1` (turns `cloudCheck` on in every session), `INKLING_CLOUD_ENDPOINT`,
///   `INKLING_CLOUD_MODEL`, `INKLING_CLOUD_TIMEOUT_MS` (the helper's `--timeout-ms`) and
///   `INKLING_CLOUD_NO_KEYRING=1` (the helper's `--no-keyring`) and `INKLING_CLOUD_HELPER` (another
///   helper executable, for tests of misbehaving helpers).
///
/// Privacy: the log lines written here name events only (started, exited, killed), never text.
@MainActor
final class CloudBridge {
    static let shared = CloudBridge()

    static let maximumLinesPerSecond = 50
    /// How long a helper asked to shut down may take before it is killed.
    static let shutdownGraceMilliseconds: guint = 1000
    /// Most bytes queued for the helper's stdin before new lines are dropped.
    static let maximumPendingBytes = 256 * 1024

    // MARK: Configuration

    private let environmentCheck: Bool
    private let environmentEndpoint: String?
    private let environmentModel: String?
    private let timeoutArgument: String?
    private let noKeyring: Bool
    /// The engine's GSettings, when the schema is installed.
    private var settings: UnsafeMutablePointer<GSettings>? = nil
    private var endpoint = ""
    private var model = ""
    /// The helper next to the engine binary.
    private let helperPath: String

    // MARK: Clients

    private final class WeakInstance {
        weak var instance: EngineInstance?
        init(_ instance: EngineInstance) { self.instance = instance }
    }

    private var clients: [Int: WeakInstance] = [:]
    /// One cloud timer per engine object (GLib source ids).
    private var timers: [Int: guint] = [:]
    /// Process-wide request id → (engine object id, the session's own id).
    private var routes: [Int: (client: Int, local: Int)] = [:]
    private var nextGlobalID = 1

    // MARK: The helper process

    private var process: OpaquePointer? = nil
    private var stdinStream: UnsafeMutablePointer<GOutputStream>? = nil
    private var stdoutStream: UnsafeMutablePointer<GInputStream>? = nil
    private var readSource: UnsafeMutablePointer<GSource>? = nil
    private var writeSource: UnsafeMutablePointer<GSource>? = nil
    private var watchdog: guint = 0
    /// Incremented for every helper started, so late callbacks for an old one do nothing.
    private var generation: UInt = 0
    private var stopping = false
    private var lineBuffer: [UInt8] = []
    private var pendingOut: [UInt8] = []
    private var floodWindowStart: Int64 = 0
    private var floodWindowLines = 0
    private var backoff = RestartBackoff()
    private var reportedUnconfigured = false
    /// The helper's account status (an Inkling Server refused the device token): shown once.
    private var accountNotice = CloudAccountNotice()
    /// The engine object that sent the latest check (where an account notice without a route goes).
    private var lastRequester: Int?

    private init() {
        func env(_ name: String) -> String? {
            guard let value = getenv(name) else { return nil }
            let string = String(cString: value)
            return string.isEmpty ? nil : string
        }
        environmentCheck = env("INKLING_CLOUD_CHECK") == "1"
        environmentEndpoint = env("INKLING_CLOUD_ENDPOINT")
        environmentModel = env("INKLING_CLOUD_MODEL")
        timeoutArgument = env("INKLING_CLOUD_TIMEOUT_MS")
        noKeyring = env("INKLING_CLOUD_NO_KEYRING") == "1"
        let executable = PackLocator.currentExecutablePath()
        let directory = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        helperPath = env("INKLING_CLOUD_HELPER") ?? (directory + "/inkling-cloud")
        openSettings()
        readConfiguration()
    }

    // MARK: Settings

    private static let schemaID = "org.freedesktop.ibus.engine.inkling"

    private func openSettings() {
        guard let source = g_settings_schema_source_get_default(),
            let schema = g_settings_schema_source_lookup(source, Self.schemaID, 1)
        else { return }
        let keys: [String] = ["cloud-check", "cloud-endpoint", "cloud-model"]
        let hasKeys = keys.allSatisfy { key in g_settings_schema_has_key(schema, key) != 0 }
        g_settings_schema_unref(schema)
        guard hasKeys, let settings = g_settings_new(Self.schemaID) else { return }
        self.settings = settings
        typealias ChangedHandler = @convention(c) (gpointer?, UnsafePointer<gchar>?, gpointer?) -> Void
        let changed: ChangedHandler = { _, key, _ in
            let name = key.map { String(cString: $0) } ?? ""
            MainActor.assumeIsolated { CloudBridge.shared.settingChanged(name) }
        }
        inkling_signal_connect(settings, "changed", unsafeBitCast(changed, to: GCallback.self), nil, nil)
    }

    private func string(_ key: String) -> String {
        guard let settings, let value = g_settings_get_string(settings, key) else { return "" }
        defer { g_free(value) }
        return String(cString: value)
    }

    private func readConfiguration() {
        endpoint = environmentEndpoint ?? string("cloud-endpoint")
        model = environmentModel ?? string("cloud-model")
    }

    private func settingChanged(_ key: String) {
        switch key {
        case "cloud-endpoint", "cloud-model":
            let old = (endpoint, model)
            readConfiguration()
            if old != (endpoint, model), process != nil {
                log("cloud: endpoint or model changed; restarting the helper")
                shutDownHelper()
            }
            reportedUnconfigured = false
        case "cloud-check":
            if !environmentCheck, let settings, g_settings_get_boolean(settings, "cloud-check") == 0 { cloudTurnedOff() }
        default:
            break
        }
    }

    /// Cloud check turned off: nothing more is sent, answers on their way are ignored, the helper
    /// is asked to exit (and killed after a grace period).
    func cloudTurnedOff() {
        for id in Array(timers.keys) { cancelTimer(id) }
        routes.removeAll()
        if process != nil { shutDownHelper() }
        for entry in clients.values {
            guard let instance = entry.instance, instance.engine != nil, let session = instance.session,
                session.cloud.inFlight != nil
            else { continue }
            instance.show(session.cloudHelperGone())
        }
    }

    // MARK: Hooks from the engine

    /// After anything that may have changed the session (a key, a client notification): keeps the
    /// engine object's cloud timer in step with `session.cloudDeadline`. Never blocks.
    func afterInput(_ instance: EngineInstance) {
        guard let session = instance.session else { return }
        if clients[instance.id] == nil { clients[instance.id] = WeakInstance(instance) }
        if environmentCheck && !session.settings.cloudCheck { session.settings.cloudCheck = true }
        let abandoned = session.takePendingCloudLines()
        if !abandoned.isEmpty, process != nil { send(abandoned, from: instance) }
        if !session.settings.cloudCheck && process != nil && !stopping && !anyClientWantsCloud() {
            cloudTurnedOff()
        }
        armTimer(for: instance)
    }

    /// The engine object is gone.
    func remove(_ instance: EngineInstance) {
        cancelTimer(instance.id)
        clients[instance.id] = nil
        routes = routes.filter { $0.value.client != instance.id }
    }

    private func anyClientWantsCloud() -> Bool {
        clients.values.contains { $0.instance?.session?.settings.cloudCheck == true }
    }

    // MARK: Timers

    private func armTimer(for instance: EngineInstance, notBefore: Int64? = nil) {
        guard let session = instance.session, instance.engine != nil, let deadline = session.cloudDeadline else {
            cancelTimer(instance.id)
            return
        }
        cancelTimer(instance.id)
        var delay = max(0, deadline - session.clock())
        if let notBefore { delay = max(delay, notBefore - InputSession.monotonicMilliseconds()) }
        let data = UnsafeMutableRawPointer(bitPattern: UInt(instance.id))
        timers[instance.id] = g_timeout_add(guint(min(delay, 600_000)), { data in
            let id = Int(UInt(bitPattern: data))
            MainActor.assumeIsolated { CloudBridge.shared.timerFired(client: id) }
            return 0  // G_SOURCE_REMOVE
        }, data)
    }

    private func cancelTimer(_ id: Int) {
        if let source = timers.removeValue(forKey: id) { g_source_remove(source) }
    }

    private func timerFired(client id: Int) {
        timers[id] = nil
        guard let instance = clients[id]?.instance, instance.engine != nil, let session = instance.session else { return }
        // A helper that died recently may not be restarted yet: ask when it may (the sentence is
        // read then, so nothing is lost but time).
        let restart = backoff.earliestRestart()
        if process == nil, InputSession.monotonicMilliseconds() < restart, !endpoint.isEmpty, !model.isEmpty {
            armTimer(for: instance, notBefore: restart)
            return
        }
        let before = session.cloudDeadline
        let action = session.cloudTimerFired()
        instance.show(action.effects)
        if !action.lines.isEmpty { send(action.lines, from: instance) }
        // Not due yet (clock rounding): wait again. Due but nothing to send: wait for the next key.
        if let deadline = session.cloudDeadline, deadline != before || deadline > session.clock() {
            armTimer(for: instance)
        }
    }

    // MARK: Requests out

    private struct IDOnly: Decodable {
        var type: String
        var id: Int?
    }

    private func send(_ lines: [String], from instance: EngineInstance) {
        var out: [String] = []
        for line in lines {
            guard let header = try? JSONDecoder().decode(IDOnly.self, from: Data(line.utf8)) else { continue }
            switch header.type {
            case "check":
                guard var request = try? JSONDecoder().decode(CloudCheckRequest.self, from: Data(line.utf8)) else { continue }
                let global = nextGlobalID
                nextGlobalID += 1
                routes[global] = (instance.id, request.id)
                lastRequester = instance.id
                request.id = global
                out.append(CloudLine.encode(request))
            case "cancel":
                guard let local = header.id,
                    let global = routes.first(where: { $0.value.client == instance.id && $0.value.local == local })?.key
                else { continue }
                routes[global] = nil
                out.append(CloudLine.cancel(id: global))
            default:
                out.append(line)
            }
        }
        guard !out.isEmpty else { return }
        guard ensureHelper() else {
            // No helper (not configured, or restarting after a crash): the answer will not come.
            routes = routes.filter { $0.value.client != instance.id }
            if let session = instance.session { instance.show(session.cloudHelperGone()) }
            return
        }
        for line in out { write(line) }
        startWatchdog()
    }

    private func write(_ line: String) {
        let bytes = Array(line.utf8)
        guard pendingOut.count + bytes.count <= Self.maximumPendingBytes else {
            if EngineTrace.enabled { log("cloud: helper input full; request dropped") }
            return
        }
        pendingOut += bytes
        flush()
    }

    /// Writes what the pipe takes without blocking (chunks of at most PIPE_BUF after a
    /// writability check); the rest waits for a writable-source callback.
    private func flush() {
        guard let stdinStream else { return }
        let pollable = OpaquePointer(stdinStream)
        while !pendingOut.isEmpty {
            var error: UnsafeMutablePointer<GError>? = nil
            let count = min(pendingOut.count, 4096)
            let written = pendingOut.withUnsafeBytes { buffer in
                g_pollable_output_stream_write_nonblocking(pollable, buffer.baseAddress, gsize(count), nil, &error)
            }
            if written < 0 {
                let wouldBlock = error.map { $0.pointee.domain == g_io_error_quark() && $0.pointee.code == gint(G_IO_ERROR_WOULD_BLOCK.rawValue) } ?? false
                if error != nil { g_error_free(error) }
                if wouldBlock {
                    waitForWritable()
                    return
                }
                helperFailed("its input pipe broke")
                return
            }
            pendingOut.removeFirst(Int(written))
        }
    }

    private func waitForWritable() {
        guard writeSource == nil, let stdinStream else { return }
        guard let source = g_pollable_output_stream_create_source(OpaquePointer(stdinStream), nil) else { return }
        typealias PollableHandler = @convention(c) (UnsafeMutablePointer<GObject>?, gpointer?) -> gboolean
        let handler: PollableHandler = { _, data in
            let generation = UInt(bitPattern: data)
            MainActor.assumeIsolated {
                let bridge = CloudBridge.shared
                guard bridge.generation == generation else { return }
                if let source = bridge.writeSource { g_source_unref(source) }
                bridge.writeSource = nil
                bridge.flush()
            }
            return 0
        }
        g_source_set_callback(source, unsafeBitCast(handler, to: GSourceFunc.self), UnsafeMutableRawPointer(bitPattern: generation), nil)
        g_source_attach(source, nil)
        writeSource = source
    }

    // MARK: Replies in

    private func readAvailable() -> Bool {
        guard let stdoutStream else { return false }
        let pollable = OpaquePointer(stdoutStream)
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            var error: UnsafeMutablePointer<GError>? = nil
            let count = buffer.withUnsafeMutableBytes { raw in
                g_pollable_input_stream_read_nonblocking(pollable, raw.baseAddress, gsize(raw.count), nil, &error)
            }
            if count < 0 {
                let wouldBlock = error.map { $0.pointee.domain == g_io_error_quark() && $0.pointee.code == gint(G_IO_ERROR_WOULD_BLOCK.rawValue) } ?? false
                if error != nil { g_error_free(error) }
                if wouldBlock { return true }
                helperFailed("its output pipe broke")
                return false
            }
            if count == 0 {
                helperFailed("it exited")
                return false
            }
            let generationBefore = generation
            for byte in buffer[0..<count] {
                if byte == UInt8(ascii: "\n") {
                    let line = String(decoding: lineBuffer, as: UTF8.self)
                    lineBuffer.removeAll(keepingCapacity: true)
                    if !received(line) || generation != generationBefore || process == nil { return false }
                } else {
                    lineBuffer.append(byte)
                    if lineBuffer.count > CloudProtocol.maximumLineBytes {
                        helperFailed("it sent an oversized line")
                        return false
                    }
                }
            }
            if count < buffer.count { return true }
        }
    }

    /// One line from the helper; false when the helper was killed for flooding.
    private func received(_ line: String) -> Bool {
        let now = InputSession.monotonicMilliseconds()
        if now - floodWindowStart >= 1000 {
            floodWindowStart = now
            floodWindowLines = 0
        }
        floodWindowLines += 1
        if floodWindowLines > Self.maximumLinesPerSecond {
            helperFailed("it flooded its output")
            return false
        }
        if let status = CloudReply.parse(line), status.type == "status" {
            showAccountNotice(status)
            return true
        }
        guard var reply = CloudReply.parse(line), reply.type != "hello", let global = reply.id,
            let route = routes.removeValue(forKey: global)
        else { return true }
        if reply.type == "result" { backoff.recordSuccess() }
        guard let instance = clients[route.client]?.instance, instance.engine != nil, let session = instance.session else { return true }
        reply.id = route.local
        instance.show(session.cloudReplyReceived(CloudLine.encode(reply)))
        armTimer(for: instance)
        return true
    }

    /// An account `status` from the helper: the notice (once, `CloudAccountNotice` decides) in the
    /// auxiliary text of the engine object whose check found out, else of the latest requester.
    private func showAccountNotice(_ status: CloudReply) {
        guard let text = accountNotice.received(status) else { return }
        log("cloud: the server refused the device token; sign-in needed")
        let target = status.id.flatMap { routes[$0]?.client } ?? lastRequester
        guard let target, let instance = clients[target]?.instance, instance.engine != nil, let session = instance.session else { return }
        instance.show(session.showNotice(text))
    }

    // MARK: Lifecycle

    /// A running helper, starting one if allowed; false when there is none to talk to.
    private func ensureHelper() -> Bool {
        if process != nil && !stopping { return true }
        if stopping { killHelper() }
        guard !endpoint.isEmpty, !model.isEmpty else {
            if !reportedUnconfigured {
                log("cloud: the cloud check is on but cloud-endpoint or cloud-model is empty")
                reportedUnconfigured = true
            }
            return false
        }
        guard InputSession.monotonicMilliseconds() >= backoff.earliestRestart() else { return false }
        return startHelper()
    }

    private func startHelper() -> Bool {
        signal(SIGPIPE, SIG_IGN)  // a helper gone between poll and write must not kill the engine
        var arguments = [helperPath, "--endpoint", endpoint, "--model", model]
        if let timeoutArgument { arguments += ["--timeout-ms", timeoutArgument] }
        if noKeyring { arguments.append("--no-keyring") }
        var flags = G_SUBPROCESS_FLAGS_STDIN_PIPE.rawValue | G_SUBPROCESS_FLAGS_STDOUT_PIPE.rawValue
        if !EngineTrace.enabled { flags |= G_SUBPROCESS_FLAGS_STDERR_SILENCE.rawValue }
        var error: UnsafeMutablePointer<GError>? = nil
        let cStrings = arguments.map { strdup($0) }
        defer { for pointer in cStrings { free(pointer) } }
        var argv: [UnsafePointer<gchar>?] = cStrings.map { $0.map { UnsafePointer($0) } }
        argv.append(nil)
        let spawned = argv.withUnsafeMutableBufferPointer { buffer in
            g_subprocess_newv(buffer.baseAddress, GSubprocessFlags(rawValue: flags), &error)
        }
        guard let spawned else {
            if error != nil { g_error_free(error) }
            log("cloud: cannot start the helper \(helperPath)")
            backoff.recordFailure(now: InputSession.monotonicMilliseconds())
            return false
        }
        generation += 1
        process = spawned
        stopping = false
        lineBuffer.removeAll()
        pendingOut.removeAll()
        floodWindowStart = InputSession.monotonicMilliseconds()
        floodWindowLines = 0
        stdinStream = g_object_ref(g_subprocess_get_stdin_pipe(spawned)).map { $0.assumingMemoryBound(to: GOutputStream.self) }
        stdoutStream = g_object_ref(g_subprocess_get_stdout_pipe(spawned)).map { $0.assumingMemoryBound(to: GInputStream.self) }
        if let stdoutStream, let source = g_pollable_input_stream_create_source(OpaquePointer(stdoutStream), nil) {
            typealias PollableHandler = @convention(c) (UnsafeMutablePointer<GObject>?, gpointer?) -> gboolean
            let handler: PollableHandler = { _, data in
                let generation = UInt(bitPattern: data)
                return MainActor.assumeIsolated {
                    let bridge = CloudBridge.shared
                    guard bridge.generation == generation, bridge.process != nil else { return 0 }
                    return bridge.readAvailable() ? 1 : 0
                }
            }
            g_source_set_callback(source, unsafeBitCast(handler, to: GSourceFunc.self), UnsafeMutableRawPointer(bitPattern: generation), nil)
            g_source_attach(source, nil)
            readSource = source
        }
        log("cloud: helper started")
        return true
    }

    /// Checks once a second, while requests are out, for a request the session gave up on.
    private func startWatchdog() {
        guard watchdog == 0 else { return }
        watchdog = g_timeout_add(1000, { _ in
            MainActor.assumeIsolated {
                let bridge = CloudBridge.shared
                guard bridge.process != nil, !bridge.routes.isEmpty else {
                    bridge.watchdog = 0
                    return 0
                }
                let hung = bridge.clients.values.contains { $0.instance?.session?.cloudRequestTimedOut == true }
                if hung {
                    bridge.watchdog = 0
                    bridge.helperFailed("it left a request unanswered too long")
                    return 0
                }
                return 1
            }
        }, nil)
    }

    /// The helper is gone or must go: kill it, tell every session with a request out, back off.
    private func helperFailed(_ reason: String) {
        let wasStopping = stopping
        killHelper()
        if wasStopping { return }
        log("cloud: helper stopped: \(reason)")
        backoff.recordFailure(now: InputSession.monotonicMilliseconds())
        let waiting = Set(routes.values.map(\.client))
        routes.removeAll()
        for id in waiting {
            guard let instance = clients[id]?.instance, instance.engine != nil, let session = instance.session else { continue }
            instance.show(session.cloudHelperGone())
        }
        // Sessions whose request was in flight without a route (already cancelled) need nothing.
        for entry in clients.values {
            guard let instance = entry.instance, instance.engine != nil, let session = instance.session,
                session.cloud.inFlight != nil, !waiting.contains(instance.id)
            else { continue }
            instance.show(session.cloudHelperGone())
        }
    }

    /// Asks the helper to exit; kills it if it is still there after the grace period.
    private func shutDownHelper() {
        guard process != nil, !stopping else { return }
        write(CloudLine.shutdown)
        stopping = true
        routes.removeAll()
        g_timeout_add(Self.shutdownGraceMilliseconds, { data in
            let generation = UInt(bitPattern: data)
            MainActor.assumeIsolated {
                let bridge = CloudBridge.shared
                if bridge.generation == generation, bridge.process != nil { bridge.killHelper() }
            }
            return 0
        }, UnsafeMutableRawPointer(bitPattern: generation))
    }

    private func killHelper() {
        if let readSource {
            g_source_destroy(readSource)
            g_source_unref(readSource)
        }
        readSource = nil
        if let writeSource {
            g_source_destroy(writeSource)
            g_source_unref(writeSource)
        }
        writeSource = nil
        if let process {
            g_subprocess_force_exit(process)
            // GSubprocess reaps the child itself; dropping the last reference is enough.
            g_object_unref(UnsafeMutableRawPointer(process))
        }
        process = nil
        if let stdinStream { g_object_unref(stdinStream) }
        if let stdoutStream { g_object_unref(stdoutStream) }
        stdinStream = nil
        stdoutStream = nil
        pendingOut.removeAll()
        lineBuffer.removeAll()
        stopping = false
        generation += 1
    }
}
