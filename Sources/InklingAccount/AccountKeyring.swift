import CSecret
import Glibc

/// The device tokens in the user's keyring (libsecret, schema
/// `org.freedesktop.ibus.engine.inkling.account`, attribute `server`).
public enum AccountKeyring {
    /// What a lookup found.
    public enum Lookup: Equatable, Sendable {
        case found(DeviceCredential)
        case none
        /// The keyring could not be asked (no session bus, no Secret Service, locked); the
        /// message is the keyring's own and holds no secret.
        case unavailable(String)
    }

    /// The record stored for `server` (a normalized URL).
    public static func lookup(server: String) -> Lookup {
        var failure: UnsafeMutablePointer<gchar>? = nil
        guard let secret = inkling_account_lookup(server, &failure) else {
            if let failure {
                defer { g_free(failure) }
                return .unavailable(String(cString: failure))
            }
            return .none
        }
        defer { inkling_secret_free(secret) }
        guard let record = DeviceCredential.decode(String(cString: secret)), record.server == server else { return .none }
        return .found(record)
    }

    /// Stores (or replaces) the record for its server; nil on success, else the keyring's message.
    public static func store(_ credential: DeviceCredential) -> String? {
        var failure: UnsafeMutablePointer<gchar>? = nil
        let label = "Inkling Server device token (\(credential.server))"
        let status = inkling_account_store(credential.server, label, credential.encoded, &failure)
        if status == 0 { return nil }
        defer { if let failure { g_free(failure) } }
        return failure.map { String(cString: $0) } ?? "the keyring refused to store it"
    }

    /// Deletes the record for `server`: true when one was there, false when none; the keyring's
    /// message when it could not be asked.
    public static func clear(server: String) -> Result<Bool, AccountServerProblem> {
        var failure: UnsafeMutablePointer<gchar>? = nil
        let status = inkling_account_clear(server, &failure)
        if status >= 0 { return .success(status == 1) }
        defer { if let failure { g_free(failure) } }
        return .failure(AccountServerProblem(failure.map { String(cString: $0) } ?? "the keyring could not be asked"))
    }

    /// Whether a session bus can be reached without starting one (libsecret would otherwise try
    /// to autolaunch a bus, which is slow and pointless).
    public static func sessionBusAvailable(environment: (String) -> String?) -> Bool {
        if let address = environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return true }
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            var info = stat()
            return stat(runtime + "/bus", &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
        }
        return false
    }
}
