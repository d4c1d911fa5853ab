import InklingCore

/// Sign-in to an Inkling Server for the cloud check: the interface the Cloud page calls.
///
/// The page knows only this protocol. `CommandAccountService` (in the app) runs
/// `inkling account …`; tests use a fake. The device token never passes through the app: the
/// command stores it in the keyring.
public protocol AccountService: AnyObject {
    /// Who is signed in at `server`, or why not.
    func status(server: String) -> AccountStatus
    /// Signs in; the password is given to the command on standard input, never on a command line.
    func signIn(server: String, username: String, password: String) -> AccountResult
    func signOut(server: String) -> AccountResult
    /// Revokes every device token of the account (all devices).
    func signOutEverywhere(server: String) -> AccountResult
}

public enum AccountStatus: Equatable, Sendable {
    case signedOut
    case signedIn(server: String, username: String)
    /// This build has no account support (the `inkling` command has no `account` command).
    case unavailable(String)

    public var sentence: String {
        switch self {
        case .signedOut: return tr("Not signed in.")
        case .signedIn(let server, let username):
            return tr("Signed in to {server} as {user}.", ["server": server, "user": username])
        case .unavailable(let why): return why
        }
    }
}

public enum AccountResult: Equatable, Sendable {
    case done(AccountStatus)
    case failed(String)
}

/// Decisions of the sign-in group: what is checked before anything is sent, the arguments of
/// `inkling account …`, and how its answers read.
public enum AccountForm {
    /// A problem with the form, or nil when it can be sent.
    public static func problem(server: String, username: String, password: String) -> String? {
        let server = server.trimmed()
        if server.isEmpty { return tr("Enter the address of the Inkling Server.") }
        if !(server.hasPrefix("https://") || server.hasPrefix("http://localhost") || server.hasPrefix("http://127.")) {
            return tr("The server address must start with https:// (the password is sent to it).")
        }
        if username.trimmed().isEmpty { return tr("Enter your user name.") }
        if password.isEmpty { return tr("Enter your password.") }
        return nil
    }

    /// The server the group acts on: the address typed, else the cloud-endpoint setting (where
    /// a signed-in server is kept, and where `inkling account` looks without `--server`).
    public static func server(typed: String, endpoint: String) -> String {
        let typed = typed.trimmed()
        return typed.isEmpty ? endpoint.trimmed() : typed
    }

    /// `inkling account login`: the password goes on standard input (its first line).
    public static func arguments(signIn server: String, username: String) -> [String] {
        ["account", "login", "--server", server.trimmed(), "--user", username.trimmed()]
    }
    public static func statusArguments(server: String) -> [String] {
        ["account", "status", "--server", server.trimmed()]
    }
    public static func signOutArguments(server: String, everywhere: Bool) -> [String] {
        ["account", "logout", "--server", server.trimmed()] + (everywhere ? ["--everywhere"] : [])
    }

    /// The status from `inkling account status`: exit 0 with `Signed in to SERVER as USER (…).`,
    /// exit 1 `Not signed in to SERVER.`; exit 2 naming an unknown command: no account support.
    public static func status(exitStatus: Int32, output: String) -> AccountStatus {
        let text = output.trimmed()
        if exitStatus == 2, text.lowercased().contains("unknown command") {
            return .unavailable(tr("Sign-in needs a newer version of the inkling command."))
        }
        guard exitStatus == 0 else { return .signedOut }
        for line in text.split(separator: "\n") where line.lowercased().hasPrefix("signed in to ") {
            let rest = line.dropFirst("signed in to ".count)
            guard let asRange = rest.firstRange(of: " as ") else { continue }
            let server = String(rest[..<asRange.lowerBound])
            var user = rest[asRange.upperBound...]
            if let detail = user.firstRange(of: " (") { user = user[..<detail.lowerBound] }
            if user.hasSuffix(".") { user = user.dropLast() }
            return .signedIn(server: server, username: String(user))
        }
        return .signedOut
    }

    /// A failed action's sentence from the command's error output.
    public static func failure(output: String) -> String {
        let text = output.lowercased()
        if text.contains("401") || text.contains("wrong user name or password") || text.contains("wrong password") {
            return tr("The user name or password is wrong.")
        }
        if text.contains("couldn't connect") || text.contains("could not resolve") || text.contains("couldn't resolve")
            || text.contains("unreachable")
            || text.contains("cannot reach") || text.contains("could not be reached")
        {
            return tr("The server could not be reached. Check its address and the network connection.")
        }
        if text.contains("keyring") || text.contains("secret service") {
            return tr(
                "No keyring is available in this session to keep the sign-in. Unlock or start your keyring, then try again."
            )
        }
        let line = output.split(separator: "\n").last { !$0.isEmpty }.map(String.init) ?? "no message"
        return line.hasPrefix("inkling: ") ? String(line.dropFirst(9)) : line
    }
}

/// The Cloud check page's plain statement of what leaves the machine.
public enum CloudStatement {
    public static func text(enabled: Bool, endpoint: String) -> String {
        let target = endpoint.isEmpty ? tr("the endpoint below (none is set, so nothing can be sent)") : endpoint
        let when = enabled ? tr("Now on:") : tr("Off (the default): nothing you type leaves this computer. When on:")
        return tr(
            "{when} after you finish a sentence, that one sentence, and nothing else, is sent over HTTPS to {target}, with the language and the words Inkling flagged in it. Never sent: passwords, PINs, fields marked private, anything while off-the-record is on, and your learned words.",
            ["when": when, "target": target])
    }
}
