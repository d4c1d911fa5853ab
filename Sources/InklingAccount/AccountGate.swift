import InklingServerProtocol

/// What the `inkling-cloud` helper tells the engine about the account (the pipe protocol's
/// `status` message): the engine never sees the token, only these.
public enum AccountEvent: String, Sendable, Equatable {
    /// The server refused the device token (revoked, expired, rotated past its grace): the
    /// helper stops asking until the user signs in again.
    case signInRequired = "sign-in-required"
    /// A new token turned up in the keyring after `signInRequired`: checks resume.
    case signedIn = "signed-in"
}

/// When the helper exchanges its token for a new one (`POST /v1/devices/rotate`).
///
/// Two triggers, whichever comes first:
/// - the server asks: a `/v1/check` answer carries `Inkling-Rotate-Token: 1`;
/// - the token's age: three quarters of its lifetime (`obtainedAt` to `expiresAt`) have passed,
///   so a token is renewed even on a server that never asks and before it expires.
/// A failed rotation (network, 5xx) is retried no sooner than `retryAfterFailure` seconds
/// later, a 429 no sooner than its `Retry-After` (see `AccountGate.rotationFailed`); the current
/// token keeps being used meanwhile.
public struct TokenRotationPolicy: Sendable, Equatable {
    /// Seconds to wait after a failed rotation before trying again.
    public var retryAfterFailure: Int64 = 60

    public init() {}

    /// Whether to rotate before the next check, at `now` (Unix seconds).
    public func isDue(_ credential: DeviceCredential, now: Int64, serverAsked: Bool, lastFailure: Int64?) -> Bool {
        if let lastFailure, now >= lastFailure, now - lastFailure < retryAfterFailure { return false }
        if serverAsked { return true }
        let lifetime = max(0, credential.expiresAt - credential.obtainedAt)
        // A clock set back (now before obtainedAt) must not postpone rotation forever: rotate
        // when the expiry is near whatever the age says.
        let threshold = credential.obtainedAt + lifetime / 4 * 3
        return now >= threshold || credential.expiresAt - now <= retryAfterFailure * 2
    }
}

/// The account mode's decisions for one helper, independent of HTTP and the keyring (those are
/// the glue's): whether the next check may go out, when to rotate, what a 401 means, when a
/// token found in the keyring ends a `signInRequired` pause. Clocks are passed in.
public struct AccountGate: Sendable {
    /// What to do before sending a check.
    public enum Step: Equatable, Sendable {
        /// The token was refused and no new one has turned up: answer at once, send nothing.
        case refuse
        /// The server said it is over a limit (429): answer at once until `Retry-After` has passed.
        case wait
        /// Rotate first, then check.
        case rotate
        case check
    }

    public private(set) var credential: DeviceCredential
    /// The token in hand was refused (401); nothing is sent until another token turns up.
    public private(set) var signInRequired = false
    public var policy = TokenRotationPolicy()
    /// How often (monotonic milliseconds) the keyring is read again while `signInRequired`.
    public var keyringLookInterval: UInt64 = 10_000
    private var rotationAsked = false
    private var lastRotationFailure: Int64?
    /// After a 429 to the rotation: no rotation before this (Unix seconds), whatever the policy says.
    private var rotationRetryAt: Int64?
    private var lastKeyringLook: UInt64?
    /// The sign-in marker as it was at the last keyring read (see `SignInMarker`).
    private var seenMarker: SignInMarker.Stamp?
    /// The refused token: a keyring still holding it is no reason to resume.
    private var refusedToken: String?
    /// After a 429: no check goes out before this (Unix seconds).
    private var pausedUntil: Int64?
    /// The pause after a 429 without a usable `Retry-After`, and the longest one honoured.
    public var defaultRetryAfter: Int64 = 60
    public var maximumRetryAfter: Int64 = 3600

    public init(credential: DeviceCredential) {
        self.credential = credential
    }

    /// The step before the next check at `now` (Unix seconds).
    public func nextStep(now: Int64) -> Step {
        if signInRequired { return .refuse }
        if let pausedUntil, now < pausedUntil, pausedUntil - now <= maximumRetryAfter { return .wait }
        if let rotationRetryAt, now < rotationRetryAt, rotationRetryAt - now <= maximumRetryAfter { return .check }
        // Once a 429's Retry-After has passed, its failure time no longer delays the rotation.
        let lastFailure = rotationRetryAt == nil ? lastRotationFailure : nil
        return policy.isDue(credential, now: now, serverAsked: rotationAsked, lastFailure: lastFailure)
            ? .rotate : .check
    }

    /// A check's HTTP answer: `asksRotation` when it carried `Inkling-Rotate-Token: 1`.
    /// Returns `signInRequired` when this 401 ends the asking (the glue first offers the
    /// keyring's record to `adopt`, in case another process already rotated or signed in).
    /// A 429 pauses the checks for `retryAfter` seconds (default `defaultRetryAfter`, at most
    /// `maximumRetryAfter`) from `now` (Unix seconds).
    public mutating func checkAnswered(status: Int, asksRotation: Bool, retryAfter: Int? = nil, now: Int64 = 0)
        -> AccountEvent?
    {
        if status == 401 { return refuse() }
        if status == 429 {
            let seconds = retryAfter.map { Int64(max(1, $0)) } ?? defaultRetryAfter
            pausedUntil = now + min(seconds, maximumRetryAfter)
        }
        if (200..<300).contains(status), asksRotation { rotationAsked = true }
        return nil
    }

    /// A rotation succeeded: the new credential, which the glue stores in the keyring at once
    /// (the old token dies when the grace period ends).
    public mutating func rotated(_ answer: DeviceRotateAnswer, now: Int64) -> DeviceCredential {
        credential = credential.rotated(answer, now: now)
        rotationAsked = false
        lastRotationFailure = nil
        rotationRetryAt = nil
        return credential
    }

    /// A rotation failed with `status` (nil: no HTTP answer). A 401 means the token is dead; a
    /// 429 is retried after its `retryAfter` seconds (default `defaultRetryAfter`, at most
    /// `maximumRetryAfter`), sooner or later than other failures' `policy.retryAfterFailure`.
    public mutating func rotationFailed(status: Int?, now: Int64, retryAfter: Int? = nil) -> AccountEvent? {
        if status == 401 { return refuse() }
        lastRotationFailure = now
        if status == 429 {
            let seconds = retryAfter.map { Int64(max(1, $0)) } ?? defaultRetryAfter
            rotationRetryAt = now + min(seconds, maximumRetryAfter)
        } else {
            rotationRetryAt = nil
        }
        return nil
    }

    /// Whether the glue should read the keyring again now (monotonic milliseconds): only while
    /// paused, and not more often than `keyringLookInterval` unless the sign-in marker (its
    /// stamp now: `marker`) changed since the last read.
    public func shouldLookAtKeyring(now: UInt64, marker: SignInMarker.Stamp? = nil) -> Bool {
        guard signInRequired else { return false }
        if let marker, marker != seenMarker { return true }
        guard let last = lastKeyringLook, now >= last else { return true }
        return now - last >= keyringLookInterval
    }

    /// Notes a keyring read at `now` (monotonic milliseconds) with the marker's stamp then, for
    /// `shouldLookAtKeyring`.
    public mutating func lookedAtKeyring(now: UInt64, marker: SignInMarker.Stamp? = nil) {
        lastKeyringLook = now
        seenMarker = marker
    }

    /// A record read from the keyring: taken when it holds another token than the one in hand
    /// and the refused one. Returns `signedIn` when that ends a pause, and whether it was taken.
    public mutating func adopt(_ found: DeviceCredential?) -> (taken: Bool, event: AccountEvent?) {
        guard let found, found.server == credential.server, found.token != credential.token, found.token != refusedToken
        else { return (false, nil) }
        let wasPaused = signInRequired
        credential = found
        signInRequired = false
        rotationAsked = false
        lastRotationFailure = nil
        rotationRetryAt = nil
        return (true, wasPaused ? .signedIn : nil)
    }

    private mutating func refuse() -> AccountEvent? {
        refusedToken = credential.token
        guard !signInRequired else { return nil }
        signInRequired = true
        return .signInRequired
    }
}
