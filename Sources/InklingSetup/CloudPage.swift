import CGtk
import InklingCore
import InklingSetupModel

#if canImport(Glibc)
    import Glibc
#endif

/// `inkling account …` as the Cloud page's account service (the token goes to the keyring in
/// that command; the password reaches it on standard input).
final class CommandAccountService: AccountService {
    func status() -> AccountStatus {
        let result = InklingCommand.runAndWait(AccountForm.statusArguments)
        return AccountForm.status(exitStatus: result.status, output: result.stdout + result.stderr)
    }

    func signIn(server: String, username: String, password: String) -> AccountResult {
        let result = InklingCommand.runAndWait(AccountForm.arguments(signIn: server, username: username), input: password + "\n")
        return result.status == 0 ? .done(status()) : .failed(AccountForm.failure(output: result.stderr))
    }

    func signOut() -> AccountResult { simple(AccountForm.signOutArguments) }
    func signOutEverywhere() -> AccountResult { simple(AccountForm.signOutEverywhereArguments) }

    private func simple(_ arguments: [String]) -> AccountResult {
        let result = InklingCommand.runAndWait(arguments)
        return result.status == 0 ? .done(status()) : .failed(AccountForm.failure(output: result.stderr))
    }
}

/// Cloud check: off by default, what is sent and when, endpoint and model, and the sign-in to an
/// Inkling Server.
final class CloudPage {
    let app: SetupApp
    let widget: Widget
    let account: AccountService
    private let accountStatus: Widget
    private let server: Widget
    private let username: Widget
    private let password: Widget

    init(_ app: SetupApp, account: AccountService) {
        self.app = app
        self.account = account
        let settings = app.settings
        widget = page(title: "Cloud check", icon: "network-server-symbolic", name: "cloud")

        let check = group(title: "Cloud check")
        let statement = label("")
        name(statement, "What the cloud check sends")
        gtk_widget_set_margin_bottom(statement, 12)
        add(check, statement)
        add(check, TypingPage.switchRow(settings, key: "cloud-check", title: "Check finished sentences in the cloud", subtitle: "Confirms or retracts Inkling's flags and may add fixes with explanations"))
        let endpoint = Self.entryRow(settings, key: "cloud-endpoint", title: "Endpoint (HTTPS address)")
        add(check, endpoint)
        add(check, Self.entryRow(settings, key: "cloud-model", title: "Model (empty: the endpoint's default)"))
        let refreshStatement = { setLabel(statement, CloudStatement.text(enabled: settings.bool("cloud-check"), endpoint: settings.string("cloud-endpoint"))) }
        settings.watch("cloud-check", refreshStatement)
        settings.watch("cloud-endpoint", refreshStatement)
        add(page: widget, check)

        let signIn = group(title: "Inkling Server", description: "Instead of an endpoint of your own, sign in to an Inkling Server. The password is sent once to get a token for this device, which is kept in your keyring.")
        let statusRow = actionRow(title: "Account")
        accountStatus = statusRow
        add(signIn, statusRow)
        server = adw_entry_row_new()!
        adw_preferences_row_set_title(cast(server), "Server address")
        add(signIn, server)
        username = adw_entry_row_new()!
        adw_preferences_row_set_title(cast(username), "User name")
        add(signIn, username)
        password = adw_password_entry_row_new()!
        adw_preferences_row_set_title(cast(password), "Password")
        add(signIn, password)
        let buttons = actionRow(title: "")
        adw_action_row_add_suffix(cast(buttons), button("Sign out everywhere", accessibleName: "Sign out everywhere", style: "flat") { [weak self] in self?.apply(self?.account.signOutEverywhere()) })
        adw_action_row_add_suffix(cast(buttons), button("Sign out", accessibleName: "Sign out") { [weak self] in self?.apply(self?.account.signOut()) })
        adw_action_row_add_suffix(cast(buttons), button("Sign in", accessibleName: "Sign in", style: "suggested-action") { [weak self] in self?.signInClicked() })
        add(signIn, buttons)
        add(page: widget, signIn)
        show(account.status())
    }

    /// An entry row for a string setting: written when the user applies it (Enter or ✓).
    static func entryRow(_ settings: AppSettings, key: String, title: String) -> Widget {
        let row = adw_entry_row_new()!
        adw_preferences_row_set_title(cast(row), title)
        adw_entry_row_set_show_apply_button(cast(row), 1)
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
        let serverText = editableText(server), user = editableText(username), secret = editableText(password)
        if let problem = AccountForm.problem(server: serverText, username: user, password: secret) {
            app.toast(problem)
            return
        }
        apply(account.signIn(server: serverText, username: user, password: secret))
    }
}

/// About: version, licence, whether the engine runs in this session, where data lives.
final class AboutPage {
    let widget: Widget
    private let status: Widget

    init(_ app: SetupApp) {
        widget = page(title: "About", icon: "help-about-symbolic", name: "about")
        let about = group(title: "Inkling")
        status = actionRow(title: "Status")
        name(status, "Engine status")
        add(about, status)
        add(about, actionRow(title: "Version", subtitle: InklingVersion.current))
        add(about, actionRow(title: "Licence", subtitle: "GNU General Public License, version 3 or later"))
        add(page: widget, about)

        let data = group(title: "Where your data lives", description: "Nothing you type is stored anywhere else.")
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
