/// The server's limits and lifetimes (the `[limits]` and `[tokens]` groups of server.conf).
public struct ServerSettings: Equatable, Sendable {
    /// How long a token works after it was issued or rotated in.
    public var tokenLifetimeSeconds: Int64 = 30 * 86_400
    /// Answers tell the client to rotate (`Inkling-Rotate-Token: 1`) once its token is this old.
    public var rotateAfterSeconds: Int64 = 7 * 86_400
    /// How long a token keeps working after it was rotated out.
    public var graceSeconds: Int64 = 600
    /// Devices with a live token per user.
    public var maximumDevices = 10
    public var checksPerMinute = 30
    public var checksPerDay = 2_000
    /// Unicode scalars of checked sentences per user and day.
    public var charactersPerDay = 200_000
    /// Failed sign-ins per user name, and per client address, per window.
    public var loginFailuresPerUser = 10
    public var loginFailuresPerAddress = 50
    public var loginWindowSeconds: Int64 = 900
    /// How long a revoked or expired device stays listed (`devices NAME`) before `purge` deletes it.
    public var retentionSeconds: Int64 = 30 * 86_400

    public init() {}
}
