import CGtk
import InklingCore
import InklingSetupModel

#if canImport(Glibc)
    import Glibc
#endif

/// `inkling account …` as the Cloud page's account service (the token goes to the keyring in
/// that command; the password reaches it on standard input).
final class CommandAccountService: AccountService {
    func status(server: String) -> AccountStatus {
        guard !server.isEmpty else { return .signedOut }
        let result = InklingCommand.runAndWait(AccountForm.statusArguments(server: server))
        return AccountForm.status(exitStatus: result.status, output: result.stdout + result.stderr)
    }

    func signIn(server: String, username: String, password: String) -> AccountResult {
        let result = InklingCommand.runAndWait(
            AccountForm.arguments(signIn: server, username: username), input: password + "\n")
        return result.status == 0 ? .done(status(server: server)) : .failed(AccountForm.failure(output: result.stderr))
    }

    func signOut(server: String) -> AccountResult { signOut(server: server, everywhere: false) }
    func signOutEverywhere(server: String) -> AccountResult { signOut(server: server, everywhere: true) }

    private func signOut(server: String, everywhere: Bool) -> AccountResult {
        let result = InklingCommand.runAndWait(AccountForm.signOutArguments(server: server, everywhere: everywhere))
        return result.status == 0 ? .done(status(server: server)) : .failed(AccountForm.failure(output: result.stderr))
    }
}

/// Cloud check: off by default, what is sent and when, endpoint and model, and the sign-in to an
/// Inkling Server.
final class CloudPage {
    let app: SetupApp
    let widget: Widget
    let account: AccountService
    private let accountStatus: Widget
    private let lastCheck: Widget
    private let server: Widget
    private let username: Widget
    private let password: Widget

    init(_ app: SetupApp, account: AccountService) {
        self.app = app
        self.account = account
        let settings = app.settings
        widget = page(title: tr("Cloud check"), icon: "network-server-symbolic", name: "cloud")

        // The group's description states what is sent and when (above the switch).
        let check = group(title: tr("Cloud check"))
        add(
            check,
            TypingPage.switchRow(
                settings, key: "cloud-check", title: tr("Check finished sentences in the cloud"),
                subtitle: tr("Confirms or retracts Inkling's flags and may add fixes with explanations")))
        let endpoint = Self.entryRow(settings, key: "cloud-endpoint", title: tr("Endpoint (HTTPS address)"))
        add(check, endpoint)
        add(check, Self.entryRow(settings, key: "cloud-model", title: tr("Model (empty: the endpoint's default)")))
        let refreshStatement = {
            adw_preferences_group_set_description(
                cast(check),
                CloudStatement.text(enabled: settings.bool("cloud-check"), endpoint: settings.string("cloud-endpoint")))
        }
        settings.watch("cloud-check", refreshStatement)
        settings.watch("cloud-endpoint", refreshStatement)
        // What the helper's last check came to (its status file, `CloudStatus`), re-read every 2 s.
        lastCheck = actionRow(title: tr("Last check"))
        name(lastCheck, tr("Status of the last check"))
        add(check, lastCheck)
        add(page: widget, check)

        let signIn = group(
            title: tr("Inkling Server"),
            description: tr(
                "Instead of an endpoint of your own, sign in to an Inkling Server. The password is sent once to get a token for this device, which is kept in your keyring."
            ))
        let statusRow = actionRow(title: tr("Account"))
        accountStatus = statusRow
        add(signIn, statusRow)
        server = made(adw_entry_row_new())
        adw_preferences_row_set_title(cast(server), tr("Server address"))
        add(signIn, server)
        username = made(adw_entry_row_new())
        adw_preferences_row_set_title(cast(username), tr("User name"))
        add(signIn, username)
        password = made(adw_password_entry_row_new())
        nameIconButtons(in: password, tr("Show the password"))
        adw_preferences_row_set_title(cast(password), tr("Password"))
        add(signIn, password)
        let buttons = actionRow(title: "")
        adw_action_row_add_suffix(
            cast(buttons),
            button(tr("Sign out everywhere"), accessibleName: tr("Sign out everywhere"), style: "flat") { [weak self] in
                guard let self else { return }
                self.apply(self.account.signOutEverywhere(server: self.currentServer))
            })
        adw_action_row_add_suffix(
            cast(buttons),
            button(tr("Sign out"), accessibleName: tr("Sign out")) { [weak self] in
                guard let self else { return }
                self.apply(self.account.signOut(server: self.currentServer))
            })
        adw_action_row_add_suffix(
            cast(buttons),
            button(tr("Sign in"), accessibleName: tr("Sign in"), style: "suggested-action") { [weak self] in
                self?.signInClicked()
            })
        add(signIn, buttons)
        add(page: widget, signIn)
        show(account.status(server: currentServer))
        refreshLastCheck()
        every(milliseconds: 2000) { [weak self] in
            self?.refreshLastCheck()
            return self != nil
        }
    }

    func refreshLastCheck() {
        adw_action_row_set_subtitle(cast(lastCheck), CloudStatusProbe.report().sentence)
    }

    /// The server typed in the group, else the cloud-endpoint setting.
    var currentServer: String {
        AccountForm.server(typed: editableText(server), endpoint: app.settings.string("cloud-endpoint"))
    }

    /// An entry row for a string setting: written when the user applies it (Enter or ✓).
    static func entryRow(_ settings: AppSettings, key: String, title: String) -> Widget {
        let row = made(adw_entry_row_new())
        adw_preferences_row_set_title(cast(row), title)
        adw_entry_row_set_show_apply_button(cast(row), 1)
        // libadwaita's ✓ button has only an icon: a screen reader would say "GtkImage".
        nameIconButtons(in: row, tr("Apply: {setting}", ["setting": title]))
        settings.watch(key) { setEditableText(row, settings.string(key)) }
        on(raw(row), "apply") { settings.set(key, string: editableText(row)) }
        return row
    }

    private func show(_ status: AccountStatus) {
        adw_action_row_set_subtitle(cast(accountStatus), status.sentence)
    }

    private func apply(_ result: AccountResult?) {
        switch result {
        case .done(let status)?:
            show(status)
            setEditableText(password, "")
        case .failed(let why)?: app.toast(why)
        case nil: break
        }
    }

    private func signInClicked() {
        let serverText = editableText(server)
        let user = editableText(username)
        let secret = editableText(password)
        if let problem = AccountForm.problem(server: serverText, username: user, password: secret) {
            app.toast(problem)
            return
        }
        let result = account.signIn(server: serverText, username: user, password: secret)
        // Signed in: the cloud check's endpoint is that server (inkling-cloud then uses the token).
        if case .done(.signedIn) = result {
            app.settings.set("cloud-endpoint", string: AccountForm.server(typed: serverText, endpoint: ""))
        }
        apply(result)
    }
}

/// About: version, licence, whether the engine runs in this session, where data lives.
final class AboutPage {
    let widget: Widget
    private let status: Widget

    init(_ app: SetupApp) {
        widget = page(title: tr("About"), icon: "help-about-symbolic", name: "about")
        let about = group(title: tr("Inkling"))
        status = actionRow(title: tr("Status"))
        name(status, tr("Engine status"))
        add(about, status)
        add(about, actionRow(title: tr("Version"), subtitle: InklingVersion.current))
        add(about, actionRow(title: tr("Licence"), subtitle: tr("GNU General Public License, version 3 or later")))
        add(page: widget, about)

        let data = group(
            title: tr("Where your data lives"), description: tr("Nothing you type is stored anywhere else."))
        for (title, path) in DataLocations.rows() {
            let row = actionRow(title: title, subtitle: path)
            add(data, row)
        }
        add(page: widget, data)
        refresh()
        every(milliseconds: 2000) { [weak self] in
            self?.refresh()
            return self != nil
        }
    }

    func refresh() {
        adw_action_row_set_subtitle(cast(status), HeartbeatProbe.status().sentence)
    }
}
