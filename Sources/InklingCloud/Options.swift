import Glibc
import InklingCommandLine

/// The helper's command line:
/// `inkling-cloud --endpoint URL [--model NAME] [--key-file PATH] [--timeout-ms N]`
/// plus, for tests and diagnosis, `--no-keyring`, `--breaker-ms N` (the first open period of
/// the circuit breaker) and `--verbose` (one content-free line per request).
/// The API key is never taken from the command line or the environment.
struct Options: ProgramOptions, Equatable, Sendable {
    /// The endpoint without trailing slashes; requests go to `<endpoint>/chat/completions`.
    var endpoint: String
    /// The model name; empty: the endpoint's default (an Inkling Server needs none).
    var model: String
    /// An explicit key file; nil means the default path (see `defaultKeyFile`).
    var keyFile: String?
    var timeoutMilliseconds = 8000
    var useKeyring = true
    var breakerMilliseconds: UInt64 = 30_000
    /// Without an API key or a device token: how often to look for a device token in the keyring
    /// (the user may sign in to an Inkling Server while the helper runs); at once when the sign-in
    /// marker changed (`SignInMarker`), so this is only the fallback.
    var accountLookMilliseconds: UInt64 = 30_000
    var verbose = false

    /// The command line's description (shared conventions: `--help`, `--version`, exit status 2).
    static let command: CommandSpec = {
        var command = CommandSpec(
            ["inkling-cloud"], synopsis: "--endpoint URL [--model NAME] [--key-file PATH] [--timeout-ms N]",
            summary:
                "The cloud-check helper of the Inkling input method, started by the engine: JSON lines on standard input and output, HTTPS to an OpenAI-compatible endpoint. The API key comes from the keyring or the key file, never from the command line.",
            options: [
                OptionSpec(
                    "--endpoint", value: "URL", help: "the service's https:// URL (http:// only to this machine)"),
                OptionSpec(
                    "--model", value: "NAME",
                    help:
                        "the model name sent with each request (default: the endpoint's; unused for an Inkling Server)"),
                OptionSpec(
                    "--key-file", value: "PATH",
                    help: "the API key file (default $XDG_CONFIG_HOME/inkling/cloud-key, mode 0600)"),
                OptionSpec(
                    "--timeout-ms", value: "N", help: "request deadline in milliseconds, 100 to 120000 (default 8000)"),
                OptionSpec("--no-keyring", help: "do not ask the keyring for the key (tests)"),
                OptionSpec(
                    "--breaker-ms", value: "N",
                    help: "first pause after repeated failures in milliseconds, 10 to 300000 (tests)"),
                OptionSpec("--verbose", help: "one line per request on standard error (numbers only, never text)"),
                OptionSpec(
                    "--account-look-ms", value: "N",
                    help: "without a key: look for an Inkling Server sign-in this often (tests)", hidden: true),
            ])
        command.quotesArguments = false
        return command
    }()

    init(endpoint: String, model: String) {
        self.endpoint = endpoint
        self.model = model
    }

    init(_ parsed: ParsedArguments) throws(UsageError) {
        self.init(endpoint: "", model: "")
        let endpoint = parsed.value("--endpoint")
        let model = parsed.value("--model")
        keyFile = parsed.value("--key-file")
        if let ms = try parsed.integer("--timeout-ms", in: 100...120_000) { timeoutMilliseconds = ms }
        if let ms = try parsed.integer("--breaker-ms", in: 10...300_000) { breakerMilliseconds = UInt64(ms) }
        if let ms = try parsed.integer("--account-look-ms", in: 10...3_600_000) {
            accountLookMilliseconds = UInt64(ms)
        }
        useKeyring = !parsed.has("--no-keyring")
        verbose = parsed.has("--verbose")
        guard let endpoint, !endpoint.isEmpty else { throw Self.usageError("--endpoint is required") }
        if let model {
            guard !model.isEmpty, model.utf8.count <= 256,
                !model.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else { throw Self.usageError("--model takes a name of 1 to 256 bytes") }
            self.model = model
        }
        self.endpoint = try Self.checkedEndpoint(endpoint)
    }

    /// The endpoint, normalized, if it is acceptable: `https://…`, or `http://…` only to a
    /// loopback host (a local server), since sentences and the key must not cross a network in
    /// clear text. No credentials in the URL, no query or fragment, no spaces or control characters.
    static func checkedEndpoint(_ raw: String) throws(UsageError) -> String {
        var url = raw
        while url.hasSuffix("/") { url.removeLast() }
        guard url.utf8.count <= 2048,
            !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F || $0 == "?" || $0 == "#" })
        else { throw usageError("--endpoint must be a plain http(s) URL without query or fragment") }
        let lower = url.lowercased()
        let isHTTPS = lower.hasPrefix("https://")
        guard isHTTPS || lower.hasPrefix("http://") else {
            throw usageError("--endpoint must start with https:// (or http:// for a local server)")
        }
        let rest = lower.dropFirst(isHTTPS ? 8 : 7)
        let authority = rest.prefix { $0 != "/" }
        guard !authority.isEmpty else { throw usageError("--endpoint has no host") }
        guard !authority.contains("@") else {
            throw usageError("--endpoint must not contain credentials; use the keyring or the key file")
        }
        if !isHTTPS, !isLoopback(authority: String(authority)) {
            throw usageError("--endpoint uses http:// to a host that is not this machine; use https://")
        }
        return url
    }

    /// Whether the endpoint is on this machine (a local server).
    var isLoopback: Bool {
        let lower = endpoint.lowercased()
        let rest = lower.drop { $0 != ":" }.dropFirst(3)
        return Options.isLoopback(authority: String(rest.prefix { $0 != "/" }))
    }

    static func isLoopback(authority: String) -> Bool {
        var host = authority
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = String(host[host.index(after: host.startIndex)..<close])
            return host == "::1"
        }
        if let colon = host.firstIndex(of: ":") { host = String(host[..<colon]) }
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// `$XDG_CONFIG_HOME/inkling/cloud-key`, or `~/.config/inkling/cloud-key`.
    static func defaultKeyFile(environment: (String) -> String?) -> String? {
        if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") {
            return config + "/inkling/cloud-key"
        }
        if let home = environment("HOME"), home.hasPrefix("/") {
            return home + "/.config/inkling/cloud-key"
        }
        return nil
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
