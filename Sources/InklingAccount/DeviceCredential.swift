import FoundationEssentials
import InklingServerProtocol

/// What `inkling account login` keeps in the user's keyring for one Inkling Server: the device
/// token and what the client needs to know about it. Stored as the keyring item's secret (a
/// small JSON object) under the item attribute `server`; read by `inkling account` and by the
/// `inkling-cloud` helper, never by the engine.
public struct DeviceCredential: Codable, Equatable, Sendable {
    /// Format of the record.
    public var v = 1
    /// The server URL without trailing slashes (also the item's `server` attribute).
    public var server: String
    public var username: String
    public var deviceID: Int64
    public var deviceName: String
    public var token: String
    /// When the server stops accepting the token unless it is rotated before: Unix seconds.
    public var expiresAt: Int64
    /// When this client received the token: Unix seconds on this machine's clock.
    public var obtainedAt: Int64

    enum CodingKeys: String, CodingKey {
        case v, server, username, token
        case deviceID = "device_id"
        case deviceName = "device_name"
        case expiresAt = "expires_at"
        case obtainedAt = "obtained_at"
    }

    public init(server: String, username: String, deviceID: Int64, deviceName: String, token: String, expiresAt: Int64, obtainedAt: Int64) {
        self.server = server
        self.username = username
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.token = token
        self.expiresAt = expiresAt
        self.obtainedAt = obtainedAt
    }

    /// The record as stored in the keyring.
    public var encoded: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A record read back from the keyring; nil for anything else (an item written by another
    /// program, a token that could not go into an HTTP header).
    public static func decode(_ text: String) -> DeviceCredential? {
        guard text.utf8.count <= 8192, let record = try? JSONDecoder().decode(DeviceCredential.self, from: Data(text.utf8)),
            record.v == 1, isHeaderSafe(record.token), !record.token.isEmpty
        else { return nil }
        return record
    }

    /// The same device with the token a rotation returned.
    public func rotated(_ answer: DeviceRotateAnswer, now: Int64) -> DeviceCredential {
        var copy = self
        copy.token = answer.token
        copy.deviceID = answer.deviceID
        copy.expiresAt = answer.expiresAt
        copy.obtainedAt = now
        return copy
    }

    /// Printable ASCII without spaces: what may follow `Bearer ` in a header.
    public static func isHeaderSafe(_ token: String) -> Bool {
        token.utf8.count <= 1024 && token.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}

/// The URL of an Inkling Server as the client accepts it: `https://…`, or `http://…` only to
/// this machine (a token must not cross a network in clear text); no credentials, query or
/// fragment; trailing slashes removed (so the keyring item matches the `cloud-endpoint` setting
/// however it was typed).
public enum AccountServer {
    /// The normalized URL, or why it cannot be used.
    public static func normalized(_ raw: String) -> Result<String, AccountServerProblem> {
        var url = raw
        while url.hasSuffix("/") { url.removeLast() }
        guard url.utf8.count <= 2048,
            !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F || $0 == "?" || $0 == "#" })
        else { return .failure(AccountServerProblem("the server must be a plain http(s) URL without query or fragment")) }
        let lower = url.lowercased()
        let isHTTPS = lower.hasPrefix("https://")
        guard isHTTPS || lower.hasPrefix("http://") else {
            return .failure(AccountServerProblem("the server URL must start with https:// (or http:// for this machine)"))
        }
        let authority = lower.dropFirst(isHTTPS ? 8 : 7).prefix { $0 != "/" }
        guard !authority.isEmpty else { return .failure(AccountServerProblem("the server URL has no host")) }
        guard !authority.contains("@") else { return .failure(AccountServerProblem("the server URL must not contain credentials")) }
        if !isHTTPS, !isLoopback(authority: String(authority)) {
            return .failure(AccountServerProblem("http:// is only for a server on this machine; use https://"))
        }
        return .success(url)
    }

    /// Whether the URL's host is this machine (then no proxy from the environment is used).
    public static func isLoopbackURL(_ url: String) -> Bool {
        let lower = url.lowercased()
        let rest = lower.drop { $0 != ":" }.dropFirst(3)
        return isLoopback(authority: String(rest.prefix { $0 != "/" }))
    }

    static func isLoopback(authority: String) -> Bool {
        var host = authority
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            return host[host.index(after: host.startIndex)..<close] == "::1"
        }
        if let colon = host.firstIndex(of: ":") { host = String(host[..<colon]) }
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

/// Why a server URL was refused (one sentence for the user).
public struct AccountServerProblem: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
