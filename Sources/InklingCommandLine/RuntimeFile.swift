#if canImport(Glibc)
    import Glibc
#endif

/// Small status files in the session's runtime folder (`$XDG_RUNTIME_DIR/inkling/…`): the
/// engine's heartbeat, the sign-in marker, the cloud helper's last-check status. One way to write
/// them (a reader never sees half a line) and one way to read them (never following a link or
/// blocking on a FIFO planted there).
public enum RuntimeFile {
    /// Replaces the file at `path` with `text`, creating its folder 0700 when missing: written to
    /// a temporary file beside it (0600) and renamed into place. Returns whether it was replaced.
    @discardableResult
    public static func replace(path: String, text: String) -> Bool {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            // 0700: the folder is the user's own (the runtime folder already is).
            if mkdir(String(path[..<slash]), 0o700) != 0 && errno != EEXIST { return false }
        }
        // Per process: two writers never share a temporary file.
        let temporary = path + ".\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return false }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != bytes.count || rename(temporary, path) != 0 {
            unlink(temporary)
            return false
        }
        return true
    }

    /// What `read` found: the first bytes of the file and its modification time (seconds).
    public struct Contents: Sendable {
        public var text: String
        public var modified: Int64
    }

    /// The first `limit` bytes of the regular file at `path`, or nil when there is none.
    public static func read(path: String, limit: Int) -> Contents? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: max(0, limit))
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return Contents(
            text: String(decoding: bytes.prefix(max(0, count)), as: UTF8.self), modified: Int64(info.st_mtim.tv_sec))
    }
}
