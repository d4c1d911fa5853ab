/// What identifies a pack file on disk without reading it (from `stat`): a write to the file
/// changes its modification time, and anything that resets that time changes its status-change
/// time (which no unprivileged call can set back).
public struct PackFileIdentity: Equatable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int
    /// Modification time, nanoseconds since the epoch.
    public var modified: Int64
    /// Status-change time, nanoseconds since the epoch.
    public var changed: Int64

    public init(device: UInt64, inode: UInt64, size: Int, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }
}

/// A pack file whose SHA-256 was computed over its bytes: the file's identity then, the digest,
/// and when (nanoseconds since the epoch). Stored as one line in the user's data folder so the
/// engine need not hash an unchanged pack again each time it opens it.
public struct PackVerificationRecord: Equatable, Sendable {
    public var identity: PackFileIdentity
    public var sha256: String
    public var verifiedAt: Int64

    public init(identity: PackFileIdentity, sha256: String, verifiedAt: Int64) {
        self.identity = identity
        self.sha256 = sha256
        self.verifiedAt = verifiedAt
    }

    /// One line: `v1 device inode size modified changed verifiedAt sha256`.
    public func encoded() -> String {
        let i = identity
        return "v1 \(i.device) \(i.inode) \(i.size) \(i.modified) \(i.changed) \(verifiedAt) \(sha256)\n"
    }

    /// Nil for anything but a well-formed line of `encoded()` (a damaged record means: hash again).
    public init?(encoded text: String) {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 8, fields[0] == "v1",
            let device = UInt64(fields[1]), let inode = UInt64(fields[2]), let size = Int(fields[3]), size >= 0,
            let modified = Int64(fields[4]), let changed = Int64(fields[5]), let verifiedAt = Int64(fields[6]),
            PackVerification.isDigest(fields[7])
        else { return nil }
        self.init(
            identity: PackFileIdentity(device: device, inode: inode, size: size, modified: modified, changed: changed),
            sha256: String(fields[7]), verifiedAt: verifiedAt)
    }
}

/// Whether a pack must be hashed before use, or an earlier hash of the very same file stands.
public enum PackVerification {
    public enum Decision: Equatable, Sendable {
        /// The record covers this file as it is: its bytes are the ones hashed then.
        case trustRecord
        /// No record, a record of another file or of another digest, or one too close to the
        /// file's last change to prove anything: hash the bytes before use.
        case verifyFully
    }

    /// A file changed within this long before it was hashed could have been changed again
    /// within the same timestamp tick (file systems keep coarse clocks), unseen by `stat`; such
    /// a record is never trusted (git's "racily clean" rule).
    public static let racyMargin: Int64 = 2_000_000_000

    /// The decision for the file as `stat` shows it now, against the manifest's digest (compared
    /// exactly, as the full check compares GLib's lowercase digest).
    public static func decide(current: PackFileIdentity, record: PackVerificationRecord?, expectedSHA256: String)
        -> Decision
    {
        guard let record, record.identity == current, isDigest(Substring(expectedSHA256)),
            record.sha256 == expectedSHA256, isSettled(record)
        else { return .verifyFully }
        return .trustRecord
    }

    /// Whether a hash taken at `record.verifiedAt` is far enough past the file's last change.
    public static func isSettled(_ record: PackVerificationRecord) -> Bool {
        let lastChange = max(record.identity.modified, record.identity.changed)
        return record.verifiedAt >= lastChange &+ racyMargin
    }

    static func isDigest(_ text: Substring) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
