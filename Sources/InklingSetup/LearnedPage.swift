import CGtk
import FoundationEssentials
import InklingCore
import InklingSetupModel
import InklingStore

#if canImport(Glibc)
    import Glibc
#endif

/// Learned words: search, forget one, export/import, wipe, off-the-record. The list is read
/// from the user store (InklingStore, as `inkling learned list` reads it); changes are made by
/// the `inkling learned` commands, so the engine's writer sees them as from any other process.
final class LearnedPage {
    let app: SetupApp
    let widget: Widget
    private let search: Widget
    private let list: Widget
    private let summary: Widget
    private var all: [LearnedWordRow] = []

    init(_ app: SetupApp) {
        self.app = app
        widget = page(title: tr("Learned words"), icon: "accessories-dictionary-symbolic", name: "learned")

        let privacy = group(title: tr("Learning"))
        add(
            privacy,
            TypingPage.switchRow(
                app.settings, key: "off-the-record", title: tr("Off the record"),
                subtitle: tr("Learn nothing and skip the cloud check until this is off again; suggestions still work")))
        add(page: widget, privacy)

        let words = group(title: tr("Words Inkling learned from your typing"))
        search = made(gtk_search_entry_new())
        name(search, tr("Search learned words"))
        gtk_widget_set_margin_bottom(search, 6)
        add(words, search)
        summary = label("", dim: true)
        gtk_widget_set_margin_bottom(summary, 6)
        name(summary, tr("Learned words summary"))
        add(words, summary)
        list = made(gtk_list_box_new())
        gtk_widget_add_css_class(list, "boxed-list")
        gtk_list_box_set_selection_mode(cast(list), GTK_SELECTION_NONE)
        name(list, tr("Learned words"))
        add(words, list)
        add(page: widget, words)

        let manage = group(title: tr("Your data"))
        let exportRow = actionRow(
            title: tr("Export"), subtitle: tr("Save every learned word to a file (kept private, mode 0600)"))
        adw_action_row_add_suffix(
            cast(exportRow),
            button(tr("Export…"), accessibleName: tr("Export learned words")) { [weak self] in self?.choose(save: true)
            })
        add(manage, exportRow)
        let importRow = actionRow(title: tr("Import"), subtitle: tr("Add the words of an exported file to these"))
        adw_action_row_add_suffix(
            cast(importRow),
            button(tr("Import…"), accessibleName: tr("Import learned words")) { [weak self] in self?.choose(save: false)
            })
        add(manage, importRow)
        let wipeRow = actionRow(
            title: tr("Forget everything"), subtitle: tr("Remove every learned word; this cannot be undone"))
        adw_action_row_add_suffix(
            cast(wipeRow),
            button(tr("Forget all…"), accessibleName: tr("Forget all learned words"), style: "destructive-action") {
                [weak self] in self?.confirmWipe()
            })
        add(manage, wipeRow)
        add(page: widget, manage)

        on(raw(search), "search-changed") { [weak self] in self?.render() }
        reload()
    }

    /// Reads the store again (never creating one: a store appears once something was learned).
    func reload() {
        let path = UserStore.defaultPath()
        all = []
        if FileManager.default.fileExists(atPath: path) {
            do {
                let store = try UserStore.open(path: path, recoverCorrupt: false)
                all = try store.words(limit: 100_000).map {
                    LearnedWordRow(word: $0.display, count: $0.count, lastUsed: $0.lastUsed)
                }
                store.close()
            } catch {
                setLabel(summary, tr("The learned words cannot be read: {error}", ["error": "\(error)"]))
                removeAllRows(list)
                return
            }
        }
        render()
    }

    private func render() {
        let query = editableText(search)
        let shown = LearnedWordRow.filter(all, query: query)
        setLabel(summary, LearnedWordRow.summary(total: all.count, shown: shown.count, query: query))
        removeAllRows(list)
        for entry in shown {
            let row = actionRow(title: entry.word, subtitle: entry.subtitle(lastUsedText: Self.date(entry.lastUsed)))
            adw_preferences_row_set_use_markup(cast(row), 0)
            name(row, entry.word)
            adw_action_row_add_suffix(
                cast(row),
                button(tr("Forget"), accessibleName: tr("Forget {word}", ["word": entry.word]), style: "flat") {
                    [weak self] in self?.forget(entry.word)
                })
            gtk_list_box_append(cast(list), row)
        }
        setVisible(list, !shown.isEmpty)
    }

    func forget(_ word: String) {
        InklingCommand.run(["learned", "forget", word]) { [weak self] status, _, stderr in
            guard let self else { return }
            self.app.toast(
                status == 0
                    ? tr("Forgot “{word}”.", ["word": word])
                    : tr(
                        "Could not forget “{word}”: {reason}",
                        ["word": word, "reason": AccountForm.failure(output: stderr)]))
            self.reload()
        }
    }

    func confirmWipe() {
        let dialog = made(
            adw_message_dialog_new(
                cast(app.window), tr("Forget every learned word?"), LearnedWordRow.wipeConfirmation(total: all.count)))
        adw_message_dialog_add_response(cast(dialog), "cancel", tr("Cancel"))
        adw_message_dialog_add_response(cast(dialog), "wipe", tr("Forget all"))
        adw_message_dialog_set_response_appearance(cast(dialog), "wipe", ADW_RESPONSE_DESTRUCTIVE)
        adw_message_dialog_set_default_response(cast(dialog), "cancel")
        onText(raw(dialog), "response") { [weak self] response in
            guard let self, response == "wipe" else { return }
            InklingCommand.run(["learned", "wipe", "--yes"]) { status, _, stderr in
                self.app.toast(
                    status == 0
                        ? tr("Every learned word was forgotten.")
                        : tr("Nothing was wiped: {reason}", ["reason": AccountForm.failure(output: stderr)]))
                self.reload()
            }
        }
        gtk_window_present(cast(dialog))
    }

    /// A file chooser for export (save) or import (open), then the `inkling learned` command.
    func choose(save: Bool) {
        let chooser = made(
            gtk_file_chooser_native_new(
                save ? tr("Export learned words") : tr("Import learned words"), cast(app.window),
                save ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN, save ? tr("Export") : tr("Import"),
                tr("Cancel")))
        if save { gtk_file_chooser_set_current_name(cast(chooser), "inkling-learned-words.tsv") }
        onInteger(raw(chooser), "response") { [weak self] response in
            defer { g_object_unref(raw(chooser)) }
            guard let self, response == GTK_RESPONSE_ACCEPT.rawValue,
                let file = gtk_file_chooser_get_file(cast(chooser)),
                let pathPointer = g_file_get_path(file)
            else { return }
            let path = String(cString: pathPointer)
            g_free(pathPointer)
            g_object_unref(raw(file))
            InklingCommand.run(["learned", save ? "export" : "import", path]) { status, stdout, stderr in
                if status == 0 {
                    self.app.toast(
                        save
                            ? tr("Exported to {path}.", ["path": path])
                            : (stdout.split(separator: "\n").first.map(String.init) ?? tr("Imported.")))
                } else {
                    self.app.toast(AccountForm.failure(output: stderr))
                }
                self.reload()
            }
        }
        gtk_native_dialog_show(cast(chooser))
    }

    static func date(_ seconds: Int64) -> String {
        guard seconds > 0 else { return "-" }
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return "-" }
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%d", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
