/// What the engine shows when the cloud helper's account mode reports on the device token.
///
/// The helper (talking to an Inkling Server) sends `status` messages: `sign-in-required` when
/// the server refused the token (signed out, revoked, expired), `signed-in` when a new token
/// turned up. The engine shows the notice once — not on every later check, and not again when
/// a restarted helper finds the same refused token — until a `signed-in` ends the episode.
/// Process-wide: the glue keeps one for all sessions.
public struct CloudAccountNotice: Sendable, Equatable {
    /// The `status` values of the pipe protocol.
    public enum Status: String, Sendable {
        case signInRequired = "sign-in-required"
        case signedIn = "signed-in"
    }

    /// The auxiliary text shown once.
    public static let text = "\u{2601} cloud check paused: sign in again (inkling account login)"

    private var shown = false

    public init() {}

    /// A `status` message from the helper: the notice to show now, if any.
    public mutating func received(_ reply: CloudReply) -> String? {
        guard reply.type == "status", let raw = reply.status, let status = Status(rawValue: raw) else { return nil }
        switch status {
        case .signInRequired:
            if shown { return nil }
            shown = true
            return Self.text
        case .signedIn:
            shown = false
            return nil
        }
    }
}
