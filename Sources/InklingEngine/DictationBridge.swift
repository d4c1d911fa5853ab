import CIBus
import FoundationEssentials
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The engine side of dictation: one `inkling-dictate` helper per engine process, started when
/// a field starts listening, asked to exit after `idleShutdownMilliseconds` without listening,
/// spoken to over its stdin/stdout pipes from the GLib main loop. Decisions live in
/// `DictationController` (one per engine object); this file moves lines and renders actions.
///
/// Nothing here waits for the helper: `HelperProcess` (shared with the cloud check) writes lines
/// without blocking (dropped if the pipe stays full) and reads events from a pollable-stream
/// source. A helper that exits,
/// breaks a pipe, floods (over `maximumLinesPerSecond`), sends an oversized line or leaves
/// `start`/`stop` unanswered (`DictationController.helperHung`) is killed: listening ends with a
/// notice and nothing more is committed; the next start waits for `RestartBackoff`. Typing never
/// depends on the helper.
///
/// Settings: `dictation` and `dictation-key` (GSettings, via `EngineSettings` into
/// `SessionSettings`). For tests: `INKLING_DICTATION=1` turns dictation on,
/// `INKLING_DICTATE_HELPER` names another helper, `INKLING_DICTATE_ARGS` adds space-separated
/// arguments (`--audio-file x.wav`), `INKLING_DICTATION_SILENCE_MS` sets the silence timeout.
///
/// Privacy: log lines name events only, never what was heard.
@MainActor
final class DictationBridge {
    static let shared = DictationBridge()

    static let maximumLinesPerSecond = 100
    static let shutdownGraceMilliseconds: guint = 1000
    static let idleShutdownMilliseconds: guint = 30_000
    static let maximumPendingBytes = 64 * 1024

    private let environmentEnabled: Bool
    private let helperPath: String
    private let extraArguments: [String]
    private let silenceTimeout: Int64?
    /// GSettings `dictation-device`: passed as `--device` when not empty.
    private var device = ""

    private final class Client {
        weak var instance: EngineInstance?
        var controller: DictationController
        var timer: guint = 0
        init(_ instance: EngineInstance) {
            self.instance = instance
            controller = DictationController(firstSession: instance.id * 1_000_000 + 1)
        }
    }

    private var clients: [Int: Client] = [:]

    private let helper = HelperProcess(
        name: "dictation",
        limits: .init(
            maximumLinesPerSecond: DictationBridge.maximumLinesPerSecond,
            maximumLineBytes: DictationProtocol.maximumLineBytes,
            maximumPendingBytes: DictationBridge.maximumPendingBytes),
        shutdownGraceMilliseconds: DictationBridge.shutdownGraceMilliseconds)
    private var idleTimer: guint = 0

    private init() {
        func env(_ name: String) -> String? {
            guard let value = getenv(name) else { return nil }
            let string = String(cString: value)
            return string.isEmpty ? nil : string
        }
        environmentEnabled = env("INKLING_DICTATION") == "1"
        extraArguments = env("INKLING_DICTATE_ARGS").map { $0.split(separator: " ").map(String.init) } ?? []
        silenceTimeout = env("INKLING_DICTATION_SILENCE_MS").flatMap { Int64($0) }
        let executable = PackLocator.currentExecutablePath()
        let directory = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(
            separator: "/")
        helperPath = env("INKLING_DICTATE_HELPER") ?? (directory + "/inkling-dictate")
        helper.onLine = { [unowned self] line in received(line) }
        helper.onFailure = { [unowned self] _ in helperFailed() }
    }

    // MARK: Hooks from the engine

    private func client(for instance: EngineInstance) -> Client {
        if let existing = clients[instance.id] { return existing }
        let created = Client(instance)
        if let silenceTimeout { created.controller.silenceTimeoutMilliseconds = silenceTimeout }
        clients[instance.id] = created
        return created
    }

    /// Keeps the controller's settings in step with the session's (live).
    private func sync(_ client: Client, _ session: InputSession, now: @autoclosure () -> Int64) {
        let enabled = environmentEnabled || session.settings.dictation
        if client.controller.enabled != enabled {
            render(client.controller.setEnabled(enabled, now: now()), for: client)
        }
        if client.controller.key != session.settings.dictationKey {
            client.controller.key = session.settings.dictationKey
        }
        followDevice(session.settings.dictationDevice)
    }

    /// The microphone (`dictation-device`) the next helper records from. A helper started for
    /// another one is asked to exit once no field listens, so the next start uses the new choice.
    private func followDevice(_ device: String) {
        guard device != self.device else { return }
        self.device = device
        if helper.isRunning && !clients.values.contains(where: { $0.controller.isActive }) { shutDownHelper() }
    }

    /// A key press before the session sees it; true when dictation consumed it.
    func processKey(_ instance: EngineInstance, _ event: KeyEvent) -> Bool {
        guard let session = instance.session, !event.isRelease else { return false }
        let client = client(for: instance)
        sync(client, session, now: EngineProcess.clock.now())
        // Nearly every key: not the dictation key with nothing listening, which the controller
        // passes on unchanged; the clock is read only for the others.
        guard client.controller.isActive || client.controller.key?.matches(event) == true else { return false }
        let action = client.controller.key(
            event, secretField: session.contentType.isSecret, now: EngineProcess.clock.now())
        guard action.handled else { return false }
        render(action, for: client)
        return true
    }

    /// The field lost focus (or the engine object was disabled or reset).
    func focusOut(_ instance: EngineInstance) {
        guard let client = clients[instance.id], client.controller.isActive else { return }
        render(client.controller.focusOut(now: EngineProcess.clock.now()), for: client)
    }

    /// The field's type changed: a password or PIN field ends listening.
    func contentTypeChanged(_ instance: EngineInstance) {
        guard let session = instance.session, session.contentType.isSecret,
            let client = clients[instance.id], client.controller.isActive
        else { return }
        render(client.controller.becameSecret(now: EngineProcess.clock.now()), for: client)
    }

    /// Settings changed: sessions whose dictation was turned off stop listening.
    func settingsChanged() {
        let now = EngineProcess.clock.now()
        for client in Array(clients.values) {
            guard let session = client.instance?.session else { continue }
            sync(client, session, now: now)
        }
    }

    /// The engine object is gone.
    func remove(_ instance: EngineInstance) {
        guard let client = clients.removeValue(forKey: instance.id) else { return }
        if client.timer != 0 { g_source_remove(client.timer) }
        if let session = client.controller.session {
            helper.write(DictationRequest(type: "cancel", session: session).line)
        }
        scheduleIdleShutdown()
    }

    // MARK: Rendering

    private func render(_ action: DictationController.Action, for client: Client) {
        if !action.lines.isEmpty { send(action.lines, for: client) }
        if let instance = client.instance, instance.engine != nil, let session = instance.session {
            if let text = action.commit {
                instance.show(session.commitDictated(text))
                instance.scheduleSuggestions()
            }
            if action.statusChanged {
                session.dictationStatus = action.status
                instance.show(session.refreshAuxiliary())
            }
            if let notice = action.notice { instance.show(session.showNotice(notice)) }
        }
        armTimer(client)
        scheduleIdleShutdown()
    }

    private func send(_ lines: [String], for client: Client) {
        let starts = lines.contains { $0.contains("\"type\":\"start\"") }
        if starts, !ensureHelper() {
            // No helper (missing, or restarting after a crash): listening ends at once.
            render(client.controller.helperGone(), for: client)
            return
        }
        guard helper.isRunning else { return }
        for line in lines { helper.write(line) }
    }

    // MARK: Timers

    private func armTimer(_ client: Client) {
        if client.timer != 0 {
            g_source_remove(client.timer)
            client.timer = 0
        }
        guard let deadline = client.controller.deadline, let instance = client.instance else { return }
        let delay = max(0, deadline - EngineProcess.clock.now())
        let data = UnsafeMutableRawPointer(bitPattern: UInt(instance.id))
        client.timer = g_timeout_add(
            guint(min(delay, 600_000)) + 1,
            { data in
                let id = Int(UInt(bitPattern: data))
                MainActor.assumeIsolated { DictationBridge.shared.timerFired(client: id) }
                return 0
            }, data)
    }

    private func timerFired(client id: Int) {
        guard let client = clients[id] else { return }
        client.timer = 0
        let now = EngineProcess.clock.now()
        if client.controller.helperHung(now: now) {
            helper.fail("it left start or stop unanswered")
            return
        }
        render(client.controller.timerFired(now: now), for: client)
    }

    /// Asks an idle helper to exit once no field has listened for a while.
    private func scheduleIdleShutdown() {
        if idleTimer != 0 {
            g_source_remove(idleTimer)
            idleTimer = 0
        }
        guard helper.isRunning, !clients.values.contains(where: { $0.controller.isActive }) else { return }
        idleTimer = g_timeout_add(
            Self.idleShutdownMilliseconds,
            { _ in
                MainActor.assumeIsolated {
                    let bridge = DictationBridge.shared
                    bridge.idleTimer = 0
                    if !bridge.clients.values.contains(where: { $0.controller.isActive }) { bridge.shutDownHelper() }
                }
                return 0
            }, nil)
    }

    // MARK: Events in

    /// One line from the helper (`HelperProcess` has counted it against the flood limit).
    private func received(_ line: String) {
        guard let event = DictationEvent.parse(line), let session = event.session else { return }
        if event.type == "listening" { helper.recordSuccess() }
        guard let client = clients.values.first(where: { $0.controller.session == session }) else { return }
        render(client.controller.received(event, now: EngineProcess.clock.now()), for: client)
    }

    // MARK: Lifecycle

    private func ensureHelper() -> Bool {
        if helper.isRunning { return true }
        guard helper.mayStart else { return false }
        return helper.start(arguments: [helperPath] + (device.isEmpty ? [] : ["--device", device]) + extraArguments)
    }

    /// The helper was killed: end every listening period.
    private func helperFailed() {
        cancelIdleTimer()
        for client in Array(clients.values) where client.controller.isActive {
            render(client.controller.helperGone(), for: client)
        }
    }

    /// Asks the helper to exit (and closes its input, which also ends it); a helper still there
    /// after the grace period is killed. Its exit is not a failure.
    private func shutDownHelper() {
        guard helper.isRunning else { return }
        helper.shutDown(sending: DictationLine.encode(DictationRequest(type: "shutdown", session: nil)))
        cancelIdleTimer()
    }

    private func cancelIdleTimer() {
        if idleTimer != 0 {
            g_source_remove(idleTimer)
            idleTimer = 0
        }
    }
}
