import CGio
import FoundationEssentials
import InklingAccount
import InklingCommandLine
import InklingCore
import InklingServerProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `inkling account`: signs this computer in to an Inkling Server (the command-line "app" until
/// the settings app exists). The password goes to the server once and is never stored; the
/// device token the server returns goes into the user's keyring (Secret Service), where only
/// this command and the `inkling-cloud` helper read it. Nothing here prints the token.
enum AccountCommand {
    static func run(_ arguments: Arguments) {
        AccountHTTP.globalInit()
        switch arguments.positional.first {
        case "login": login(arguments)
        case "status": status(arguments)
        case "logout": logout(arguments)
        default: arguments.usageError(tr("unknown account command"))
        }
    }

    // MARK: Which server

    /// `--server`, else the input method's `cloud-endpoint` setting; normalized.
    static func server(_ arguments: Arguments, required: Bool) -> String {
        let given = arguments.options["--server"]
        guard let raw = given ?? configuredEndpoint(), !raw.isEmpty else {
            arguments.usageError(
                required
                    ? tr("--server URL is required") : tr("no --server given and the cloud-endpoint setting is empty"))
        }
        switch AccountServer.normalized(raw) {
        case .success(let url): return url
        case .failure(let problem):
            if given != nil { arguments.usageError(problem.message) }
            fail(
                tr(
                    "the cloud-endpoint setting cannot be an Inkling Server: {problem}; pass --server URL",
                    ["problem": problem.message]))
        }
    }

    /// The `cloud-endpoint` setting, when the schema is installed.
    static func configuredEndpoint() -> String? {
        guard let source = g_settings_schema_source_get_default(),
            let schema = g_settings_schema_source_lookup(source, EngineSettingsSchema.id, 1)
        else { return nil }
        defer { g_settings_schema_unref(schema) }
        guard g_settings_schema_has_key(schema, "cloud-endpoint") != 0,
            let settings = g_settings_new_full(schema, nil, nil)
        else { return nil }
        defer { g_object_unref(settings) }
        guard let value = g_settings_get_string(settings, "cloud-endpoint") else { return nil }
        defer { g_free(value) }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    // MARK: Keyring

    static func storedCredential(server: String) -> DeviceCredential? {
        switch AccountKeyring.lookup(server: server) {
        case .found(let credential): return credential
        case .none: return nil
        case .unavailable(let message): fail(tr("cannot read the keyring: {problem}", ["problem": message]))
        }
    }

    // MARK: login

    static func login(_ arguments: Arguments) {
        let server = server(arguments, required: true)
        let user = arguments.options["--user"] ?? defaultUser()
        guard !user.isEmpty, user.utf8.count <= 256 else {
            arguments.usageError(tr("--user NAME is required (no login name found)"))
        }
        let device = arguments.options["--device"] ?? hostName()
        guard !device.isEmpty, device.unicodeScalars.count <= 64 else {
            arguments.usageError(tr("--device takes a name of 1 to 64 characters"))
        }
        // Before the password: a keyring that cannot store the token makes signing in pointless.
        let previous = storedCredential(server: server)

        let prompt = tr("Password for {user} at {server}:", ["user": user, "server": server]) + " "
        let sent: Result<AccountHTTP.Response, AccountServerProblem>? = SecretInput.withSecret(prompt: prompt) {
            password in
            guard !password.isEmpty else { fail(tr("no password given")) }
            let body = ServerJSON.encode(DeviceCreateRequest(username: user, password: password, deviceName: device))
            return AccountHTTP.request("POST", url: server + ServerAPI.devicesPath, body: body)
        }
        guard let sent else { fail(tr("no password given (standard input ended)")) }
        let response: AccountHTTP.Response
        switch sent {
        case .success(let answer): response = answer
        case .failure(let problem):
            fail(tr("cannot reach {server}: {problem}", ["server": server, "problem": problem.message]))
        }
        guard response.status == 201 || response.status == 200 else { fail(loginRefusal(response)) }
        guard let answer = ServerJSON.decode(DeviceTokenAnswer.self, from: response.body),
            DeviceCredential.isHeaderSafe(answer.token), !answer.token.isEmpty
        else {
            fail(
                tr(
                    "{server} did not answer like an Inkling Server (HTTP {status})",
                    ["server": server, "status": "\(response.status)"]))
        }
        let now = SystemWallClock().seconds()
        let credential = DeviceCredential(
            server: server, username: user, deviceID: answer.deviceID, deviceName: device, token: answer.token,
            expiresAt: answer.expiresAt, obtainedAt: now)
        if let problem = AccountKeyring.store(credential) {
            // A token nobody holds must not stay valid on the server.
            _ = AccountHTTP.request("DELETE", url: server + ServerAPI.currentDevicePath, bearer: credential.token)
            fail(
                tr(
                    "cannot store the device token in the keyring ({problem}); the server was told to forget it",
                    ["problem": "\(problem)"]))
        }
        // Running helpers waiting for a sign-in look at the keyring at their next check.
        if let marker = SignInMarker.path(environment: { getenv($0).map { String(cString: $0) } }) {
            SignInMarker.touch(path: marker, now: now)
        }
        if let previous, previous.token != credential.token {
            // Signed in again on the same server: the old device's token is no longer needed.
            _ = AccountHTTP.request(
                "DELETE", url: server + ServerAPI.currentDevicePath, bearer: previous.token, timeoutMilliseconds: 5000)
        }
        print(
            tr(
                "Signed in to {server} as {user} (device {device}, id {id}); the device token is in your keyring.",
                ["server": server, "user": user, "device": device, "id": "\(answer.deviceID)"]))
        // The setting as the helper reads it (trailing slashes removed).
        let configured = configuredEndpoint().flatMap { try? AccountServer.normalized($0).get() }
        if configured != server {
            print(tr("The cloud check uses this server once it is set and on:"))
            print("  inkling config set cloud-endpoint \(server)")
            print("  inkling config set cloud-check true")
        }
    }

    /// One sentence for a refused sign-in.
    static func loginRefusal(_ response: AccountHTTP.Response) -> String {
        let code = ServerJSON.decode(ErrorBody.self, from: response.body)?.error
        let wait = response.retryAfter.map { tr("; try again in {seconds} s", ["seconds": "\($0)"]) } ?? ""
        switch (response.status, code) {
        case (401, _): return tr("wrong user name or password")
        case (403, _): return tr("this account is disabled; ask the server's administrator")
        case (429, ServerErrorCode.tooManyDevices?):
            return tr(
                "this account has too many devices signed in; sign one out (inkling account logout on it, or ask the administrator)"
            )
        case (429, _): return tr("too many sign-in attempts{wait}", ["wait": wait])
        default: return tr("the server refused the sign-in (HTTP {status})", ["status": "\(response.status)"])
        }
    }

    static func defaultUser() -> String {
        if let name = getenv("USER"), name.pointee != 0 { return String(cString: name) }
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ""
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "computer" }
        let name = String(cString: buffer)
        return name.isEmpty ? "computer" : String(String.UnicodeScalarView(name.unicodeScalars.prefix(64)))
    }

    // MARK: status

    static func status(_ arguments: Arguments) {
        let server = server(arguments, required: false)
        guard let credential = storedCredential(server: server) else {
            print(tr("Not signed in to {server}.", ["server": server]))
            exit(1)
        }
        print(
            tr(
                "Signed in to {server} as {user} (device {device}, id {id}).",
                [
                    "server": server, "user": credential.username, "device": credential.deviceName,
                    "id": "\(credential.deviceID)",
                ]))
        let now = SystemWallClock().seconds()
        if credential.expiresAt <= now {
            print(
                tr(
                    "The device token expired {time}; sign in again: inkling account login --server {server}",
                    ["time": utcTime(credential.expiresAt), "server": server]))
        } else {
            print(
                tr(
                    "The device token expires {time} unless the cloud check renews it before.",
                    ["time": utcTime(credential.expiresAt)]))
        }
    }

    /// `2026-12-02 10:15 UTC`.
    static func utcTime(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "at \(seconds)" }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M UTC", &parts)
        return length > 0 ? String(cString: buffer) : "at \(seconds)"
    }

    // MARK: logout

    static func logout(_ arguments: Arguments) {
        let server = server(arguments, required: false)
        let everywhere = arguments.flags.contains("--everywhere")
        guard let credential = storedCredential(server: server) else {
            print(tr("Not signed in to {server}; nothing to do.", ["server": server]))
            if everywhere {
                fail(tr("without a device token here the other devices cannot be signed out; sign in first"))
            }
            return
        }
        let path = everywhere ? ServerAPI.devicesPath : ServerAPI.currentDevicePath
        let revoked = AccountHTTP.request("DELETE", url: server + path, bearer: credential.token)
        // The token leaves the keyring whatever the server said.
        if case .failure(let problem) = AccountKeyring.clear(server: server) {
            fail(tr("cannot delete the device token from the keyring: {problem}", ["problem": problem.message]))
        }
        switch revoked {
        case .success(let response) where response.status == 204 || response.status == 200:
            print(
                everywhere
                    ? tr(
                        "Signed out on every device of {user} at {server}; the token is deleted here.",
                        ["user": credential.username, "server": server])
                    : tr("Signed out of {server}; the device token is revoked and deleted.", ["server": server]))
        case .success(let response) where response.status == 401:
            print(tr("The server no longer accepted this device's token; it is deleted here."))
            if everywhere {
                fail(
                    tr(
                        "the other devices could not be signed out with a dead token; sign in again, then run inkling account logout --everywhere"
                    ))
            }
        case .success(let response):
            fail(
                tr(
                    "the server refused to sign out (HTTP {status}); the device token was deleted here only and stays valid on the server until it expires or an administrator revokes it",
                    ["status": "\(response.status)"]))
        case .failure(let problem):
            fail(
                tr(
                    "cannot reach {server} ({problem}); the device token was deleted here only and stays valid on the server until it expires or an administrator revokes it",
                    ["server": server, "problem": problem.message]))
        }
    }
}
