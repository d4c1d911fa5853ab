internal import CGio

#if canImport(Glibc)
    import Glibc
#endif

/// SHA-256 over files with GLib's GChecksum: one implementation for the CLI (`inkling packs`)
/// and the engine (verifying a pack before it is loaded).
public enum FileDigest {
    /// The SHA-256 of a file as lower-case hex, or nil when it cannot be read.
    ///
    /// The file is read in 1 MiB chunks, not mapped, so hashing a pack does not inflate the
    /// engine's resident memory.
    public static func sha256(path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else { return nil }
        defer { g_checksum_free(checksum) }
        let size = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer, size)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            g_checksum_update(checksum, buffer.assumingMemoryBound(to: UInt8.self), gssize(count))
        }
        return String(cString: g_checksum_get_string(checksum))
    }

    /// The SHA-256 of bytes in memory as lower-case hex (for a pack read once with
    /// `PackFile.read(path:)`: the digest then covers exactly the bytes that will be used).
    public static func sha256(bytes: UnsafeRawBufferPointer) -> String? {
        guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else { return nil }
        defer { g_checksum_free(checksum) }
        let chunk = 1 << 20
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            let count = min(chunk, bytes.count - offset)
            g_checksum_update(checksum, (base + offset).assumingMemoryBound(to: UInt8.self), gssize(count))
            offset += count
        }
        return String(cString: g_checksum_get_string(checksum))
    }
}
