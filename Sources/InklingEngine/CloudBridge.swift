import CIBus
import FoundationEssentials
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The engine side of the opt-in cloud check: one `inkling-cloud` helper per engine process,
/// started on demand, spoken to over its stdin/stdout pipes from the GLib main loop.
///
/// Nothing here waits for the helper: `HelperProcess` moves the lines without blocking, the cloud
/// timer of each engine object is one `g_timeout_add`. Decisions stay in `InputSession` and
/// `CloudRouter`; this file only moves typed messages and renders effects.
///
/// Robustness: a helper that exits, breaks its pipe, floods (more than `maximumLinesPerSecond`
/// lines a second or a line over `CloudProtocol.maximumLineBytes`) or leaves a request unanswered
/// past `cloudRequestTimedOut` is killed and treated as gone; it is restarted lazily, with
/// `RestartBackoff`, when the next request needs it. Request ids are per session: `CloudRouter`
/// gives every request a process-wide id on the way out and restores the session's id on the way
/// back.
///
/// Where the settings come from:
/// - `cloud-check`: `session.settings.cloudCheck` (applied by the settings reader, `EngineSettings`).
/// - `cloud-endpoint`, `cloud-model`: GSettings `org.freedesktop.ibus.engine.inkling`, read here
///   when that schema is installed; changing them restarts the helper; turning `cloud-check` off
///   shuts it down.
/// - For tests and development, environment variables read when the engine starts override them:
///   `INKLING_CLOUD_CHECK=1` (`EngineSettings` turns `cloudCheck` on in every session), `INKLING_CLOUD_ENDPOINT`,
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

    /// `INKLING_CLOUD_CHECK=1`: the settings reader turns `cloudCheck` on in every session.
    let environmentCheck: Bool
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
    /// Process-wide request ids ⇄ (engine object id, the session's own id).
    private var router = CloudRouter()

    // MARK: The helper process

    private let helper = HelperProcess(
        name: "cloud",
        limits: .init(
            maximumLinesPerSecond: CloudBridge.maximumLinesPerSecond, maximumLineBytes: CloudProtocol.maximumLineBytes,
            maximumPendingBytes: CloudBridge.maximumPendingBytes),
        shutdownGraceMilliseconds: CloudBridge.shutdownGraceMilliseconds)
    private var watchdog: guint = 0
    private var reportedUnconfigured = false
    /// The helper's account status (an Inkling Server refused the device token): shown once.
    private var accountNotice = CloudAccountNotice()

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
        let directory = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(
            separator: "/")
        helperPath = env("INKLING_CLOUD_HELPER") ?? (directory + "/inkling-cloud")
        helper.onLine = { [unowned self] line in received(line) }
        helper.onFailure = { [unowned self] _ in helperFailed() }
        openSettings()
        readConfiguration()
    }

    // MARK: Settings

    private func openSettings() {
        guard let source = g_settings_schema_source_get_default(),
            let schema = g_settings_schema_source_lookup(source, EngineSettingsSchema.id, 1)
        else { return }
        let keys: [String] = ["cloud-check", "cloud-endpoint", "cloud-model"]
        let hasKeys = keys.allSatisfy { key in g_settings_schema_has_key(schema, key) != 0 }
        g_settings_schema_unref(schema)
        guard hasKeys, let settings = g_settings_new(EngineSettingsSchema.id) else { return }
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
            if old != (endpoint, model), helper.isRunning {
                log("cloud: endpoint or model changed; restarting the helper")
                shutDownHelper()
            }
            reportedUnconfigured = false
        case "cloud-check":
            if !environmentCheck, let settings, g_settings_get_boolean(settings, "cloud-check") == 0 {
                cloudTurnedOff()
            }
        default:
            break
        }
    }

    /// Cloud check turned off: nothing more is sent, answers on their way are ignored, the helper
    /// is asked to exit (and killed after a grace period).
    func cloudTurnedOff() {
        for id in Array(timers.keys) { cancelTimer(id) }
        router.forgetAll()
        if helper.isRunning { shutDownHelper() }
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
        let abandoned = session.takePendingCloudMessages()
        if !abandoned.isEmpty, helper.isRunning { send(abandoned, from: instance) }
        if !session.settings.cloudCheck && helper.isRunning && !anyClientWantsCloud() {
            cloudTurnedOff()
        }
        armTimer(for: instance)
    }

    /// The engine object is gone.
    func remove(_ instance: EngineInstance) {
        cancelTimer(instance.id)
        clients[instance.id] = nil
        router.forget(client: instance.id)
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
        var delay = max(0, deadline - session.clock.now())
        if let notBefore { delay = max(delay, notBefore - EngineProcess.clock.now()) }
        let data = UnsafeMutableRawPointer(bitPattern: UInt(instance.id))
        timers[instance.id] = g_timeout_add(
            guint(min(delay, 600_000)),
            { data in
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
        guard let instance = clients[id]?.instance, instance.engine != nil, let session = instance.session else {
            return
        }
        // A helper that died recently may not be restarted yet: ask when it may (the sentence is
        // read then, so nothing is lost but time).
        let restart = helper.earliestRestart
        if !helper.isRunning, EngineProcess.clock.now() < restart, !endpoint.isEmpty {
            armTimer(for: instance, notBefore: restart)
            return
        }
        let before = session.cloudDeadline
        let action = session.cloudTimerFired()
        instance.show(action.effects)
        if !action.messages.isEmpty { send(action.messages, from: instance) }
        // Not due yet (clock rounding): wait again. Due but nothing to send: wait for the next key.
        if let deadline = session.cloudDeadline, deadline != before || deadline > session.clock.now() {
            armTimer(for: instance)
        }
    }

    // MARK: Requests out

    private func send(_ messages: [CloudRequestMessage], from instance: EngineInstance) {
        let out = router.outgoing(messages, from: instance.id)
        guard !out.isEmpty else { return }
        guard ensureHelper() else {
            // No helper (not configured, or restarting after a crash): the answer will not come.
            router.forget(client: instance.id)
            if let session = instance.session { instance.show(session.cloudHelperGone()) }
            return
        }
        for message in out { helper.write(message.line) }
        startWatchdog()
    }

    // MARK: Replies in

    /// One line from the helper (`HelperProcess` has counted it against the flood limit).
    private func received(_ line: String) {
        switch router.incoming(line) {
        case .ignored:
            break
        case .accountStatus(let status, let target):
            showAccountNotice(status, to: target)
        case .reply(let reply, let client):
            if reply.type == "result" { helper.recordSuccess() }
            guard let instance = clients[client]?.instance, instance.engine != nil, let session = instance.session
            else { return }
            instance.show(session.cloudReplyReceived(reply))
            armTimer(for: instance)
        }
    }

    /// An account `status` from the helper: the notice (once, `CloudAccountNotice` decides) in the
    /// auxiliary text of the engine object whose check found out, else of the latest requester.
    private func showAccountNotice(_ status: CloudReply, to target: Int?) {
        guard let text = accountNotice.received(status) else { return }
        log("cloud: the server refused the device token; sign-in needed")
        guard let target, let instance = clients[target]?.instance, instance.engine != nil,
            let session = instance.session
        else { return }
        instance.show(session.showNotice(text))
    }

    // MARK: Lifecycle

    /// A running helper, starting one if allowed; false when there is none to talk to.
    private func ensureHelper() -> Bool {
        if helper.isRunning { return true }
        // An empty model is the endpoint's default (and an Inkling Server needs none).
        guard !endpoint.isEmpty else {
            if !reportedUnconfigured {
                log("cloud: the cloud check is on but cloud-endpoint is empty")
                reportedUnconfigured = true
            }
            return false
        }
        guard helper.mayStart else { return false }
        var arguments = [helperPath, "--endpoint", endpoint]
        if !model.isEmpty { arguments += ["--model", model] }
        if let timeoutArgument { arguments += ["--timeout-ms", timeoutArgument] }
        if noKeyring { arguments.append("--no-keyring") }
        return helper.start(arguments: arguments)
    }

    /// Checks once a second, while requests are out, for a request the session gave up on.
    private func startWatchdog() {
        guard watchdog == 0 else { return }
        watchdog = g_timeout_add(
            1000,
            { _ in
                MainActor.assumeIsolated {
                    let bridge = CloudBridge.shared
                    guard bridge.helper.isRunning, bridge.router.hasRequestsOut else {
                        bridge.watchdog = 0
                        return 0
                    }
                    let hung = bridge.clients.values.contains { $0.instance?.session?.cloudRequestTimedOut == true }
                    if hung {
                        bridge.watchdog = 0
                        bridge.helper.fail("it left a request unanswered too long")
                        return 0
                    }
                    return 1
                }
            }, nil)
    }

    /// The helper was killed: tell every session with a request out.
    private func helperFailed() {
        let waiting = router.forgetAll()
        for id in waiting {
            guard let instance = clients[id]?.instance, instance.engine != nil, let session = instance.session else {
                continue
            }
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

    /// Asks the helper to exit; it is killed if it is still there after the grace period. Answers
    /// on their way are ignored.
    private func shutDownHelper() {
        guard helper.isRunning else { return }
        router.forgetAll()
        helper.shutDown(sending: CloudRequestMessage.shutdown.line)
    }
}
