import CSecret
import Glibc

/// Where the API key comes from: the user's keyring (libsecret), else a key file that only the
/// user can read. Never the command line or the environment. No key is fine (local servers).
enum KeySource {
    enum FileResult: Equatable {
        case key(String)
        case missing
        /// The file exists but must not be used; the reason is safe to log.
        case refused(StaticString)

        static func == (lhs: FileResult, rhs: FileResult) -> Bool {
            switch (lhs, rhs) {
            case (.key(let a), .key(let b)): a == b
            case (.missing, .missing): true
            case (.refused(let a), .refused(let b)): a.description == b.description
            default: false
            }
        }
    }

    /// Largest key file read.
    static let maximumFileBytes = 4096

    /// Reads a key file: it must be a regular file (not a symbolic link, FIFO or device), owned
    /// by the effective user, with no group or other permission bits (mode 0600 or stricter).
    /// The checks are made on the opened descriptor, so the file cannot be swapped in between.
    static func readKeyFile(path: String, owner: uid_t = geteuid()) -> FileResult {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        if fd < 0 {
            switch errno {
            case ENOENT, ENOTDIR: return .missing
            case ELOOP: return .refused("it must not be a symbolic link")
            default: return .refused("it cannot be opened")
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .refused("it cannot be examined") }
        guard info.st_mode & S_IFMT == S_IFREG else { return .refused("it must be a regular file") }
        guard info.st_uid == owner else { return .refused("it must be owned by the user") }
        guard info.st_mode & 0o077 == 0 else {
            return .refused("its mode must be 0600 or stricter: run chmod 600 on it")
        }
        guard info.st_size <= maximumFileBytes else { return .refused("it is too large for a key") }
        var bytes = [UInt8](repeating: 0, count: maximumFileBytes + 1)
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress?.advanced(by: total), $0.count - total) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { return .refused("it cannot be read") }
            if count == 0 { break }
            total += count
        }
        defer { for index in bytes.indices { bytes[index] = 0 } }
        guard total <= maximumFileBytes else { return .refused("it is too large for a key") }
        return parseKey(bytes[0..<total])
    }

    /// The key from file contents: the first non-empty line, trimmed. It must be printable
    /// ASCII without spaces (it goes into an HTTP header).
    static func parseKey<Bytes: Collection>(_ bytes: Bytes) -> FileResult where Bytes.Element == UInt8 {
        let lines = bytes.split(whereSeparator: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") })
        for line in lines {
            let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            if trimmed.isEmpty { continue }
            guard trimmed.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                return .refused("the key must be printable ASCII without spaces")
            }
            return .key(String(decoding: trimmed, as: UTF8.self))
        }
        return .missing
    }

    /// Whether a session bus can be reached without starting one: without it libsecret would try
    /// to autolaunch a bus, which is slow and pointless for a helper.
    static func sessionBusAvailable(environment: (String) -> String?) -> Bool {
        if let address = environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return true }
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            var info = stat()
            return stat(runtime + "/bus", &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
        }
        return false
    }

    /// The key stored in the keyring for `endpoint`, if any.
    static func keyringKey(endpoint: String) -> String? {
        guard let secret = inkling_secret_lookup(endpoint) else { return nil }
        defer { inkling_secret_free(secret) }
        let bytes = Array(
            UnsafeBufferPointer(
                start: UnsafeRawPointer(secret).assumingMemoryBound(to: UInt8.self), count: strlen(secret)))
        if case .key(let key) = parseKey(bytes) { return key }
        return nil
    }

    /// Resolves the key once, logging (without contents) where it came from or why a file was refused.
    static func resolve(options: Options, environment: (String) -> String?) -> String? {
        if options.useKeyring, sessionBusAvailable(environment: environment),
            let key = keyringKey(endpoint: options.endpoint)
        {
            Log.note("using the API key from the keyring")
            return key
        }
        let explicit = options.keyFile != nil
        guard let path = options.keyFile ?? Options.defaultKeyFile(environment: environment) else { return nil }
        switch readKeyFile(path: path) {
        case .key(let key):
            Log.config("using the API key from the key file", path: path)
            return key
        case .missing:
            if explicit { Log.config("no key in the key file; sending requests without a key", path: path) }
            return nil
        case .refused(let reason):
            Log.config("refusing to use the key file, sending requests without a key", detail: reason, path: path)
            return nil
        }
    }
}
