import CGtk
import FoundationEssentials
import InklingCore
import InklingSetupModel

#if canImport(Glibc)
    import Glibc
#endif

/// Languages: the packs the manifest lists, with download (progress bar, cancel), verify,
/// remove and "use". Every operation is the `inkling packs` command, run in the background.
final class LanguagesPage {
    let app: SetupApp
    let widget: Widget
    private let list: Widget
    private let message: Widget
    private let progressRow: Widget
    private let progressBar: Widget
    private var download: InklingCommand?
    private var rows: [PackRow] = []

    init(_ app: SetupApp) {
        self.app = app
        widget = page(title: tr("Languages"), icon: "preferences-desktop-locale-symbolic", name: "languages")

        let packs = group(
            title: tr("Language packs"),
            description: tr(
                "Inkling suggests words in the language in use. Downloaded packs are checked (size and SHA-256) before they are installed."
            ))
        list = made(gtk_list_box_new())
        gtk_widget_add_css_class(list, "boxed-list")
        gtk_list_box_set_selection_mode(cast(list), GTK_SELECTION_NONE)
        name(list, tr("Language packs"))
        add(packs, list)
        add(page: widget, packs)

        let status = group(title: tr("Status"))
        progressRow = actionRow(title: tr("Downloading"))
        progressBar = made(gtk_progress_bar_new())
        gtk_widget_set_valign(progressBar, GTK_ALIGN_CENTER)
        gtk_widget_set_hexpand(progressBar, 1)
        gtk_progress_bar_set_show_text(cast(progressBar), 1)
        name(progressBar, tr("Download progress"))
        adw_action_row_add_suffix(cast(progressRow), progressBar)
        setVisible(progressRow, false)
        add(status, progressRow)
        message = label("", dim: false)
        gtk_label_set_selectable(cast(message), 1)
        name(message, tr("Languages status"))
        add(status, message)
        add(page: widget, status)

        let refresh = button(
            tr("Check for new languages"), accessibleName: tr("Check for new languages"), style: "flat"
        ) { [weak self] in self?.update() }
        adw_preferences_group_set_header_suffix(cast(packs), refresh)

        // Cancel lives in the progress row (created after `self` is complete).
        let cancel = button(tr("Cancel"), accessibleName: tr("Cancel download")) { [weak self] in
            self?.download?.cancel()
        }
        adw_action_row_add_suffix(cast(progressRow), cancel)

        app.settings.watch("languages") { [weak self] in self?.render() }
        reload()
    }

    func say(_ text: String) { setLabel(message, text) }

    /// Runs `inkling packs list` and shows its rows.
    func reload() {
        InklingCommand.run(["packs", "list"]) { [weak self] status, stdout, stderr in
            guard let self else { return }
            self.rows = status == 0 ? PackRow.parse(listOutput: stdout) : []
            if status != 0 { self.say(PackMessage.sentence(forError: stderr, action: tr("Listing the languages"))) }
            if status == 0, self.rows.isEmpty {
                self.say(
                    tr(
                        "No list of languages is installed. Set INKLING_MANIFEST_URL or run “inkling packs update --manifest-url URL”, then check again."
                    ))
            }
            self.render()
        }
    }

    /// `inkling packs update`: the command takes the address from INKLING_MANIFEST_URL, else
    /// from the `pack-manifest-url` setting (where a release publishes its packs).
    func update() {
        let url = getenv("INKLING_MANIFEST_URL").map { String(cString: $0) } ?? app.settings.string("pack-manifest-url")
        guard !url.isEmpty else {
            reload()
            return
        }
        say(tr("Checking for new languages…"))
        InklingCommand.run(["packs", "update"]) { [weak self] status, _, stderr in
            guard let self else { return }
            self.say(
                status == 0
                    ? tr("The list of languages is up to date.")
                    : PackMessage.sentence(forError: stderr, action: tr("Checking for new languages")))
            self.reload()
        }
    }

    private func render() {
        removeAllRows(list)
        let active = app.settings.strings("languages").first ?? "en"
        for pack in rows {
            let row = actionRow(
                title: "\(pack.displayName) (\(pack.language))",
                subtitle: pack.subtitle + (pack.language == active ? " · " + tr("in use") : ""))
            name(row, pack.displayName)
            if pack.canDownload {
                adw_action_row_add_suffix(
                    cast(row),
                    button(
                        tr("Download"), accessibleName: tr("Download {language}", ["language": pack.displayName]),
                        style: "suggested-action"
                    ) { [weak self] in self?.install(pack) })
            }
            if pack.canRemove {
                adw_action_row_add_suffix(
                    cast(row),
                    button(tr("Verify"), accessibleName: tr("Verify {language}", ["language": pack.displayName])) {
                        [weak self] in self?.verify(pack)
                    })
                adw_action_row_add_suffix(
                    cast(row),
                    button(
                        tr("Remove"), accessibleName: tr("Remove {language}", ["language": pack.displayName]),
                        style: "destructive-action"
                    ) { [weak self] in self?.remove(pack) })
            }
            if pack.canChoose, pack.language != active {
                adw_action_row_add_suffix(
                    cast(row),
                    button(tr("Use"), accessibleName: tr("Use {language}", ["language": pack.displayName])) {
                        [weak self] in self?.use(pack)
                    })
            }
            gtk_list_box_append(cast(list), row)
        }
    }

    func install(_ pack: PackRow) {
        guard download == nil else { return }
        say("")
        adw_preferences_row_set_title(cast(progressRow), tr("Downloading {language}", ["language": pack.displayName]))
        gtk_progress_bar_set_fraction(cast(progressBar), 0)
        setVisible(progressRow, true)
        let expected = pack.sizeKiB * 1024
        download = InklingCommand.run(["packs", "install", pack.language]) { [weak self] status, _, stderr in
            guard let self else { return }
            self.download = nil
            setVisible(self.progressRow, false)
            if status == 0 {
                gtk_progress_bar_set_fraction(cast(self.progressBar), 1)
                self.say("\(pack.displayName) was downloaded; checking it…")
                self.verify(pack, after: tr("{language} is installed", ["language": pack.displayName]))
            } else if status == 128 + SIGTERM {
                self.say(
                    tr(
                        "The download of {language} was cancelled; nothing was installed.",
                        ["language": pack.displayName]))
            } else {
                self.say(
                    PackMessage.sentence(
                        forError: stderr, action: tr("Downloading {language}", ["language": pack.displayName])))
            }
            self.reload()
        }
        guard let pid = download?.processID else { return }
        let folder = UserPaths.packFolder()
        every(milliseconds: 100) { [weak self] in
            guard let self, self.download != nil else { return false }
            var written = 0
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            where PackProgress.isPartial(name, language: pack.language, processID: pid) {
                var info = stat()
                if stat(folder + "/" + name, &info) == 0 { written = Int(info.st_size) }
            }
            gtk_progress_bar_set_fraction(
                cast(self.progressBar), PackProgress.fraction(written: written, expected: expected))
            return true
        }
    }

    func verify(_ pack: PackRow, after prefix: String? = nil) {
        InklingCommand.run(["packs", "verify", pack.language]) { [weak self] status, stdout, stderr in
            guard let self else { return }
            if status == 0 {
                self.say(
                    tr(
                        "{what} and verified: the file matches its checksum.",
                        ["what": prefix ?? pack.displayName]))
            } else {
                self.say(
                    PackMessage.sentence(
                        forError: stdout + stderr, action: tr("Verifying {language}", ["language": pack.displayName])))
            }
        }
    }

    func remove(_ pack: PackRow) {
        InklingCommand.run(["packs", "remove", pack.language]) { [weak self] status, _, stderr in
            guard let self else { return }
            self.say(
                status == 0
                    ? tr("{language} was removed.", ["language": pack.displayName])
                    : PackMessage.sentence(
                        forError: stderr, action: tr("Removing {language}", ["language": pack.displayName])))
            self.reload()
        }
    }

    func use(_ pack: PackRow) {
        app.settings.set(
            "languages", strings: PropertyMenu.languages(app.settings.strings("languages"), choosing: pack.language))
        say(tr("Inkling now suggests {language} words.", ["language": pack.displayName]))
    }
}
