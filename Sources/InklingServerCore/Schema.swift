/// The database schema, the same for SQLite and PostgreSQL (`SQLDialect` fills in the identity
/// column). Migrations are numbered and only ever appended.
///
/// Nothing typed is stored: `usage` holds counts of checks and characters, never text; tokens
/// are stored only as their SHA-256; login throttling keys are SHA-256 of the name or address.
public enum Schema {
    /// The version `migrate` brings a database to.
    public static var latestVersion: Int { migrations(.sqlite).count }

    static func migrations(_ dialect: SQLDialect) -> [[String]] {
        [
            [
                """
                CREATE TABLE users (
                    id \(dialect.identityColumn),
                    name TEXT NOT NULL UNIQUE,
                    password_hash TEXT NOT NULL,
                    disabled INTEGER NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE devices (
                    id \(dialect.identityColumn),
                    user_id BIGINT NOT NULL REFERENCES users(id),
                    name TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT,
                    revoked_at BIGINT)
                """,
                "CREATE INDEX devices_user ON devices(user_id)",
                """
                CREATE TABLE tokens (
                    hash TEXT PRIMARY KEY,
                    device_id BIGINT NOT NULL REFERENCES devices(id),
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    replaced_until BIGINT)
                """,
                "CREATE INDEX tokens_device ON tokens(device_id)",
                """
                CREATE TABLE usage (
                    user_id BIGINT NOT NULL REFERENCES users(id),
                    period TEXT NOT NULL,
                    starts_at BIGINT NOT NULL,
                    checks BIGINT NOT NULL,
                    characters BIGINT NOT NULL,
                    PRIMARY KEY (user_id, period, starts_at))
                """,
                """
                CREATE TABLE login_failures (
                    key TEXT NOT NULL,
                    starts_at BIGINT NOT NULL,
                    failures BIGINT NOT NULL,
                    PRIMARY KEY (key, starts_at))
                """,
            ]
        ]
    }
}
