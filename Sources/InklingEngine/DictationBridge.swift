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
/// Nothing here waits for the helper: lines are written with non-blocking writes (dropped if
/// the pipe stays full), events are read by a pollable-stream source. A helper that exits,
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

    private var process: OpaquePointer? = nil
    private var stdinStream: UnsafeMutablePointer<GOutputStream>? = nil
    private var stdoutStream: UnsafeMutablePointer<GInputStream>? = nil
    private var readSource: UnsafeMutablePointer<GSource>? = nil
    private var writeSource: UnsafeMutablePointer<GSource>? = nil
    private var idleTimer: guint = 0
    private var generation: UInt = 0
    private var lineBuffer: [UInt8] = []
    private var pendingOut: [UInt8] = []
    private var floodWindowStart: Int64 = 0
    private var floodWindowLines = 0
    private var backoff = RestartBackoff()

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
        let directory = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        helperPath = env("INKLING_DICTATE_HELPER") ?? (directory + "/inkling-dictate")
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
    private func sync(_ client: Client, _ session: InputSession, now: Int64) {
        let enabled = environmentEnabled || session.settings.dictation
        if client.controller.enabled != enabled {
            render(client.controller.setEnabled(enabled, now: now), for: client)
        }
        if client.controller.key != session.settings.dictationKey { client.controller.key = session.settings.dictationKey }
        followDevice(session.settings.dictationDevice)
    }

    /// The microphone (`dictation-device`) the next helper records from. A helper started for
    /// another one is asked to exit once no field listens, so the next start uses the new choice.
    private func followDevice(_ device: String) {
        guard device != self.device else { return }
        self.device = device
        if process != nil && !clients.values.contains(where: { $0.controller.isActive }) { shutDownHelper() }
    }

    /// A key press before the session sees it; true when dictation consumed it.
    func processKey(_ instance: EngineInstance, _ event: KeyEvent) -> Bool {
        guard let session = instance.session, !event.isRelease else { return false }
        let now = InputSession.monotonicMilliseconds()
        let client = client(for: instance)
        sync(client, session, now: now)
        let action = client.controller.key(event, secretField: session.contentType.isSecret, now: now)
        guard action.handled else { return false }
        render(action, for: client)
        return true
    }

    /// The field lost focus (or the engine object was disabled or reset).
    func focusOut(_ instance: EngineInstance) {
        guard let client = clients[instance.id], client.controller.isActive else { return }
        render(client.controller.focusOut(now: InputSession.monotonicMilliseconds()), for: client)
    }

    /// The field's type changed: a password or PIN field ends listening.
    func contentTypeChanged(_ instance: EngineInstance) {
        guard let session = instance.session, session.contentType.isSecret,
            let client = clients[instance.id], client.controller.isActive
        else { return }
        render(client.controller.becameSecret(now: InputSession.monotonicMilliseconds()), for: client)
    }

    /// Settings changed: sessions whose dictation was turned off stop listening.
    func settingsChanged() {
        let now = InputSession.monotonicMilliseconds()
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
            write(DictationRequest(type: "cancel", session: session).line)
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
        guard process != nil else { return }
        for line in lines { write(line) }
    }

    // MARK: Timers

    private func armTimer(_ client: Client) {
        if client.timer != 0 {
            g_source_remove(client.timer)
            client.timer = 0
        }
        guard let deadline = client.controller.deadline, let instance = client.instance else { return }
        let delay = max(0, deadline - InputSession.monotonicMilliseconds())
        let data = UnsafeMutableRawPointer(bitPattern: UInt(instance.id))
        client.timer = g_timeout_add(guint(min(delay, 600_000)) + 1, { data in
            let id = Int(UInt(bitPattern: data))
            MainActor.assumeIsolated { DictationBridge.shared.timerFired(client: id) }
            return 0
        }, data)
    }

    private func timerFired(client id: Int) {
        guard let client = clients[id] else { return }
        client.timer = 0
        let now = InputSession.monotonicMilliseconds()
        if client.controller.helperHung(now: now) {
            helperFailed("it left start or stop unanswered")
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
        guard process != nil, !clients.values.contains(where: { $0.controller.isActive }) else { return }
        idleTimer = g_timeout_add(Self.idleShutdownMilliseconds, { _ in
            MainActor.assumeIsolated {
                let bridge = DictationBridge.shared
                bridge.idleTimer = 0
                if !bridge.clients.values.contains(where: { $0.controller.isActive }) { bridge.shutDownHelper() }
            }
            return 0
        }, nil)
    }

    // MARK: Lines out

    private func write(_ line: String) {
        guard process != nil else { return }
        let bytes = Array(line.utf8)
        guard pendingOut.count + bytes.count <= Self.maximumPendingBytes else { return }
        pendingOut += bytes
        flush()
    }

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
                let bridge = DictationBridge.shared
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

    // MARK: Events in

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
                    if lineBuffer.count > DictationProtocol.maximumLineBytes {
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
        guard let event = DictationEvent.parse(line), let session = event.session else { return true }
        if event.type == "listening" { backoff.recordSuccess() }
        guard let client = clients.values.first(where: { $0.controller.session == session }) else { return true }
        render(client.controller.received(event, now: now), for: client)
        return true
    }

    // MARK: Lifecycle

    private func ensureHelper() -> Bool {
        if process != nil { return true }
        guard InputSession.monotonicMilliseconds() >= backoff.earliestRestart() else { return false }
        return startHelper()
    }

    private func startHelper() -> Bool {
        signal(SIGPIPE, SIG_IGN)
        let arguments = [helperPath] + (device.isEmpty ? [] : ["--device", device]) + extraArguments
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
            log("dictation: cannot start the helper \(helperPath)")
            backoff.recordFailure(now: InputSession.monotonicMilliseconds())
            return false
        }
        generation += 1
        process = spawned
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
                    let bridge = DictationBridge.shared
                    guard bridge.generation == generation, bridge.process != nil else { return 0 }
                    return bridge.readAvailable() ? 1 : 0
                }
            }
            g_source_set_callback(source, unsafeBitCast(handler, to: GSourceFunc.self), UnsafeMutableRawPointer(bitPattern: generation), nil)
            g_source_attach(source, nil)
            readSource = source
        }
        log("dictation: helper started")
        return true
    }

    /// The helper is gone or must go: kill it, end every listening period, back off.
    private func helperFailed(_ reason: String) {
        killHelper()
        log("dictation: helper stopped: \(reason)")
        backoff.recordFailure(now: InputSession.monotonicMilliseconds())
        for client in Array(clients.values) where client.controller.isActive {
            render(client.controller.helperGone(), for: client)
        }
    }

    /// Asks the helper to exit (and closes its input, which also ends it); a helper still there
    /// after the grace period is killed. Its exit is not a failure.
    private func shutDownHelper() {
        guard let old = process else { return }
        write(DictationLine.encode(DictationRequest(type: "shutdown", session: nil)))
        g_object_ref(UnsafeMutableRawPointer(old))
        g_timeout_add(Self.shutdownGraceMilliseconds, { data in
            guard let data else { return 0 }
            let exiting = OpaquePointer(data)
            g_subprocess_force_exit(exiting)
            g_object_unref(data)
            return 0
        }, UnsafeMutableRawPointer(old))
        killHelper(force: false)
    }

    private func killHelper(force: Bool = true) {
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
            if force { g_subprocess_force_exit(process) }
            g_object_unref(UnsafeMutableRawPointer(process))
        }
        process = nil
        if let stdinStream { g_object_unref(stdinStream) }
        if let stdoutStream { g_object_unref(stdoutStream) }
        stdinStream = nil
        stdoutStream = nil
        pendingOut.removeAll()
        lineBuffer.removeAll()
        generation += 1
        if idleTimer != 0 {
            g_source_remove(idleTimer)
            idleTimer = 0
        }
    }
}
