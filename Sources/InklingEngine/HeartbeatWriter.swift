import CIBus
import InklingCommandLine
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the engine's heartbeat (`$XDG_RUNTIME_DIR/inkling/engine-heartbeat`: this process's
/// id, rewritten every `interval` seconds) so the settings app can say whether Inkling runs in
/// this session. The file's place, format and meaning: `Heartbeat` in InklingCore.
@MainActor
enum HeartbeatWriter {
    private static var path: String?

    static func start() {
        guard let file = Heartbeat.path(runtimeDirectory: getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }),
            let slash = file.lastIndex(of: "/")
        else { return }
        // 0700: the folder is the user's own (the runtime folder already is).
        if mkdir(String(file[..<slash]), 0o700) != 0 && errno != EEXIST { return }
        path = file
        beat()
        typealias Tick = @convention(c) (gpointer?) -> gboolean
        let tick: Tick = { _ in
            MainActor.assumeIsolated { HeartbeatWriter.beat() }
            return 1  // G_SOURCE_CONTINUE
        }
        g_timeout_add_seconds(guint(Heartbeat.interval), tick, nil)
    }

    /// Rewrites the file (a fresh modification time); a failure only means the app says "not running".
    static func beat() {
        guard let path else { return }
        RuntimeFile.replace(path: path, text: Heartbeat.contents(processID: getpid()))
    }

    /// Removes the file when the engine leaves in order (the app then says "not running").
    static func stop() {
        guard let path else { return }
        let contents = readPID(path)
        if contents == getpid() { unlink(path) }
    }

    private static func readPID(_ path: String) -> Int32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return Heartbeat.processID(in: String(decoding: buffer.prefix(count), as: UTF8.self))
    }
}
