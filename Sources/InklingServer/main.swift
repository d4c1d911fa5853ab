import CGio
import Glibc
import InklingCloudClient
import InklingCore
import InklingLog
import InklingServerCore
import InklingServerStore

// inkling-server: the Inkling Server (issue 14). `serve` answers the HTTP API of
// InklingServerProtocol; the other commands administer users and devices in the same database.

let usage = """
    Usage: inkling-server [--config PATH] COMMAND
      serve                   answer the HTTP API (migrates the database first)
      migrate                 bring the database schema up to date
      purge                   delete expired tokens, old usage counts and devices past retention
                              (serve does this at start and every hour)
      user add NAME           add a user (password asked without echo, or one line on stdin)
      user disable NAME       refuse the user's sign-ins and revoke all of their devices
      user list               users, whether disabled, and their live devices
      devices NAME            a user's devices
      revoke NAME [DEVICE]    revoke one device (by id) or all of a user's devices
    The configuration defaults to /etc/inkling/server.conf (GLib key-file format).

    """

ProcessLog.setUp(identifier: "inkling-server")
signal(SIGPIPE, SIG_IGN)

func fail(_ message: String, status: Int32 = 1) -> Never {
    // The log names the program (`inkling-server: ` on stderr, SYSLOG_IDENTIFIER in the journal).
    ServerLog.write(message)
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var configPath: String?
if arguments.first == "--help" || arguments.first == "-h" {
    print(usage, terminator: "")
    exit(0)
}
if arguments.first == "--version" {
    print("inkling-server \(InklingVersion.current)")
    exit(0)
}
if arguments.first == "--config" {
    guard arguments.count >= 2 else { fail("--config needs a path\n" + usage, status: 2) }
    configPath = arguments[1]
    arguments.removeFirst(2)
}
guard let command = arguments.first else { fail("a command is required\n" + usage, status: 2) }

let config: ServerConfig
do {
    config = try ServerConfig.load(path: configPath)
} catch {
    switch error {
    case .unreadable(let message), .invalid(let message): fail("configuration: " + message, status: 2)
    }
}

let hasher = Argon2idHasher(
    iterations: config.argon2Iterations, memoryKiB: config.argon2MemoryKiB, parallelism: config.argon2Parallelism)
let pool: ConnectionPool
if config.usesPostgreSQL {
    let url = config.database
    pool = ConnectionPool(dialect: .postgresql) { () throws(SQLError) -> any SQLConnection in
        try PostgresConnection(url: url)
    }
} else {
    let path = config.sqlitePath
    pool = ConnectionPool(dialect: .sqlite) { () throws(SQLError) -> any SQLConnection in
        try SQLiteConnection(path: path)
    }
}
let accounts = AccountService(
    pool: pool, settings: config.settings, clock: SystemWallClock(), random: KernelRandom(), hasher: hasher)

func adminFailure(_ error: AdminError) -> Never {
    switch error {
    case .invalidName: fail("a user name is 1 to 64 letters, digits, '.', '_', '-' or '@'", status: 2)
    case .userExists: fail("that user already exists")
    case .unknownUser: fail("no such user")
    case .unknownDevice: fail("no such live device of that user")
    case .hashFailed: fail("could not hash the password")
    case .database(let message): fail("database: " + message)
    }
}

func migrate() {
    do {
        let applied = try accounts.migrate()
        if command == "migrate" { print("schema at version \(Schema.latestVersion) (\(applied) migration(s) applied)") }
    } catch {
        fail("database: " + error.message)
    }
}

/// Runs `purge`; one line of counts (nothing else is ever logged about rows).
func purgeSummary() -> String {
    do {
        let report = try accounts.purge()
        return
            "purged tokens=\(report.tokens) devices=\(report.devices) usage=\(report.usage) login_failures=\(report.loginFailures)"
    } catch {
        return "purge failed: database: " + error.message
    }
}

func writeError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// A password from the terminal without echo (asked twice), or one line from standard input.
func readPassword() -> [UInt8] {
    func readLine(fd: Int32) -> [UInt8]? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 {
            if byte == 0x0A { return bytes }
            bytes.append(byte)
            if bytes.count > 1024 { fail("the password is too long") }
        }
        return bytes.isEmpty ? nil : bytes
    }
    guard isatty(0) != 0 else {
        guard var line = readLine(fd: 0) else { fail("no password on standard input") }
        if line.last == 0x0D { line.removeLast() }
        return line
    }
    var saved = termios()
    tcgetattr(0, &saved)
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ECHO)
    func ask(_ prompt: String) -> [UInt8] {
        writeError(prompt)
        tcsetattr(0, TCSAFLUSH, &quiet)
        let line = readLine(fd: 0) ?? []
        tcsetattr(0, TCSAFLUSH, &saved)
        writeError("\n")
        return line
    }
    let first = ask("Password: ")
    guard first == ask("Again: ") else { fail("the passwords differ") }
    return first
}

func date(_ seconds: Int64?) -> String {
    guard let seconds else { return "-" }
    var time = time_t(seconds)
    var parts = tm()
    gmtime_r(&time, &parts)
    var buffer = [CChar](repeating: 0, count: 32)
    let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
    return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

switch (command, arguments.count) {
case ("migrate", 1):
    migrate()
case ("user", 3) where arguments[1] == "add":
    migrate()
    let password = readPassword()
    guard !password.isEmpty else { fail("the password is empty") }
    do { try accounts.addUser(name: arguments[2], password: password) } catch { adminFailure(error) }
    print("added \(arguments[2])")
case ("user", 3) where arguments[1] == "disable":
    do { try accounts.disableUser(name: arguments[2]) } catch { adminFailure(error) }
    print("disabled \(arguments[2]); every device revoked")
case ("user", 2) where arguments[1] == "list":
    do {
        for user in try accounts.listUsers() {
            print("\(user.name)\t\(user.disabled ? "disabled" : "active")\t\(user.activeDevices) device(s)")
        }
    } catch { adminFailure(error) }
case ("devices", 2):
    do {
        for device in try accounts.devices(ofUser: arguments[1]) {
            let state =
                device.revokedAt != nil
                ? "revoked \(date(device.revokedAt))"
                : (device.expiresAt == nil ? "expired" : "live until \(date(device.expiresAt))")
            print(
                "\(device.id)\t\(device.name)\tcreated \(date(device.createdAt))\tlast used \(date(device.lastUsedAt))\t\(state)"
            )
        }
    } catch { adminFailure(error) }
case ("revoke", 2), ("revoke", 3):
    var device: Int64?
    if arguments.count == 3 {
        guard let id = Int64(arguments[2]) else {
            fail("DEVICE is a device id (see 'inkling-server devices NAME')", status: 2)
        }
        device = id
    }
    do { print("revoked \(try accounts.revoke(userName: arguments[1], deviceID: device)) device(s)") } catch {
        adminFailure(error)
    }
case ("purge", 1):
    migrate()
    print(purgeSummary())
case ("serve", 1):
    serve()
default:
    fail("unknown command or wrong arguments\n" + usage, status: 2)
}
exit(0)

func serve() -> Never {
    if !config.listenIsLoopback, !config.allowPlainHTTP, config.tlsKeyFile == nil || config.tlsCertificateFile == nil {
        fail(
            "listening beyond loopback needs TLS (tls_certificate, tls_key) or allow_plain_http = true behind a TLS proxy",
            status: 2)
    }
    guard
        config.upstreamEndpoint.hasPrefix("https://") || config.upstreamEndpoint.hasPrefix("http://127.")
            || config.upstreamEndpoint.hasPrefix("http://localhost")
            || config.upstreamEndpoint.hasPrefix("http://[::1]")
    else {
        fail("[upstream] endpoint must be an https:// URL (http:// only to this machine)", status: 2)
    }
    guard !config.upstreamModel.isEmpty else { fail("[upstream] model is required", status: 2) }
    var key: String?
    var keyPath = config.upstreamKeyFile
    if keyPath == nil, let credentials = getenv("CREDENTIALS_DIRECTORY") {
        keyPath = String(cString: credentials) + "/upstream-key"
    }
    if let keyPath {
        do {
            let line = try SecretFile.read(keyPath, firstLineOnly: true, limit: 4096)
            key = line.isEmpty ? nil : line
        } catch {
            switch error {
            case .missing:
                if config.upstreamKeyFile != nil { fail("the upstream key file does not exist: " + keyPath, status: 2) }
            case .refused(let reason): fail("the upstream key file " + reason + ": " + keyPath, status: 2)
            }
        }
    }
    // SIGTERM and SIGINT are taken by `sigwait` below; blocked before any thread starts so
    // every thread inherits the mask.
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &signals, nil)
    migrate()
    HTTPClient.globalInit()
    let upstream = Upstream(
        endpoint: config.upstreamEndpoint, key: key, timeoutMilliseconds: config.upstreamTimeoutMilliseconds)
    let clock = SystemClock()
    let gateway = Gateway(
        model: config.upstreamModel, breakerMilliseconds: config.breakerMilliseconds, now: { clock.milliseconds() })
    // Checks are answered on the HTTP thread while the upstream is fast, else on the upstream threads.
    let placement = CheckPlacement(
        .server(
            httpThreads: config.threads, fastMilliseconds: UInt64(config.inlineCheckMilliseconds),
            upstreamTimeoutMilliseconds: UInt64(config.upstreamTimeoutMilliseconds),
            idleTimeoutMilliseconds: UInt64(config.idleTimeoutSeconds) * 1000))
    let router = Router(
        accounts: accounts, gateway: gateway,
        post: { body in
            let call = placement.upstreamStarted(now: clock.milliseconds())
            let outcome = upstream.post(body)
            var succeeded = false
            if case .response(let status, _) = outcome, (200..<300).contains(status) { succeeded = true }
            placement.upstreamFinished(call, now: clock.milliseconds(), succeeded: succeeded)
            return outcome
        })
    let server = HTTPServer(router: router, config: config, placement: placement)
    let port: Int
    do {
        port = try server.start()
    } catch {
        fail("cannot listen on the configured address (in use, or not this machine's)")
    }
    ServerLog.write(
        "inkling-server listening port=\(port) threads=\(config.threads) database=\(config.usesPostgreSQL ? "postgresql" : "sqlite") checks_in_place=\(placement.settings.maximumInline)"
    )
    // Housekeeping on this (otherwise idle) thread: at start, then whenever an hour passes
    // without a stop signal. Several instances purging at once is harmless (idempotent deletes).
    ServerLog.write("inkling-server " + purgeSummary())
    // A local, not a global: main.swift's globals below serve()'s call are not yet set when it runs.
    let purgeIntervalSeconds = 3600
    while true {
        var interval = timespec(tv_sec: purgeIntervalSeconds, tv_nsec: 0)
        if sigtimedwait(&signals, nil, &interval) >= 0 { break }
        if errno == EAGAIN { ServerLog.write("inkling-server " + purgeSummary()) }
    }
    ServerLog.write("inkling-server stopping")
    exit(0)
}
