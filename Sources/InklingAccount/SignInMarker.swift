import Glibc

/// The file `inkling account login` rewrites after storing a token, so that running
/// `inkling-cloud` helpers waiting for a sign-in notice it at their next check instead of after
/// their keyring-look interval.
///
/// Why a file and not a signal or the keyring: the helpers are children of the engine, which the
/// CLI cannot find without a registry of processes; a signal would also interrupt the helper's
/// blocking reads and transfers. Reading the keyring on every check would be a D-Bus round trip
/// on the key path. A `stat` of a file in `$XDG_RUNTIME_DIR` (tmpfs, private to the user) costs
/// microseconds and needs no thread. The file holds nothing secret: only the time of the login.
public enum SignInMarker {
    /// What identifies one write of the marker.
    public struct Stamp: Equatable, Sendable {
        public var seconds: Int64
        public var nanoseconds: Int64
        public var inode: UInt64
        public var size: Int64
    }

    /// `$XDG_RUNTIME_DIR/inkling/signed-in`, or nil without an absolute runtime directory.
    public static func path(environment: (String) -> String?) -> String? {
        guard let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") else { return nil }
        return runtime + "/inkling/signed-in"
    }

    /// Rewrites the marker (its directory created 0700). Best effort: helpers still look at the
    /// keyring every `--account-look-ms` without it.
    public static func touch(path: String, now: Int64) {
        if let slash = path.lastIndex(of: "/") { mkdir(String(path[..<slash]), 0o700) }
        // A fresh file each time (new inode), so two logins within one timestamp tick still differ.
        let temporary = path + ".\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let text = Array("\(now)\n".utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != text.count || rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// The marker's stamp now, or nil when there is none.
    public static func stamp(path: String) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Stamp(
            seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec), inode: UInt64(info.st_ino),
            size: Int64(info.st_size))
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
}
