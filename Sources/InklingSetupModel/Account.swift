/// Sign-in to an Inkling Server for the cloud check: the interface the Cloud page calls.
///
/// The page knows only this protocol. `CommandAccountService` (in the app) runs
/// `inkling account …`; tests use a fake. The device token never passes through the app: the
/// command stores it in the keyring.
public protocol AccountService: AnyObject {
    /// Who is signed in, or why not.
    func status() -> AccountStatus
    /// Signs in; the password is given to the service on standard input, never on a command line.
    func signIn(server: String, username: String, password: String) -> AccountResult
    func signOut() -> AccountResult
    /// Revokes every device token of the account (all devices).
    func signOutEverywhere() -> AccountResult
}

public enum AccountStatus: Equatable, Sendable {
    case signedOut
    case signedIn(server: String, username: String)
    /// This build has no account support (the `inkling` command has no `account` command yet).
    case unavailable(String)

    public var sentence: String {
        switch self {
        case .signedOut: return "Not signed in."
        case .signedIn(let server, let username): return "Signed in to \(server) as \(username)."
        case .unavailable(let why): return why
        }
    }
}

public enum AccountResult: Equatable, Sendable {
    case done(AccountStatus)
    case failed(String)
}

/// Decisions of the sign-in group: what is checked before anything is sent, and how the
/// command's answers read.
public enum AccountForm {
    /// A problem with the form, or nil when it can be sent.
    public static func problem(server: String, username: String, password: String) -> String? {
        let server = server.trimmed()
        if server.isEmpty { return "Enter the address of the Inkling Server." }
        if !(server.hasPrefix("https://") || server.hasPrefix("http://localhost") || server.hasPrefix("http://127.")) {
            return "The server address must start with https:// (the password is sent to it)."
        }
        if username.trimmed().isEmpty { return "Enter your user name." }
        if password.isEmpty { return "Enter your password." }
        return nil
    }

    /// The arguments of `inkling account …` for each action (the password goes on stdin).
    public static func arguments(signIn server: String, username: String) -> [String] {
        ["account", "login", "--server", server.trimmed(), "--user", username.trimmed(), "--password-stdin"]
    }
    public static let statusArguments = ["account", "status"]
    public static let signOutArguments = ["account", "logout"]
    public static let signOutEverywhereArguments = ["account", "logout", "--everywhere"]

    /// The status from `inkling account status`'s exit status and output: `signed in to SERVER
    /// as USER` or `not signed in`; exit status 2 with "unknown" means the command does not exist.
    public static func status(exitStatus: Int32, output: String) -> AccountStatus {
        let text = output.trimmed()
        if exitStatus == 2, text.lowercased().contains("unknown") || text.lowercased().contains("usage") {
            return .unavailable("Sign-in needs a newer version of the inkling command.")
        }
        guard exitStatus == 0 else { return .signedOut }
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            if words.count >= 6, words[0].lowercased() == "signed", words[1] == "in", words[2] == "to", let asIndex = words.lastIndex(of: "as"), asIndex + 1 < words.count {
                return .signedIn(server: words[3..<asIndex].joined(separator: " "), username: words[(asIndex + 1)...].joined(separator: " "))
            }
        }
        return .signedOut
    }

    /// A failed action's sentence from the command's error output.
    public static func failure(output: String) -> String {
        let text = output.lowercased()
        if text.contains("401") || text.contains("wrong password") || text.contains("invalid credentials") {
            return "The user name or password is wrong."
        }
        if text.contains("couldn't connect") || text.contains("could not resolve") || text.contains("couldn't resolve") || text.contains("unreachable") {
            return "The server could not be reached. Check its address and the network connection."
        }
        if text.contains("keyring") || text.contains("secret service") {
            return "The sign-in worked but the token could not be stored: no keyring is running in this session."
        }
        let line = output.split(separator: "\n").last { !$0.isEmpty }.map(String.init) ?? "no message"
        return line.hasPrefix("inkling: ") ? String(line.dropFirst(9)) : line
    }
}

/// The Cloud check page's plain statement of what leaves the machine.
public enum CloudStatement {
    public static func text(enabled: Bool, endpoint: String) -> String {
        let target = endpoint.isEmpty ? "the endpoint below (none is set, so nothing can be sent)" : endpoint
        let when = enabled ? "Now on:" : "Off (the default): nothing you type leaves this computer. When on:"
        return "\(when) after you finish a sentence, that one sentence, and nothing else, is sent over HTTPS to \(target), with the language and the words Inkling flagged in it. Never sent: passwords, PINs, fields marked private, anything while off-the-record is on, and your learned words."
    }
}
