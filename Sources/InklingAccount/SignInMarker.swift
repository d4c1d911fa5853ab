import Glibc

/// The file `inkling account login` rewrites after storing a token, so that running
/// `inkling-cloud` helpers waiting for a sign-in notice it at their next check instead of after
/// their keyring-look interval.
///
/// Why a file and not a signal or the keyring: the helpers are children of the engine, which the
/// CLI cannot find without a registry of processes; a signal would also interrupt the helper's
/// blocking reads and transfers. Reading the keyring on every check would be a D-Bus round trip
/// on the key path. A `stat` of a file in `$XDG_RUNTIME_DIR` (tmpfs, private to the user) costs
/// microseconds and needs no thread. The file holds nothing secret: only the time of the login and
/// an identifier of the write (see `Stamp.written`).
public enum SignInMarker {
    /// What identifies one write of the marker.
    public struct Stamp: Equatable, Sendable {
        public var seconds: Int64
        public var nanoseconds: Int64
        public var inode: UInt64
        public var size: Int64
        /// The file's text: the login's time and an identifier of that write (process and clock
        /// reading). Tells two writes apart where the stat fields cannot: a file system that
        /// reuses inodes (ext4 does) gives the third write of a tick the first one's inode, with
        /// the same coarse mtime and the same size.
        public var written: String = ""
    }

    /// The most of the file `stamp` reads (a marker is one short line).
    static let maximumTextBytes = 128

    /// `$XDG_RUNTIME_DIR/inkling/signed-in`, or nil without an absolute runtime directory.
    public static func path(environment: (String) -> String?) -> String? {
        guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
        return runtime + "/inkling/signed-in"
    }

    /// Rewrites the marker (its directory created 0700). Best effort: helpers still look at the
    /// keyring every `--account-look-ms` without it.
    public static func touch(path: String, now: Int64) {
        if let slash = path.lastIndex(of: "/") { mkdir(String(path[..<slash]), 0o700) }
        // Written aside and renamed into place: a reader never sees half a line.
        let temporary = path + ".\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        // Unique per write: another process has another pid, the same process a later clock.
        let text = Array("\(now) \(getpid()) \(clock.tv_sec).\(clock.tv_nsec)\n".utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != text.count || rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// The marker's stamp now, or nil when there is none.
    public static func stamp(path: String) -> Stamp? {
        // Opened without following links or blocking (a FIFO planted there must not hang the
        // helper); the stat and the text come from the same open file.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: maximumTextBytes)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return Stamp(
            seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec), inode: UInt64(info.st_ino),
            size: Int64(info.st_size), written: String(decoding: bytes.prefix(max(0, count)), as: UTF8.self))
    }
}

/// When a helper without a token reads the keyring again: every `interval` milliseconds, and at
/// once when the sign-in marker changed since the last look (see `SignInMarker`).
public struct KeyringLookSchedule: Sendable {
    public var interval: UInt64
    private var lastLook: UInt64
    private var seenMarker: SignInMarker.Stamp?

    /// `now` (monotonic milliseconds) and `marker` as they were at the look done at start.
    public init(interval: UInt64, lookedAt now: UInt64, marker: SignInMarker.Stamp?) {
        self.interval = interval
        lastLook = now
        seenMarker = marker
    }

    /// Whether to read the keyring at `now`, with the marker's stamp now.
    public func isDue(now: UInt64, marker: SignInMarker.Stamp?) -> Bool {
        if let marker, marker != seenMarker { return true }
        // A monotonic clock does not go back; `now < lastLook` would be a bug: look.
        return now < lastLook || now - lastLook >= interval
    }

    /// Notes a keyring read at `now` with the marker's stamp then.
    public mutating func looked(now: UInt64, marker: SignInMarker.Stamp?) {
        lastLook = now
        seenMarker = marker
    }

    /// Whether a check goes on to the worker of a helper waiting for a sign-in, given whether
    /// its circuit breaker allows a request now. The breaker guards the path without a key
    /// (chat completions), whose failures say nothing about a sign-in: when a keyring look is
    /// due the check goes on even while the circuit is open, and the look comes first (a sign-in
    /// found then starts the account mode with a closed circuit). Without this a helper that had
    /// failed three times before the sign-in answered `circuit open` for up to five minutes.
    public func admits(now: UInt64, marker: SignInMarker.Stamp?, breakerAllows: Bool) -> Bool {
        breakerAllows || isDue(now: now, marker: marker)
    }
}
