/// What one `purge` removed, in rows (counts only: nothing else is logged).
public struct PurgeReport: Equatable, Sendable {
    public var tokens = 0
    public var devices = 0
    public var usage = 0
    public var loginFailures = 0

    public init(tokens: Int = 0, devices: Int = 0, usage: Int = 0, loginFailures: Int = 0) {
        self.tokens = tokens
        self.devices = devices
        self.usage = usage
        self.loginFailures = loginFailures
    }
}

extension AccountService {
    /// Deletes the rows no rule needs any more, as of the injected clock:
    /// - tokens that expired, or were rotated out and whose grace period is over (they can only
    ///   ever be refused, and refusing an unknown token gives the same 401);
    /// - devices without a token whose last event (revocation, else last use, else creation) is
    ///   older than `retentionSeconds` (kept that long so `devices NAME` still shows them);
    /// - usage windows that ended before yesterday (limits read only the current minute and day;
    ///   yesterday stays so an instance whose clock lags a little still finds its day);
    /// - login-failure windows before the previous one (throttling reads only the current one).
    /// Each statement is one atomic delete of rows no request can bring back to use, so several
    /// instances may purge at once.
    @discardableResult
    public func purge() throws(SQLError) -> PurgeReport {
        let now = clock.seconds()
        let day = now - now % 86_400
        let window = now - now % settings.loginWindowSeconds
        return try pool.with { (db) throws(SQLError) -> PurgeReport in
            var report = PurgeReport()
            report.tokens =
                try db.execute(
                    "DELETE FROM tokens WHERE expires_at <= $1 OR replaced_until <= $1 RETURNING device_id", [.int(now)]
                ).count
            report.devices =
                try db.execute(
                    """
                    DELETE FROM devices
                    WHERE NOT EXISTS (SELECT 1 FROM tokens t WHERE t.device_id = devices.id)
                      AND COALESCE(revoked_at, last_used_at, created_at) < $1
                    RETURNING id
                    """, [.int(now - settings.retentionSeconds)]
                ).count
            report.usage =
                try db.execute("DELETE FROM usage WHERE starts_at < $1 RETURNING user_id", [.int(day - 86_400)]).count
            report.loginFailures =
                try db.execute(
                    "DELETE FROM login_failures WHERE starts_at < $1 RETURNING failures",
                    [.int(window - settings.loginWindowSeconds)]
                ).count
            return report
        }
    }
}
