import CGtk
import InklingCore
import InklingSetupModel

#if canImport(Glibc)
    import Glibc
#endif

/// Typing: page size, selection keys, next-word predictions, autocorrect, the three keys and the
/// keyboard layout. Every control writes GSettings at once; the engine follows the change.
enum TypingPage {
    static func make(_ app: SetupApp) -> Widget {
        let settings = app.settings
        let page = page(title: tr("Typing"), icon: "input-keyboard-symbolic", name: "typing")

        let suggestions = group(title: tr("Suggestions"))
        add(suggestions, pageSizeRow(settings))
        add(
            suggestions,
            comboRow(
                settings, SettingChoices.selectionKeys, title: tr("Keys that pick a suggestion"),
                subtitle: tr("Digits are typed as usual when F-keys pick")))
        add(
            suggestions,
            switchRow(
                settings, key: "next-word-predictions", title: tr("Predict the next word"),
                subtitle: tr("After a word and a space, suggest what usually comes next")))
        add(page: page, suggestions)

        let corrections = group(title: tr("Corrections"))
        add(
            corrections,
            comboRow(
                settings, SettingChoices.autocorrect, title: tr("Space corrects a likely typo"),
                subtitle: tr("The keep-word key always commits exactly what you typed")))
        add(corrections, layoutRow(settings))
        add(page: page, corrections)

        let keys = group(
            title: tr("Keys"),
            description: tr(
                "Each key works only while Inkling shows what it acts on; otherwise the application gets it. Click Change, then press the new keys."
            ))
        add(keys, ShortcutRow.make(app, key: "apply-fix-key", title: tr("Apply the offered fix")))
        add(keys, ShortcutRow.make(app, key: "correction-panel-key", title: tr("Open the correction list")))
        add(keys, ShortcutRow.make(app, key: "keep-word-key", title: tr("Keep exactly what was typed")))
        add(page: page, keys)
        return page
    }

    static func pageSizeRow(_ settings: AppSettings) -> Widget {
        let row = actionRow(title: tr("Suggestions per page"), subtitle: tr("Page Up and Page Down show the others"))
        let spin = made(
            gtk_spin_button_new_with_range(Double(PageSize.range.lowerBound), Double(PageSize.range.upperBound), 1))
        gtk_widget_set_valign(spin, GTK_ALIGN_CENTER)
        // Named by the row's title (AdwActionRow labels its activatable widget).
        adw_action_row_add_suffix(cast(row), spin)
        adw_action_row_set_activatable_widget(cast(row), spin)
        settings.watch("page-size") {
            gtk_spin_button_set_value(cast(spin), Double(PageSize.shown(settings.int("page-size"))))
        }
        on(raw(spin), "value-changed") {
            settings.set("page-size", int: Int(gtk_spin_button_get_value_as_int(cast(spin))))
        }
        return row
    }

    static func comboRow(_ settings: AppSettings, _ choices: SettingChoices, title: String, subtitle: String) -> Widget
    {
        comboRow(
            settings, key: choices.key, labels: choices.labels, title: title, subtitle: subtitle,
            index: choices.index(of:), value: choices.value(at:))
    }

    static func layoutRow(_ settings: AppSettings) -> Widget {
        let values = LayoutChoices.values
        return comboRow(
            settings, key: "keyboard-layout", labels: values.map(LayoutChoices.label), title: tr("Keyboard layout"),
            subtitle: tr("Typos of neighbouring keys are weighed on this layout"), index: LayoutChoices.index(of:),
            value: { values.indices.contains($0) ? values[$0] : nil })
    }

    static func comboRow(
        _ settings: AppSettings, key: String, labels: [String], title: String, subtitle: String,
        index: @escaping (String) -> Int, value: @escaping (Int) -> String?
    ) -> Widget {
        let row = made(adw_combo_row_new())
        adw_preferences_row_set_title(cast(row), title)
        adw_action_row_set_subtitle(cast(row), subtitle)
        var pointers: [UnsafeMutablePointer<CChar>?] = labels.map { strdup($0) }
        pointers.append(nil)
        let model = pointers.withUnsafeBufferPointer { buffer in
            made(buffer.baseAddress).withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                gtk_string_list_new($0)
            }
        }
        for pointer in pointers { free(pointer) }
        adw_combo_row_set_model(cast(row), model)
        // AdwComboRow is named by its title.
        if !settings.has(key) { setSensitive(row, false) }
        settings.watch(key) { adw_combo_row_set_selected(cast(row), guint(index(settings.string(key)))) }
        onNotify(raw(row), "selected") {
            if let chosen = value(Int(adw_combo_row_get_selected(cast(row)))) { settings.set(key, string: chosen) }
        }
        return row
    }

    static func switchRow(_ settings: AppSettings, key: String, title: String, subtitle: String) -> Widget {
        let row = actionRow(title: title, subtitle: subtitle)
        let toggle = made(gtk_switch_new())
        gtk_widget_set_valign(toggle, GTK_ALIGN_CENTER)
        // Named by the row's title (AdwActionRow labels its activatable widget).
        adw_action_row_add_suffix(cast(row), toggle)
        adw_action_row_set_activatable_widget(cast(row), toggle)
        settings.watch(key) { gtk_switch_set_active(cast(toggle), settings.bool(key) ? 1 : 0) }
        onNotify(raw(toggle), "active") { settings.set(key, bool: gtk_switch_get_active(cast(toggle)) != 0) }
        return row
    }
}

/// A key setting: its current keys, Change (records new ones), Reset (the default).
enum ShortcutRow {
    static func make(_ app: SetupApp, key: String, title: String) -> Widget {
        let settings = app.settings
        let row = actionRow(title: title)
        let change = button(tr("Change…"), accessibleName: tr("Change: {action}", ["action": title])) {
            record(app, key: key, title: title)
        }
        let reset = button(tr("Reset"), accessibleName: tr("Reset: {action}", ["action": title]), style: "flat") {
            settings.reset(key)
        }
        adw_action_row_add_suffix(cast(row), change)
        adw_action_row_add_suffix(cast(row), reset)
        settings.watch(key) {
            adw_action_row_set_subtitle(cast(row), Shortcut.label(accelerator: settings.string(key)))
        }
        return row
    }

    /// A dialog that takes the next key press: stored if the engine can use it, else explained.
    static func record(_ app: SetupApp, key: String, title: String) {
        let dialog = made(
            adw_message_dialog_new(
                cast(app.window), tr("Press the new keys"),
                tr("For “{action}”. Escape cancels; Backspace turns the key off.", ["action": title])))
        adw_message_dialog_add_response(cast(dialog), "cancel", tr("Cancel"))
        name(dialog, tr("Record keys: {action}", ["action": title]))
        let controller = made(gtk_event_controller_key_new())
        gtk_event_controller_set_propagation_phase(controller, GTK_PHASE_CAPTURE)
        onKeyPressed(raw(controller)) { keyval, state in
            let keyName = gdk_keyval_name(keyval).map { String(cString: $0) } ?? ""
            var modifiers: ShortcutModifiers = []
            if state & GDK_CONTROL_MASK.rawValue != 0 { modifiers.insert(.control) }
            if state & GDK_ALT_MASK.rawValue != 0 { modifiers.insert(.alt) }
            if state & GDK_SHIFT_MASK.rawValue != 0 { modifiers.insert(.shift) }
            if state & GDK_SUPER_MASK.rawValue != 0 { modifiers.insert(.superKey) }
            switch Shortcut.record(keyName: keyName, modifiers: modifiers) {
            case .waiting: return false
            case .cancelled: gtk_window_close(cast(dialog))
            case .disabled:
                app.settings.set(key, string: "")
                gtk_window_close(cast(dialog))
            case .accepted(let accelerator):
                app.settings.set(key, string: accelerator)
                gtk_window_close(cast(dialog))
            case .refused(let why):
                adw_message_dialog_set_body(cast(dialog), why)
            }
            return true
        }
        gtk_widget_add_controller(dialog, controller)
        gtk_window_present(cast(dialog))
    }
}
