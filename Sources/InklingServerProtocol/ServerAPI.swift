import FoundationEssentials
import InklingCore

/// The HTTP API of the Inkling Server (issue 14), shared by the server and its clients
/// (`inkling account`, `inkling-cloud` in account mode). JSON bodies, UTF-8.
///
/// | method and path             | auth   | body → answer                                        |
/// |-----------------------------|--------|------------------------------------------------------|
/// | `POST /v1/devices`          | none   | `DeviceCreateRequest` → 201 `DeviceTokenAnswer`       |
/// | `POST /v1/devices/rotate`   | Bearer | (empty) → 200 `DeviceRotateAnswer`                    |
/// | `DELETE /v1/devices/current`| Bearer | → 204, this device's token is dead at once            |
/// | `DELETE /v1/devices`        | Bearer | → 204, every device of the user is dead at once       |
/// | `POST /v1/check`            | Bearer | `CheckRequest` → 200 `CheckAnswer`                    |
/// | `GET /v1/health`            | none   | → 200 `HealthAnswer` (`{"status":"ok"}`)              |
///
/// Every failure answers with an `ErrorBody`: 400 malformed, 401 missing/unknown/revoked/expired
/// token or bad credentials, 403 disabled user, 404/405 unknown path or method, 413 body over
/// `maximumBodyBytes`, 429 over a limit (with `Retry-After: <seconds>`), 502/503/504 upstream
/// trouble (the circuit breaker is open, the upstream failed or timed out).
public enum ServerAPI {
    /// `POST`: sign in with username and password, get a device token.
    public static let devicesPath = "/v1/devices"
    /// `POST`: exchange the presented token for a new one.
    public static let rotatePath = "/v1/devices/rotate"
    /// `DELETE`: sign this device out.
    public static let currentDevicePath = "/v1/devices/current"
    /// `POST`: check one sentence.
    public static let checkPath = "/v1/check"
    /// `GET`: liveness, no user data.
    public static let healthPath = "/v1/health"

    /// Request bodies larger than this are refused with 413 before they are parsed.
    public static let maximumBodyBytes = 16 * 1024

    /// Response header on a successful `/v1/check` (and rotate-able requests) when the presented
    /// token is old enough that the client should rotate it now (value `1`). The client then
    /// calls `POST /v1/devices/rotate` and stores the new token at once; the old token keeps
    /// working for the grace period (`old_token_valid_until`), so checks in flight still pass.
    public static let rotateHeader = "Inkling-Rotate-Token"

    /// The `Authorization` header value for a token.
    public static func bearer(_ token: String) -> String { "Bearer " + token }

    /// Whether a string has the shape of a device token: `ink_` and 43 characters of unpadded
    /// base64url (256 bits). Anything else is refused without a database lookup.
    public static func isWellFormedToken(_ token: String) -> Bool {
        let bytes = Array(token.utf8)
        guard bytes.count == tokenPrefix.utf8.count + 43, token.hasPrefix(tokenPrefix) else { return false }
        return bytes.dropFirst(tokenPrefix.utf8.count).allSatisfy { byte in
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x5F
        }
    }

    /// Every token begins with this (so a leaked one is recognisable by secret scanners).
    public static let tokenPrefix = "ink_"
}

/// `POST /v1/devices` body.
public struct DeviceCreateRequest: Codable, Equatable, Sendable {
    public var username: String
    public var password: String
    /// A label the user recognises (`laptop`); at most 64 scalars.
    public var deviceName: String

    enum CodingKeys: String, CodingKey {
        case username, password
        case deviceName = "device_name"
    }

    public init(username: String, password: String, deviceName: String) {
        self.username = username
        self.password = password
        self.deviceName = deviceName
    }
}

/// `POST /v1/devices` answer (201): the token, shown this once.
public struct DeviceTokenAnswer: Codable, Equatable, Sendable {
    public var token: String
    public var deviceID: Int64
    /// When the token stops working unless rotated before: seconds since 1970-01-01 UTC.
    public var expiresAt: Int64

    enum CodingKeys: String, CodingKey {
        case token
        case deviceID = "device_id"
        case expiresAt = "expires_at"
    }

    public init(token: String, deviceID: Int64, expiresAt: Int64) {
        self.token = token
        self.deviceID = deviceID
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/devices/rotate` answer (200): the new token; the old one works until
/// `oldTokenValidUntil` (seconds since 1970-01-01 UTC), then is refused with 401.
public struct DeviceRotateAnswer: Codable, Equatable, Sendable {
    public var token: String
    public var deviceID: Int64
    public var expiresAt: Int64
    public var oldTokenValidUntil: Int64

    enum CodingKeys: String, CodingKey {
        case token
        case deviceID = "device_id"
        case expiresAt = "expires_at"
        case oldTokenValidUntil = "old_token_valid_until"
    }

    public init(token: String, deviceID: Int64, expiresAt: Int64, oldTokenValidUntil: Int64) {
        self.token = token
        self.deviceID = deviceID
        self.expiresAt = expiresAt
        self.oldTokenValidUntil = oldTokenValidUntil
    }
}

/// The body of every error answer: `{"error":"unauthorized"}`. `error` is one of
/// `ServerErrorCode`; `retryAfter` repeats the `Retry-After` header on 429.
public struct ErrorBody: Codable, Equatable, Sendable {
    public var error: String
    public var retryAfter: Int?

    enum CodingKeys: String, CodingKey {
        case error
        case retryAfter = "retry_after"
    }

    public init(error: String, retryAfter: Int? = nil) {
        self.error = error
        self.retryAfter = retryAfter
    }
}

/// The `error` values of `ErrorBody`.
public enum ServerErrorCode {
    public static let badRequest = "bad_request"
    public static let unauthorized = "unauthorized"
    public static let disabled = "disabled"
    public static let notFound = "not_found"
    public static let methodNotAllowed = "method_not_allowed"
    public static let tooLarge = "too_large"
    public static let tooManyLoginAttempts = "too_many_login_attempts"
    public static let tooManyDevices = "too_many_devices"
    public static let rateLimited = "rate_limited"
    public static let upstreamUnavailable = "upstream_unavailable"
    public static let upstreamFailed = "upstream_failed"
    public static let upstreamTimeout = "upstream_timeout"
    public static let internalError = "internal"
}

/// `POST /v1/check` body: exactly what the engine sends the helper in a `check` line
/// (`CloudCheckRequest`: `sentence`, `language`, `flags` with `start`/`end`/`word`/
/// `replacements`, offsets in code points, `end` exclusive) without the pipe's `v`, `type` and
/// `id`, which only matter between the engine and the helper. The helper builds it with
/// `init(_:)`; the server turns it back with `cloudRequest(id:)` and then runs the same prompt,
/// parsing and `CloudReply.validated(against:)` the helper runs against an upstream itself.
public struct CheckRequest: Codable, Equatable, Sendable {
    public var sentence: String
    public var language: String
    public var flags: [CloudFlag]

    public init(sentence: String, language: String, flags: [CloudFlag]) {
        self.sentence = sentence
        self.language = language
        self.flags = flags
    }

    /// The check of a pipe request.
    public init(_ request: CloudCheckRequest) {
        self.init(sentence: request.sentence, language: request.language, flags: request.flags)
    }

    /// The pipe request this check stands for.
    public func cloudRequest(id: Int = 0) -> CloudCheckRequest {
        CloudCheckRequest(id: id, sentence: sentence, language: language, flags: flags)
    }
}

/// `POST /v1/check` answer (200): the verdicts and fixes, already validated by the server
/// against the request. The shape is the model-output object the helper already parses from an
/// OpenAI-compatible upstream's message content (`{"verdicts":[{start,end,verdict,explanation}],
/// "fixes":[{start,end,original,replacement,explanation}]}`), so in account mode the helper reads
/// the body with the same parser (`ChatCompletion.reply(fromContent:)`) and validates it again.
public struct CheckAnswer: Codable, Equatable, Sendable {
    public var verdicts: [CloudVerdict]
    public var fixes: [CloudFix]

    public init(verdicts: [CloudVerdict], fixes: [CloudFix]) {
        self.verdicts = verdicts
        self.fixes = fixes
    }

    /// The answer of a validated reply.
    public init(_ reply: CloudReply) {
        self.init(verdicts: reply.verdicts ?? [], fixes: reply.fixes ?? [])
    }

    /// The pipe reply for request `id`.
    public func cloudReply(id: Int?) -> CloudReply {
        CloudReply(type: "result", id: id, verdicts: verdicts, fixes: fixes)
    }
}

/// `GET /v1/health` answer.
public struct HealthAnswer: Codable, Equatable, Sendable {
    public var status: String
    public init(status: String = "ok") { self.status = status }
}

/// JSON of the API: compact, sorted keys, slashes unescaped.
public enum ServerJSON {
    /// The encoded body.
    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }

    /// The decoded body, or nil when it is not valid JSON of that shape.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) -> T? {
        try? JSONDecoder().decode(type, from: Data(bytes))
    }
}
