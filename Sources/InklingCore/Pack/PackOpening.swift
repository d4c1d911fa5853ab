/// What `fstat` and `fstatvfs` say about an opened pack file: enough to decide how to open it.
public struct PackFileFacts: Equatable, Sendable {
    public var identity: PackFileIdentity
    /// The owner's user id.
    public var ownerUID: UInt32
    /// The permission bits (`st_mode & 0o7777`).
    public var permissions: UInt32
    public var isRegularFile: Bool
    /// The file system is mounted read-only (`ST_RDONLY`).
    public var onReadOnlyFileSystem: Bool

    public init(
        identity: PackFileIdentity, ownerUID: UInt32, permissions: UInt32, isRegularFile: Bool,
        onReadOnlyFileSystem: Bool
    ) {
        self.identity = identity
        self.ownerUID = ownerUID
        self.permissions = permissions
        self.isRegularFile = isRegularFile
        self.onReadOnlyFileSystem = onReadOnlyFileSystem
    }
}

/// How the engine opens a bundled pack (issue 18): mapped, so that only the pages in use are
/// resident and they are file-backed (the kernel can drop and re-read them), or read into
/// private memory as before.
///
/// A mapping shows whatever the file holds now: a file rewritten in place would change the
/// bytes under the readers (which rely on what was checked at open), and one truncated would
/// kill the process with SIGBUS at the next read. So only files no ordinary user can change are
/// mapped: owned by root and writable by nobody else, or on a read-only file system. Those are
/// the packages' packs; dpkg replaces a file by renaming a new one over it, so a mapped inode
/// never changes. A pack the user can write (a checkout's, a download) is read privately.
///
/// Verifying a mapped pack reads every page; a record of an earlier full verification
/// (`PackVerificationRecord`, written by the same user) that matches the opened file's identity
/// lets the engine use the pack at once and verify it later, in the background.
public enum PackOpening {
    public enum Plan: Equatable, Sendable {
        /// Map the file and use it at once (`PackCheck.deferred`); verify it in the background.
        case mapTrustingRecord
        /// Map the file and verify it fully before use (then record that).
        case mapAndVerify
        /// Read the file into private memory and verify it fully before use (it could change).
        case readPrivately
    }

    /// Whether the file can change under a mapping by anyone but root.
    public static func canChangeUnderMapping(_ facts: PackFileFacts) -> Bool {
        if facts.onReadOnlyFileSystem { return false }
        // Group or others may write; or an ordinary user owns it (and can chmod it writable).
        return facts.ownerUID != 0 || facts.permissions & 0o022 != 0
    }

    /// The plan for the file as opened, given the record of its last verification, if any.
    public static func plan(for facts: PackFileFacts, record: PackVerificationRecord?) -> Plan {
        guard facts.isRegularFile, facts.identity.size > 0, facts.identity.size <= PackFile.maximumSize,
            !canChangeUnderMapping(facts)
        else { return .readPrivately }
        guard let record, record.identity == facts.identity, PackVerification.isSettled(record),
            PackVerification.isDigest(Substring(record.sha256))
        else { return .mapAndVerify }
        return .mapTrustingRecord
    }
}
