// inkling-setup: Inkling's settings app (GNOME Settings → Keyboard → Inkling → Preferences).
//
//   inkling-setup [--page typing|languages|learned|dictation|cloud|about]
//
// GTK 4 and libadwaita through CGtk; every decision is in InklingSetupModel.
import CGtk
import InklingCommandLine
import InklingCore
import InklingGettext
import InklingSetupModel

#if canImport(Glibc)
    import Glibc
#endif

/// The window and what the pages share.
final class SetupApp {
    static let applicationID = "org.freedesktop.ibus.engine.inkling.Setup"
    let settings = AppSettings()
    var window: Widget?
    var pages: [AnyObject] = []
    var firstPage: String?

    func build(_ application: OpaquePointer) {
        if let window {
            gtk_window_present(cast(window))
            return
        }
        let window = made(adw_preferences_window_new())
        self.window = window
        gtk_window_set_application(cast(window), cast(application))
        gtk_window_set_title(cast(window), tr("Inkling Preferences"))
        gtk_window_set_default_size(cast(window), 720, 760)
        adw_preferences_window_set_search_enabled(cast(window), 0)
        if !settings.available {
            let warning = page(title: tr("Settings"), icon: "dialog-warning-symbolic", name: "missing")
            add(
                page: warning,
                group(
                    title: tr("Inkling's settings are not installed"),
                    description: tr(
                        "The GSettings schema org.freedesktop.ibus.engine.inkling was not found. Install the ibus-inkling package, or set GSETTINGS_SCHEMA_DIR to a folder where it is compiled."
                    )))
            adw_preferences_window_add(cast(window), cast(warning))
        }
        let languages = LanguagesPage(self)
        let learned = LearnedPage(self)
        let dictation = DictationPage(self)
        let cloud = CloudPage(self, account: CommandAccountService())
        let about = AboutPage(self)
        pages = [languages, learned, dictation, cloud, about]
        for page in [
            TypingPage.make(self), languages.widget, learned.widget, dictation.widget, cloud.widget, about.widget,
        ] {
            adw_preferences_window_add(cast(window), cast(page))
        }
        if let firstPage { adw_preferences_window_set_visible_page_name(cast(window), firstPage) }
        gtk_window_present(cast(window))
    }

    /// A short message at the bottom of the window.
    func toast(_ text: String) {
        guard let window else { return }
        adw_preferences_window_add_toast(cast(window), adw_toast_new(text))
    }
}

Gettext.start()
let setup = SetupApp()
let commandLine = CommandSpec(
    ["inkling-setup"], synopsis: "[--page typing|languages|learned|dictation|cloud|about]",
    summary: "Inkling's settings: typing, languages, learned words, dictation, cloud check.",
    options: [OptionSpec("--page", value: "PAGE", help: "open on this page")])
let parsed = Terminal.parse(
    Array(CommandLine.arguments.dropFirst()), with: commandLine, version: InklingVersion.current)
setup.firstPage = parsed.value("--page")

let application = made(adw_application_new(SetupApp.applicationID, G_APPLICATION_DEFAULT_FLAGS))
on(raw(application), "activate") { setup.build(opaque(application)) }
// GApplication sees only the program name: the options were read above.
var programName = strdup(CommandLine.arguments[0])
var argv: [UnsafeMutablePointer<CChar>?] = [programName, nil]
let status = g_application_run(cast(application), 1, &argv)
free(programName)
exit(status)
