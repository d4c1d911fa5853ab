import InklingServerProtocol

/// A user as `user list` shows it.
public struct UserSummary: Equatable, Sendable {
    public var name: String
    public var disabled: Bool
    public var activeDevices: Int
}

/// A device as `devices NAME` shows it.
public struct DeviceSummary: Equatable, Sendable {
    public var id: Int64
    public var name: String
    public var createdAt: Int64
    public var lastUsedAt: Int64?
    public var revokedAt: Int64?
    /// The latest expiry of its live tokens; nil when it has none.
    public var expiresAt: Int64?
}

/// Who presented a valid token.
public struct Principal: Equatable, Sendable {
    public var userID: Int64
    public var deviceID: Int64
    public var tokenHash: String
    /// Whether the presented token is the device's current one (not one in its grace period).
    public var isCurrent: Bool
    /// Whether the client should rotate now (the token is older than `rotateAfterSeconds`).
    public var shouldRotate: Bool
}

/// The result of a sign-in.
public enum SignInResult: Equatable, Sendable {
    case issued(DeviceTokenAnswer)
    /// Unknown user, wrong password or disabled user: the same answer for all three.
    case badCredentials
    case throttled(retryAfter: Int64)
    case tooManyDevices
}

/// Whether a check may go upstream.
public enum Admission: Equatable, Sendable {
    case allowed
    case limited(retryAfter: Int64)
}

/// Problems of the admin commands, worded for the terminal.
public enum AdminError: Error, Equatable {
    case invalidName
    case userExists
    case unknownUser
    case unknownDevice
    case hashFailed
    case database(String)
}

/// Token lifecycle, limits and sign-in throttling over the shared schema. Every rule holds
/// across server instances on one PostgreSQL because every decision is a single statement or a
/// transaction in the database, never process memory.
public final class AccountService: Sendable {
    public let pool: ConnectionPool
    public let settings: ServerSettings
    let clock: any WallClock
    let random: any RandomSource
    let hasher: any PasswordHasher
    /// Verified for unknown users so their sign-in costs as long as a known user's.
    let decoyHash: String?

    public init(pool: ConnectionPool, settings: ServerSettings, clock: any WallClock, random: any RandomSource, hasher: any PasswordHasher) {
        self.pool = pool
        self.settings = settings
        self.clock = clock
        self.random = random
        self.hasher = hasher
        decoyHash = hasher.hash(random.bytes(16))
    }

    // MARK: Schema

    /// Brings the database to `Schema.latestVersion`; returns how many migrations ran.
    @discardableResult
    public func migrate() throws(SQLError) -> Int {
        try pool.with { (db) throws(SQLError) -> Int in
            let dialect = db.dialect
            try db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)", [])
            var applied = 0
            try transaction(db) { (db) throws(SQLError) in
                if let lock = dialect.migrationLock { try db.execute(lock, []) }
                let done = Set(try db.execute("SELECT version FROM schema_migrations", []).compactMap { $0.first?.int })
                for (index, statements) in Schema.migrations(dialect).enumerated() where !done.contains(Int64(index + 1)) {
                    for statement in statements { try db.execute(statement, []) }
                    try db.execute("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)", [.int(Int64(index + 1)), .int(clock.seconds())])
                    applied += 1
                }
            }
            return applied
        }
    }

    func transaction<T>(_ db: any SQLConnection, _ body: (any SQLConnection) throws(SQLError) -> T) throws(SQLError) -> T {
        try db.execute(db.dialect.beginWrite, [])
        do {
            let result = try body(db)
            try db.execute("COMMIT", [])
            return result
        } catch {
            _ = try? db.execute("ROLLBACK", [])
            throw error
        }
    }

    // MARK: Devices

    /// `POST /v1/devices`: checks the throttle, the password and the device cap, then issues a token.
    public func signIn(username: String, password: [UInt8], deviceName: String, address: String) throws(SQLError) -> SignInResult {
        let now = clock.seconds()
        let window = now - now % settings.loginWindowSeconds
        let retryAfter = window + settings.loginWindowSeconds - now
        let userKey = "user:" + SHA256.hex(Array(username.utf8))
        let addressKey = "address:" + SHA256.hex(Array(address.utf8))
        let (userFailures, addressFailures) = try pool.with { (db) throws(SQLError) -> (Int64, Int64) in
            (try failures(db, key: userKey, window: window), try failures(db, key: addressKey, window: window))
        }
        if userFailures >= Int64(settings.loginFailuresPerUser) || addressFailures >= Int64(settings.loginFailuresPerAddress) {
            return .throttled(retryAfter: max(1, retryAfter))
        }
        let user = try pool.with { (db) throws(SQLError) -> (id: Int64, hash: String, disabled: Bool)? in
            guard let row = try db.execute("SELECT id, password_hash, disabled FROM users WHERE name = $1", [.text(username)]).first,
                let id = row[0].int, let hash = row[1].text, let disabled = row[2].int
            else { return nil }
            return (id, hash, disabled != 0)
        }
        let verified: Bool
        if let user {
            verified = hasher.verify(password, encoded: user.hash) && !user.disabled
        } else {
            if let decoyHash { _ = hasher.verify(password, encoded: decoyHash) }
            verified = false
        }
        guard let user, verified else {
            try pool.with { (db) throws(SQLError) in
                for key in [userKey, addressKey] {
                    try db.execute(
                        """
                        INSERT INTO login_failures (key, starts_at, failures) VALUES ($1, $2, 1)
                        ON CONFLICT (key, starts_at) DO UPDATE SET failures = login_failures.failures + 1
                        """, [.text(key), .int(window)])
                }
                try db.execute("DELETE FROM login_failures WHERE starts_at < $1", [.int(window - settings.loginWindowSeconds)])
            }
            return .badCredentials
        }
        let token = DeviceToken.make(random: random)
        let expiresAt = now + settings.tokenLifetimeSeconds
        let issued = try pool.with { (db) throws(SQLError) -> Int64? in
            try transaction(db) { (db) throws(SQLError) -> Int64? in
                try db.execute(db.dialect.lockUser, [.int(user.id)])
                let live = try db.execute(
                    """
                    SELECT COUNT(DISTINCT d.id) FROM devices d JOIN tokens t ON t.device_id = d.id
                    WHERE d.user_id = $1 AND d.revoked_at IS NULL AND t.expires_at > $2
                      AND (t.replaced_until IS NULL OR t.replaced_until > $2)
                    """, [.int(user.id), .int(now)]).first?.first?.int ?? 0
                guard live < Int64(settings.maximumDevices) else { return nil }
                guard let deviceID = try db.execute(
                    "INSERT INTO devices (user_id, name, created_at) VALUES ($1, $2, $3) RETURNING id",
                    [.int(user.id), .text(deviceName), .int(now)]).first?.first?.int
                else { throw SQLError("no device id returned") }
                try db.execute(
                    "INSERT INTO tokens (hash, device_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
                    [.text(DeviceToken.storedHash(token)), .int(deviceID), .int(now), .int(expiresAt)])
                return deviceID
            }
        }
        guard let issued else { return .tooManyDevices }
        return .issued(DeviceTokenAnswer(token: token, deviceID: issued, expiresAt: expiresAt))
    }

    private func failures(_ db: any SQLConnection, key: String, window: Int64) throws(SQLError) -> Int64 {
        try db.execute("SELECT failures FROM login_failures WHERE key = $1 AND starts_at = $2", [.text(key), .int(window)]).first?.first?.int ?? 0
    }

    /// The principal of a bearer token, or nil (401) when it is missing, malformed, unknown,
    /// expired, rotated out longer than the grace period ago, revoked, or its user is disabled.
    public func authenticate(token: String?) throws(SQLError) -> Principal? {
        guard let token, ServerAPI.isWellFormedToken(token) else { return nil }
        let hash = DeviceToken.storedHash(token)
        let now = clock.seconds()
        return try pool.with { (db) throws(SQLError) -> Principal? in
            guard let row = try db.execute(
                """
                SELECT t.device_id, d.user_id, t.created_at, t.expires_at, t.replaced_until, d.revoked_at, u.disabled
                FROM tokens t JOIN devices d ON d.id = t.device_id JOIN users u ON u.id = d.user_id
                WHERE t.hash = $1
                """, [.text(hash)]).first,
                let deviceID = row[0].int, let userID = row[1].int, let createdAt = row[2].int, let expiresAt = row[3].int
            else { return nil }
            guard expiresAt > now, row[5] == .null, row[6].int == 0 else { return nil }
            if let replacedUntil = row[4].int, replacedUntil <= now { return nil }
            let isCurrent = row[4] == .null
            return Principal(
                userID: userID, deviceID: deviceID, tokenHash: hash, isCurrent: isCurrent,
                shouldRotate: isCurrent && now - createdAt >= settings.rotateAfterSeconds)
        }
    }

    /// `POST /v1/devices/rotate`: a new token for the device; the presented one keeps working for
    /// the grace period. Nil (401) when the presented token is not the device's current one
    /// (already rotated out, or a concurrent rotation won).
    public func rotate(_ principal: Principal) throws(SQLError) -> DeviceRotateAnswer? {
        let now = clock.seconds()
        let token = DeviceToken.make(random: random)
        let expiresAt = now + settings.tokenLifetimeSeconds
        let graceEnd = now + settings.graceSeconds
        return try pool.with { (db) throws(SQLError) -> DeviceRotateAnswer? in
            try transaction(db) { (db) throws(SQLError) -> DeviceRotateAnswer? in
                let replaced = try db.execute(
                    """
                    UPDATE tokens SET replaced_until = $2
                    WHERE hash = $1 AND replaced_until IS NULL AND expires_at > $3
                      AND device_id IN (SELECT id FROM devices WHERE revoked_at IS NULL)
                    RETURNING device_id
                    """, [.text(principal.tokenHash), .int(graceEnd), .int(now)])
                guard replaced.first?.first?.int == principal.deviceID else { return nil }
                try db.execute(
                    "INSERT INTO tokens (hash, device_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
                    [.text(DeviceToken.storedHash(token)), .int(principal.deviceID), .int(now), .int(expiresAt)])
                // Tokens whose grace is over are of no further use.
                try db.execute("DELETE FROM tokens WHERE device_id = $1 AND replaced_until <= $2", [.int(principal.deviceID), .int(now)])
                return DeviceRotateAnswer(token: token, deviceID: principal.deviceID, expiresAt: expiresAt, oldTokenValidUntil: graceEnd)
            }
        }
    }

    /// `DELETE /v1/devices/current`: the device and every token of it are dead at once.
    public func revokeDevice(userID: Int64, deviceID: Int64) throws(SQLError) -> Bool {
        let now = clock.seconds()
        return try pool.with { (db) throws(SQLError) -> Bool in
            try transaction(db) { (db) throws(SQLError) -> Bool in
                let revoked = try db.execute(
                    "UPDATE devices SET revoked_at = $3 WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id",
                    [.int(deviceID), .int(userID), .int(now)])
                try db.execute("DELETE FROM tokens WHERE device_id IN (SELECT id FROM devices WHERE id = $1 AND user_id = $2)", [.int(deviceID), .int(userID)])
                return !revoked.isEmpty
            }
        }
    }

    /// `DELETE /v1/devices`: every device of the user is dead at once. Returns how many.
    @discardableResult
    public func revokeAll(userID: Int64) throws(SQLError) -> Int {
        let now = clock.seconds()
        return try pool.with { (db) throws(SQLError) -> Int in
            try transaction(db) { (db) throws(SQLError) -> Int in
                let revoked = try db.execute(
                    "UPDATE devices SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL RETURNING id", [.int(userID), .int(now)])
                try db.execute("DELETE FROM tokens WHERE device_id IN (SELECT id FROM devices WHERE user_id = $1)", [.int(userID)])
                return revoked.count
            }
        }
    }

    // MARK: Limits

    /// Counts one check of `characters` scalars against the user's minute and day, or refuses it
    /// (counting nothing) with the seconds until the window that refused it ends. Each counter is
    /// one atomic upsert, so concurrent requests on any instance cannot both slip under a limit.
    public func admitCheck(userID: Int64, deviceID: Int64, characters: Int) throws(SQLError) -> Admission {
        let now = clock.seconds()
        let minute = now - now % 60
        let day = now - now % 86_400
        return try pool.with { (db) throws(SQLError) -> Admission in
            func count(_ period: String, _ start: Int64, _ checks: Int64, _ chars: Int64) throws(SQLError) -> (Int64, Int64) {
                let row = try db.execute(
                    """
                    INSERT INTO usage (user_id, period, starts_at, checks, characters) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (user_id, period, starts_at)
                    DO UPDATE SET checks = usage.checks + excluded.checks, characters = usage.characters + excluded.characters
                    RETURNING checks, characters
                    """, [.int(userID), .text(period), .int(start), .int(checks), .int(chars)]).first
                return (row?[0].int ?? 0, row?[1].int ?? 0)
            }
            let chars = Int64(characters)
            let (minuteChecks, _) = try count("minute", minute, 1, chars)
            if minuteChecks > Int64(settings.checksPerMinute) {
                _ = try count("minute", minute, -1, -chars)
                return .limited(retryAfter: minute + 60 - now)
            }
            let (dayChecks, dayCharacters) = try count("day", day, 1, chars)
            if dayChecks > Int64(settings.checksPerDay) || dayCharacters > Int64(settings.charactersPerDay) {
                _ = try count("day", day, -1, -chars)
                _ = try count("minute", minute, -1, -chars)
                return .limited(retryAfter: day + 86_400 - now)
            }
            try db.execute("UPDATE devices SET last_used_at = $2 WHERE id = $1", [.int(deviceID), .int(now)])
            // Yesterday's minutes are of no further use (keeps the table small).
            if minuteChecks == 1 {
                try db.execute("DELETE FROM usage WHERE user_id = $1 AND period = 'minute' AND starts_at < $2", [.int(userID), .int(minute)])
            }
            return .allowed
        }
    }

    // MARK: Administration

    /// Whether a user name is acceptable: 1 to 64 characters of letters, digits, `.`, `_`, `-`, `@`.
    public static func isValidUserName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2E || byte == 0x5F || byte == 0x2D || byte == 0x40
        }
    }

    /// `user add NAME`.
    public func addUser(name: String, password: [UInt8]) throws(AdminError) {
        guard Self.isValidUserName(name) else { throw .invalidName }
        guard let hash = hasher.hash(password) else { throw .hashFailed }
        let now = clock.seconds()
        do {
            try pool.with { (db) throws(SQLError) in
                try transaction(db) { (db) throws(SQLError) in
                    if try !db.execute("SELECT id FROM users WHERE name = $1", [.text(name)]).isEmpty { throw SQLError("exists") }
                    try db.execute("INSERT INTO users (name, password_hash, created_at) VALUES ($1, $2, $3)", [.text(name), .text(hash), .int(now)])
                }
            }
        } catch {
            throw error.message == "exists" ? .userExists : .database(error.message)
        }
    }

    /// `user disable NAME`: refuses new sign-ins and revokes every device.
    public func disableUser(name: String) throws(AdminError) {
        let id = try userID(name)
        do {
            try pool.with { (db) throws(SQLError) in try db.execute("UPDATE users SET disabled = 1 WHERE id = $1", [.int(id)]) }
            try revokeAll(userID: id)
        } catch {
            throw .database(error.message)
        }
    }

    /// `user list`.
    public func listUsers() throws(AdminError) -> [UserSummary] {
        let now = clock.seconds()
        do {
            return try pool.with { (db) throws(SQLError) -> [UserSummary] in
                try db.execute(
                    """
                    SELECT u.name, u.disabled,
                      (SELECT COUNT(DISTINCT d.id) FROM devices d JOIN tokens t ON t.device_id = d.id
                       WHERE d.user_id = u.id AND d.revoked_at IS NULL AND t.expires_at > $1)
                    FROM users u ORDER BY u.name
                    """, [.int(now)]
                ).map { UserSummary(name: $0[0].text ?? "", disabled: ($0[1].int ?? 0) != 0, activeDevices: Int($0[2].int ?? 0)) }
            }
        } catch {
            throw .database(error.message)
        }
    }

    /// `devices NAME`.
    public func devices(ofUser name: String) throws(AdminError) -> [DeviceSummary] {
        let id = try userID(name)
        let now = clock.seconds()
        do {
            return try pool.with { (db) throws(SQLError) -> [DeviceSummary] in
                try db.execute(
                    """
                    SELECT d.id, d.name, d.created_at, d.last_used_at, d.revoked_at,
                      (SELECT MAX(t.expires_at) FROM tokens t WHERE t.device_id = d.id AND t.expires_at > $2)
                    FROM devices d WHERE d.user_id = $1 ORDER BY d.id
                    """, [.int(id), .int(now)]
                ).map { DeviceSummary(id: $0[0].int ?? 0, name: $0[1].text ?? "", createdAt: $0[2].int ?? 0, lastUsedAt: $0[3].int, revokedAt: $0[4].int, expiresAt: $0[5].int) }
            }
        } catch {
            throw .database(error.message)
        }
    }

    /// `revoke NAME [DEVICE]`: one device (by id) or all of the user's. Returns how many.
    public func revoke(userName: String, deviceID: Int64?) throws(AdminError) -> Int {
        let id = try userID(userName)
        do {
            if let deviceID {
                guard try revokeDevice(userID: id, deviceID: deviceID) else { throw AdminError.unknownDevice }
                return 1
            }
            return try revokeAll(userID: id)
        } catch let error as AdminError {
            throw error
        } catch let error as SQLError {
            throw .database(error.message)
        } catch {
            throw .database("\(error)")
        }
    }

    private func userID(_ name: String) throws(AdminError) -> Int64 {
        do {
            guard let id = try pool.with({ (db) throws(SQLError) -> Int64? in
                try db.execute("SELECT id FROM users WHERE name = $1", [.text(name)]).first?.first?.int
            }) else { throw AdminError.unknownUser }
            return id
        } catch let error as AdminError {
            throw error
        } catch let error as SQLError {
            throw .database(error.message)
        } catch {
            throw .database("\(error)")
        }
    }
}
