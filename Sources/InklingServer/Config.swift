import CGio
import Glibc
import InklingServerCore

/// `/etc/inkling/server.conf` (GLib key-file format). Every key is optional; see
/// packaging/server/server.conf for the documented defaults.
struct ServerConfig {
    var listenHost = "127.0.0.1"
    var listenPort = 8088
    /// Threads of the HTTP library (they do not wait on a slow upstream: checks go to `upstreamThreads`).
    var threads = 16
    /// Threads running checks, each waiting on one upstream call at a time.
    var upstreamThreads = 32
    /// While the upstream answers within this many ms, checks are answered on the HTTP thread
    /// (at most half of them at once) instead of being handed over; 0: always handed over.
    var inlineCheckMilliseconds = 20
    var maximumConnections = 1024
    /// Seconds without any byte from the client before its connection is closed.
    var idleTimeoutSeconds = 15
    /// Seconds one request may take to arrive (headers and body), however it trickles in.
    var requestTimeoutSeconds = 30
    /// Plain HTTP on an address other than loopback (behind a TLS-terminating reverse proxy).
    var allowPlainHTTP = false
    var tlsCertificateFile: String?
    var tlsKeyFile: String?
    var logRequests = false

    var database = "/var/lib/inkling-server/inkling.db"

    var upstreamEndpoint = ""
    var upstreamModel = ""
    var upstreamKeyFile: String?
    var upstreamTimeoutMilliseconds = 8000
    var breakerMilliseconds: UInt64 = 30_000

    var settings = ServerSettings()

    var argon2Iterations: UInt32 = 3
    var argon2MemoryKiB: UInt32 = 65_536
    var argon2Parallelism: UInt32 = 1

    static let defaultPath = "/etc/inkling/server.conf"

    enum LoadError: Error {
        case unreadable(String)
        case invalid(String)
    }

    /// Reads the file; a missing file at the default path means all defaults.
    static func load(path: String?) throws(LoadError) -> ServerConfig {
        var config = ServerConfig()
        let file = path ?? defaultPath
        let keyFile = g_key_file_new()
        defer { g_key_file_free(keyFile) }
        var error: UnsafeMutablePointer<GError>?
        if g_key_file_load_from_file(keyFile, file, G_KEY_FILE_NONE, &error) == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unreadable"
            g_clear_error(&error)
            if path == nil, access(file, F_OK) != 0 { return config }
            throw .unreadable("\(file): \(message)")
        }
        func string(_ group: String, _ key: String) -> String? {
            guard g_key_file_has_key(keyFile, group, key, nil) != 0,
                let value = g_key_file_get_string(keyFile, group, key, nil)
            else { return nil }
            defer { g_free(value) }
            return String(cString: value)
        }
        func integer(_ group: String, _ key: String, _ range: ClosedRange<Int64>) throws(LoadError) -> Int64? {
            guard let text = string(group, key) else { return nil }
            guard let value = Int64(text.trimmingSpaces()), range.contains(value) else {
                throw .invalid(
                    "[\(group)] \(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }
        func flag(_ group: String, _ key: String) throws(LoadError) -> Bool? {
            guard let text = string(group, key)?.trimmingSpaces() else { return nil }
            switch text {
            case "true": return true
            case "false": return false
            default: throw .invalid("[\(group)] \(key) must be true or false")
            }
        }
        if let listen = string("server", "listen") {
            guard let (host, port) = parseListen(listen.trimmingSpaces()) else {
                throw .invalid("[server] listen must be HOST:PORT (IPv6 as [::1]:PORT)")
            }
            config.listenHost = host
            config.listenPort = port
        }
        if let value = try integer("server", "threads", 1...1024) { config.threads = Int(value) }
        if let value = try integer("server", "upstream_threads", 1...1024) { config.upstreamThreads = Int(value) }
        if let value = try integer("server", "inline_check_ms", 0...10_000) {
            config.inlineCheckMilliseconds = Int(value)
        }
        if let value = try integer("server", "max_connections", 1...100_000) { config.maximumConnections = Int(value) }
        if let value = try integer("server", "idle_timeout", 1...3600) { config.idleTimeoutSeconds = Int(value) }
        if let value = try integer("server", "request_timeout", 1...3600) { config.requestTimeoutSeconds = Int(value) }
        if let value = try flag("server", "allow_plain_http") { config.allowPlainHTTP = value }
        if let value = try flag("server", "log_requests") { config.logRequests = value }
        config.tlsCertificateFile = string("server", "tls_certificate").flatMap { $0.isEmpty ? nil : $0 }
        config.tlsKeyFile = string("server", "tls_key").flatMap { $0.isEmpty ? nil : $0 }
        if let value = string("database", "url"), !value.isEmpty { config.database = value }
        if let value = string("upstream", "endpoint") {
            var endpoint = value.trimmingSpaces()
            while endpoint.hasSuffix("/") { endpoint.removeLast() }
            config.upstreamEndpoint = endpoint
        }
        if let value = string("upstream", "model") { config.upstreamModel = value.trimmingSpaces() }
        config.upstreamKeyFile = string("upstream", "key_file").flatMap { $0.isEmpty ? nil : $0 }
        if let value = try integer("upstream", "timeout_ms", 100...120_000) {
            config.upstreamTimeoutMilliseconds = Int(value)
        }
        if let value = try integer("upstream", "breaker_ms", 10...300_000) {
            config.breakerMilliseconds = UInt64(value)
        }
        if let value = try integer("tokens", "lifetime", 1...10 * 365 * 86_400) {
            config.settings.tokenLifetimeSeconds = value
        }
        if let value = try integer("tokens", "rotate_after", 1...10 * 365 * 86_400) {
            config.settings.rotateAfterSeconds = value
        }
        if let value = try integer("tokens", "grace", 0...86_400) { config.settings.graceSeconds = value }
        if let value = try integer("tokens", "retention", 0...10 * 365 * 86_400) {
            config.settings.retentionSeconds = value
        }
        if let value = try integer("limits", "devices", 1...10_000) { config.settings.maximumDevices = Int(value) }
        if let value = try integer("limits", "checks_per_minute", 1...1_000_000) {
            config.settings.checksPerMinute = Int(value)
        }
        if let value = try integer("limits", "checks_per_day", 1...100_000_000) {
            config.settings.checksPerDay = Int(value)
        }
        if let value = try integer("limits", "characters_per_day", 1...10_000_000_000) {
            config.settings.charactersPerDay = Int(value)
        }
        if let value = try integer("limits", "login_failures_per_user", 1...1_000_000) {
            config.settings.loginFailuresPerUser = Int(value)
        }
        if let value = try integer("limits", "login_failures_per_address", 1...1_000_000) {
            config.settings.loginFailuresPerAddress = Int(value)
        }
        if let value = try integer("limits", "login_window", 1...86_400) { config.settings.loginWindowSeconds = value }
        if let value = try integer("passwords", "argon2_iterations", 1...100) {
            config.argon2Iterations = UInt32(value)
        }
        if let value = try integer("passwords", "argon2_memory_kib", 8...4_194_304) {
            config.argon2MemoryKiB = UInt32(value)
        }
        if let value = try integer("passwords", "argon2_parallelism", 1...64) {
            config.argon2Parallelism = UInt32(value)
        }
        return config
    }

    /// `127.0.0.1:8088`, `[::1]:8088`, `0.0.0.0:8088`.
    static func parseListen(_ text: String) -> (String, Int)? {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else { return nil }
        return (String(host), port)
    }

    var listenIsLoopback: Bool {
        listenHost == "::1" || listenHost == "localhost" || listenHost.hasPrefix("127.")
    }

    var usesPostgreSQL: Bool { database.hasPrefix("postgresql://") || database.hasPrefix("postgres://") }

    /// The SQLite file (a `sqlite://` prefix is optional).
    var sqlitePath: String {
        database.hasPrefix("sqlite://") ? String(database.dropFirst("sqlite://".count)) : database
    }
}

extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" || last == "\n" || last == "\r" {
            scalars.removeLast()
        }
        return String(String.UnicodeScalarView(scalars))
    }
}

/// Reads a secret file (upstream key, TLS key): a regular file, not a symbolic link, not
/// readable by others; the first line, trimmed. The contents are never logged.
enum SecretFile {
    enum Failure: Error {
        case missing
        case refused(String)
    }

    static func read(_ path: String, firstLineOnly: Bool, limit: Int = 64 * 1024) throws(Failure) -> String {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY)
        if fd < 0 {
            if errno == ENOENT { throw .missing }
            throw .refused("cannot be opened (not a symbolic link, readable by the server)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw .refused("must be a regular file") }
        guard info.st_mode & 0o007 == 0 else { throw .refused("must not be readable by others: chmod o-rwx") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        guard bytes.count <= limit else { throw .refused("is too large") }
        let text = String(decoding: bytes, as: UTF8.self)
        guard firstLineOnly else { return text }
        // An empty file stands for "no key" (an upstream on this machine without one).
        let line =
            text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).first.map(String.init)?.trimmingSpaces() ?? ""
        guard line.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .refused("must hold one line of printable ASCII without spaces")
        }
        return line
    }
}
