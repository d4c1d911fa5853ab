import CIBus
import InklingCommandLine
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// One helper process spoken to in JSON lines over its stdin/stdout pipes from the GLib main
/// loop: the process management shared by `CloudBridge` and `DictationBridge`.
///
/// Nothing here waits for the helper: lines are written with non-blocking writes (dropped when
/// more than `maximumPendingBytes` wait), lines are read by a pollable-stream source and split by
/// `LineSplitter`. A helper that exits, breaks a pipe, floods (more than `maximumLinesPerSecond`
/// lines a second) or sends a line over `maximumLineBytes` is killed and reported through
/// `onFailure`; its owner may start the next one once `RestartBackoff` allows. Decisions about
/// what the lines mean stay with the owner (and InklingCore).
///
/// Privacy: the log lines written here name events only (started, stopped), never text.
@MainActor
final class HelperProcess {
    /// The limits that protect the engine from a misbehaving helper.
    struct Limits {
        var maximumLinesPerSecond: Int
        var maximumLineBytes: Int
        var maximumPendingBytes: Int
    }

    /// The prefix of log lines (`cloud`, `dictation`).
    let name: String
    let limits: Limits
    /// How long a helper asked to shut down may take before it is killed.
    let shutdownGraceMilliseconds: guint
    /// One line from the helper (without its newline).
    var onLine: (String) -> Void = { _ in }
    /// The helper was killed for the given reason (after `kill`, the log line and the backoff).
    var onFailure: (String) -> Void = { _ in }

    private var process: OpaquePointer? = nil
    private var stdinStream: UnsafeMutablePointer<GOutputStream>? = nil
    private var stdoutStream: UnsafeMutablePointer<GInputStream>? = nil
    private var readSource: UnsafeMutablePointer<GSource>? = nil
    private var writeSource: UnsafeMutablePointer<GSource>? = nil
    /// Incremented for every helper started or dropped, so late callbacks for an old one do nothing.
    private var generation: UInt = 0
    private var splitter: LineSplitter
    private var pendingOut: [UInt8] = []
    private var floodWindowStart: Int64 = 0
    private var floodWindowLines = 0
    private var backoff = RestartBackoff()

    init(name: String, limits: Limits, shutdownGraceMilliseconds: guint = 1000) {
        self.name = name
        self.limits = limits
        self.shutdownGraceMilliseconds = shutdownGraceMilliseconds
        splitter = LineSplitter(limit: limits.maximumLineBytes)
    }

    /// Whether a helper is running (not killed, not asked to shut down).
    var isRunning: Bool { process != nil }

    /// Whether the backoff after the last failure allows a start now.
    var mayStart: Bool { EngineProcess.clock.now() >= backoff.earliestRestart() }

    /// When the backoff allows the next start (milliseconds on the monotonic clock).
    var earliestRestart: Int64 { backoff.earliestRestart() }

    /// The helper answered as it should: the next failure starts the backoff afresh.
    func recordSuccess() { backoff.recordSuccess() }

    // MARK: Lifecycle

    /// Starts the helper with these arguments (the executable first); false (logged, backed
    /// off) when it cannot be started.
    func start(arguments: [String]) -> Bool {
        signal(SIGPIPE, SIG_IGN)  // a helper gone between poll and write must not kill the engine
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
            log("\(name): cannot start the helper \(arguments.first ?? "")")
            backoff.recordFailure(now: EngineProcess.clock.now())
            return false
        }
        generation += 1
        process = spawned
        splitter = LineSplitter(limit: limits.maximumLineBytes)
        pendingOut.removeAll()
        floodWindowStart = EngineProcess.clock.now()
        floodWindowLines = 0
        stdinStream = g_object_ref(g_subprocess_get_stdin_pipe(spawned)).map {
            $0.assumingMemoryBound(to: GOutputStream.self)
        }
        stdoutStream = g_object_ref(g_subprocess_get_stdout_pipe(spawned)).map {
            $0.assumingMemoryBound(to: GInputStream.self)
        }
        if let stdoutStream, let source = g_pollable_input_stream_create_source(OpaquePointer(stdoutStream), nil) {
            typealias PollableHandler = @convention(c) (UnsafeMutablePointer<GObject>?, gpointer?) -> gboolean
            let handler: PollableHandler = { _, data in
                guard let data else { return 0 }
                return MainActor.assumeIsolated {
                    let helper = Unmanaged<HelperProcess>.fromOpaque(data).takeUnretainedValue()
                    guard helper.process != nil else { return 0 }
                    return helper.readAvailable() ? 1 : 0
                }
            }
            // The bridges that own helpers live as long as the process: an unretained pointer is safe.
            g_source_set_callback(
                source, unsafeBitCast(handler, to: GSourceFunc.self), Unmanaged.passUnretained(self).toOpaque(), nil)
            g_source_attach(source, nil)
            readSource = source
        }
        log("\(name): helper started")
        return true
    }

    /// The helper is gone or must go: kill it, log why, back off, tell the owner.
    func fail(_ reason: String) {
        kill()
        log("\(name): helper stopped: \(reason)")
        backoff.recordFailure(now: EngineProcess.clock.now())
        onFailure(reason)
    }

    /// Sends `line` (the helper's shutdown message) and lets the helper go: its input is closed
    /// (which also ends it), and one still there after the grace period is killed. Its exit is
    /// not a failure.
    func shutDown(sending line: String) {
        guard let old = process else { return }
        write(line)
        g_object_ref(UnsafeMutableRawPointer(old))
        g_timeout_add(
            shutdownGraceMilliseconds,
            { data in
                guard let data else { return 0 }
                g_subprocess_force_exit(OpaquePointer(data))
                g_object_unref(data)
                return 0
            }, UnsafeMutableRawPointer(old))
        kill(force: false)
    }

    /// Drops the helper: its sources, pipes and unsent lines; kills it unless `force` is false.
    func kill(force: Bool = true) {
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
            // GSubprocess reaps the child itself; dropping the last reference is enough.
            g_object_unref(UnsafeMutableRawPointer(process))
        }
        process = nil
        if let stdinStream { g_object_unref(stdinStream) }
        if let stdoutStream { g_object_unref(stdoutStream) }
        stdinStream = nil
        stdoutStream = nil
        pendingOut.removeAll()
        splitter = LineSplitter(limit: limits.maximumLineBytes)
        generation += 1
    }

    // MARK: Lines out

    /// Queues one line (with its newline) for the helper; dropped when none runs or too much waits.
    func write(_ line: String) {
        guard process != nil else { return }
        let bytes = Array(line.utf8)
        guard pendingOut.count + bytes.count <= limits.maximumPendingBytes else {
            if EngineTrace.enabled { log("\(name): helper input full; line dropped") }
            return
        }
        pendingOut += bytes
        flush()
    }

    /// Writes what the pipe takes without blocking (chunks of at most 4096 bytes); the rest waits
    /// for a writable-source callback.
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
                if Self.consumeWouldBlock(error) {
                    waitForWritable()
                    return
                }
                fail("its input pipe broke")
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
            guard let data else { return 0 }
            MainActor.assumeIsolated {
                let helper = Unmanaged<HelperProcess>.fromOpaque(data).takeUnretainedValue()
                if let source = helper.writeSource { g_source_unref(source) }
                helper.writeSource = nil
                helper.flush()
            }
            return 0
        }
        g_source_set_callback(
            source, unsafeBitCast(handler, to: GSourceFunc.self), Unmanaged.passUnretained(self).toOpaque(), nil)
        g_source_attach(source, nil)
        writeSource = source
    }

    // MARK: Lines in

    /// Reads what is there; false when the read source must go (the helper was dropped).
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
                if Self.consumeWouldBlock(error) { return true }
                fail("its output pipe broke")
                return false
            }
            if count == 0 {
                fail("it exited")
                return false
            }
            let generationBefore = generation
            for item in splitter.feed(buffer[0..<count]) {
                guard case .line(let bytes) = item else {
                    fail("it sent an oversized line")
                    return false
                }
                guard countLine() else {
                    fail("it flooded its output")
                    return false
                }
                onLine(String(decoding: bytes, as: UTF8.self))
                if generation != generationBefore || process == nil { return false }
            }
            if splitter.isDiscardingLine {
                fail("it sent an oversized line")
                return false
            }
            if count < buffer.count { return true }
        }
    }

    /// Counts one line against the flood limit; false when the helper sent too many this second.
    private func countLine() -> Bool {
        let now = EngineProcess.clock.now()
        if now - floodWindowStart >= 1000 {
            floodWindowStart = now
            floodWindowLines = 0
        }
        floodWindowLines += 1
        return floodWindowLines <= limits.maximumLinesPerSecond
    }

    /// Whether a failed non-blocking call only would have blocked; frees the error.
    private static func consumeWouldBlock(_ error: UnsafeMutablePointer<GError>?) -> Bool {
        guard let error else { return false }
        defer { g_error_free(error) }
        return error.pointee.domain == g_io_error_quark() && error.pointee.code == gint(G_IO_ERROR_WOULD_BLOCK.rawValue)
    }
}
