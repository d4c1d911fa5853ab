import CIBus
import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Engine objects alive in this process (weakly held), so process-wide changes (settings,
/// language) reach every session. Main thread only.
@MainActor
enum EngineRegistry {
    private final class WeakInstance {
        weak var instance: EngineInstance?
        init(_ instance: EngineInstance) { self.instance = instance }
    }
    private static var entries: [WeakInstance] = []
    private static var focused: WeakInstance?

    /// The instance that last received focus-in (nil before any did, or once it is destroyed).
    static var lastFocused: EngineInstance? {
        get { focused?.instance.flatMap { $0.engine == nil ? nil : $0 } }
        set { focused = newValue.map(WeakInstance.init) }
    }

    static func add(_ instance: EngineInstance) {
        entries.removeAll { $0.instance?.engine == nil }
        entries.append(WeakInstance(instance))
    }

    /// Instances whose IBus engine object still exists.
    static var live: [EngineInstance] {
        entries.removeAll { $0.instance?.engine == nil }
        return entries.compactMap { $0.instance }
    }

    /// After focus-in: the instance is the focused one, and shows a message that found no engine
    /// to show it (a refused pack at start-up).
    static func focusedIn(_ instance: EngineInstance) {
        lastFocused = instance
        if let notice = PackLoader.takePendingNotice() {
            if let session = instance.session { instance.show(session.showNotice(notice)) }
        }
    }
}

/// The engine's GSettings (`org.freedesktop.ibus.engine.inkling`), followed live.
///
/// The settings reader: the one writer of every session's `SessionSettings`. Settings flow one
/// way: GSettings → `read()` → `applyToSessions()` → `InputSession.apply(_:)`; what the user asks
/// for through a session's key or the input-source menu comes back as a `SessionIntent`, which
/// `handle(_:)` writes to GSettings, whose "changed" signal applies it like any other change.
///
/// The schema is looked up first: `g_settings_new` on a schema that is not installed aborts the
/// process (GLib), which happens when the engine runs from a checkout. Then the defaults apply.
@MainActor
enum EngineSettings {
    /// The settings every session follows (the fields GSettings does not hold keep their defaults).
    private(set) static var current = SessionSettings()
    /// `languages`, best first (only the first is used).
    private(set) static var languages = ["en"]
    private static var gsettings: UnsafeMutablePointer<GSettings>?
    private static var schema: OpaquePointer?
    /// Notes about rejected values, logged once per distinct message.
    private static var noted: Set<String> = []

    static func start() {
        defer { PackLoader.request(language: languages.first ?? "en") }
        guard let source = g_settings_schema_source_get_default(),
            let found = g_settings_schema_source_lookup(source, EngineSettingsSchema.id, 1)
        else {
            log("settings: schema \(EngineSettingsSchema.id) is not installed; using the defaults")
            return
        }
        schema = found
        guard let settings = g_settings_new(EngineSettingsSchema.id) else {
            log("settings: cannot open \(EngineSettingsSchema.id); using the defaults")
            return
        }
        gsettings = settings
        typealias ChangedHandler = @convention(c) (gpointer?, UnsafePointer<gchar>?, gpointer?) -> Void
        let changed: ChangedHandler = { _, key, _ in
            let name = key.map { String(cString: $0) } ?? ""
            MainActor.assumeIsolated { EngineSettings.reload(changedKey: name) }
        }
        inkling_signal_connect(settings, "changed", unsafeBitCast(changed, to: GCallback.self), nil, nil)
        read()
    }

    /// A session for a new engine object, with the current settings and predictor.
    static func makeSession() -> InputSession? {
        guard let predictor = PackLoader.predictor else { return nil }
        return InputSession(predictor: predictor, settings: sessionSettings(), clock: EngineProcess.clock)
    }

    /// What every session follows: `current`, for the active pack's language (which, with
    /// `keyboard-layout`, decides the layout: `SessionSettings.keyboardLayout`).
    private static func sessionSettings() -> SessionSettings {
        var settings = current
        settings.language = PackLoader.activeLanguage
        if CloudBridge.shared.environmentCheck { settings.cloudCheck = true }
        return settings
    }

    /// What the user asked for through a session or the menu: written to GSettings, from where
    /// it reaches every session.
    static func handle(_ intents: [SessionIntent]) {
        for intent in intents {
            switch intent {
            case .offTheRecordChanged(let value): setOffTheRecord(value)
            case .languageChosen(let language): choose(language: language)
            }
        }
    }

    private static func reload(changedKey: String) {
        let previousLanguage = languages.first
        read()
        applyToSessions()
        if languages.first != previousLanguage { PackLoader.request(language: languages.first ?? "en") }
        if changedKey == "languages" || changedKey == "off-the-record" { refreshMenus() }
    }

    /// The input-source menu for the current settings and the packs on disk.
    static func propertyMenu() -> PropertyMenu {
        PropertyMenu(
            installed: PackLoader.installedLanguages(), displayNames: PackLoader.displayNames(),
            chosen: languages.first ?? "en", offTheRecord: current.offTheRecord)
    }

    /// The user chose a language in the menu: it goes to the front of `languages`.
    private static func choose(language: String) {
        let chosen = PropertyMenu.languages(languages, choosing: language)
        if let gsettings, has("languages") {
            // The "changed" signal then loads the pack and refreshes the menus.
            var pointers: [UnsafeMutablePointer<gchar>?] = chosen.map { strdup($0) }
            pointers.append(nil)
            defer { for pointer in pointers { free(pointer) } }
            // Never empty (it ends in nil), so it has a base address.
            let written = pointers.withUnsafeBufferPointer { buffer in
                buffer.baseAddress?.withMemoryRebound(to: UnsafePointer<gchar>?.self, capacity: buffer.count) {
                    g_settings_set_strv(gsettings, "languages", $0)
                } ?? 0
            }
            if written != 0 { return }
            note("settings: languages could not be written")
        }
        languages = chosen
        PackLoader.request(language: language)
        refreshMenus()
    }

    /// Re-registers the menu of every engine (the radio item and the title follow the setting).
    static func refreshMenus() {
        for instance in EngineRegistry.live { instance.registerProperties() }
    }

    /// Applies `current` to every live session (all of them use the active pack's language).
    static func applyToSessions() {
        let settings = sessionSettings()
        for instance in EngineRegistry.live {
            guard let session = instance.session else { continue }
            if session.settings != settings { session.apply(settings) }
        }
        DictationBridge.shared.settingsChanged()
    }

    /// Off the record asked for (a session's key, the menu): GSettings and every session follow.
    private static func setOffTheRecord(_ value: Bool) {
        current.offTheRecord = value
        if let gsettings, has("off-the-record") {
            // The "changed" signal then applies it to every session.
            if g_settings_set_boolean(gsettings, "off-the-record", value ? 1 : 0) == 0 {
                note("settings: off-the-record could not be written back")
            }
        }
        applyToSessions()
        if gsettings == nil { refreshMenus() }
    }

    // MARK: Reading and validating

    private static func has(_ key: String) -> Bool {
        guard let schema else { return false }
        return g_settings_schema_has_key(schema, key) != 0
    }

    private static func note(_ message: String) {
        if noted.insert(message).inserted { log(message) }
    }

    private static func string(_ key: String) -> String? {
        guard let gsettings, has(key), let raw = g_settings_get_string(gsettings, key) else { return nil }
        defer { g_free(raw) }
        return String(cString: raw)
    }

    private static func bool(_ key: String) -> Bool? {
        guard let gsettings, has(key) else { return nil }
        return g_settings_get_boolean(gsettings, key) != 0
    }

    private static func binding(_ key: String, default fallback: KeyBinding?) -> KeyBinding? {
        guard let accelerator = string(key) else { return fallback }
        if accelerator.allSatisfy({ $0 == " " }) { return nil }  // empty: the key is off
        if let parsed = KeyBinding(accelerator: accelerator) { return parsed }
        note("settings: \(key) '\(accelerator)' is not a key this engine understands; using the default")
        return fallback
    }

    private static func read() {
        guard let gsettings else { return }
        let defaults = SessionSettings()
        var settings = current
        if has("page-size") {
            let value = Int(g_settings_get_int(gsettings, "page-size"))
            settings.setPageSize(value)
            if settings.pageSize != value {
                note("settings: page-size \(value) is out of range 1…9; using \(settings.pageSize)")
            }
        }
        if let value = bool("next-word-predictions") { settings.nextWordPredictions = value }
        if let value = string("selection-keys") {
            settings.selectionKeys = SelectionKeys(rawValue: value) ?? .functionKeys
        }
        if let value = string("autocorrect") {
            if let mode = AutocorrectMode(rawValue: value) {
                settings.autocorrect = mode
            } else {
                note("settings: autocorrect '\(value)' is unknown; using 'off'")
                settings.autocorrect = .off
            }
        }
        settings.applyFixKey = binding("apply-fix-key", default: defaults.applyFixKey)
        settings.correctionPanelKey = binding("correction-panel-key", default: defaults.correctionPanelKey)
        settings.keepWordKey = binding("keep-word-key", default: defaults.keepWordKey)
        if let value = bool("cloud-check") { settings.cloudCheck = value }
        if let value = bool("off-the-record") { settings.offTheRecord = value }
        if let value = string("keyboard-layout") {
            if !KeyboardLayout.isSetting(value) {
                note("settings: keyboard-layout '\(value)' is unknown; following the language")
            }
            settings.layoutChoice = value
        }
        if let value = bool("dictation") { settings.dictation = value }
        settings.dictationKey = binding("dictation-key", default: defaults.dictationKey)
        settings.dictationDevice = string("dictation-device") ?? ""
        current = settings

        if has("languages"), let list = g_settings_get_strv(gsettings, "languages") {
            defer { g_strfreev(list) }
            var codes: [String] = []
            var index = 0
            while let item = list[index] {
                let code = String(cString: item)
                if LanguageCode.isValid(code) {
                    codes.append(code)
                } else {
                    note("settings: ignoring the language code '\(LanguageCode.printable(code))'")
                }
                index += 1
            }
            languages = codes.isEmpty ? ["en"] : codes
        }
    }
}
