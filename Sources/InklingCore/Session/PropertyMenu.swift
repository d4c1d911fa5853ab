/// The engine's menu in the desktop's input-source indicator (IBus properties): the language,
/// one radio item per language the user can switch to, and the off-the-record toggle.
///
/// The glue renders it as an `IBusPropList` and hands activations back to `action(forProperty:state:)`.
public struct PropertyMenu: Equatable, Sendable {
    /// One language the menu offers.
    public struct LanguageItem: Equatable, Sendable {
        /// The property key (`inkling.language.de`).
        public var key: String
        /// The language code (`de`).
        public var language: String
        /// What the user reads (`Deutsch`).
        public var label: String
        /// Whether it is the language the user chose.
        public var isChosen: Bool
    }

    /// The key of the language menu. GNOME Shell shows the symbol of the `InputMode` property
    /// next to the input-source indicator, so the active language is visible at a glance.
    public static let languageMenuKey = "InputMode"
    /// The key of the off-the-record toggle.
    public static let offTheRecordKey = "inkling.off-the-record"
    static let languagePrefix = "inkling.language."

    /// The menu's title (`Language: English`).
    public var languageTitle: String
    /// A short symbol for the indicator (`EN`).
    public var languageSymbol: String
    /// The languages, English first, then by label.
    public var languages: [LanguageItem]
    /// Whether nothing typed is learned right now.
    public var offTheRecord: Bool

    /// The menu for the languages that are installed (English is built in).
    ///
    /// - Parameters:
    ///   - installed: language codes whose packs are present; names come from `displayNames`.
    ///   - chosen: the first language of the `languages` setting.
    public init(installed: Set<String>, displayNames: [String: String], chosen: String, offTheRecord: Bool) {
        func name(_ code: String) -> String { displayNames[code] ?? (code == "en" ? "English" : code) }
        var codes = installed.union(["en", chosen]).sorted { a, b in
            if a == b || b == "en" { return false }
            return a == "en" || (name(a), a) < (name(b), b)
        }
        codes.removeAll { $0.isEmpty }
        languages = codes.map {
            LanguageItem(key: Self.languagePrefix + $0, language: $0, label: name($0), isChosen: $0 == chosen)
        }
        languageTitle = tr("Language: {language}", ["language": name(chosen)])
        languageSymbol = String(chosen.prefix(2)).uppercased()
        self.offTheRecord = offTheRecord
    }

    /// What a property activation asks for (the intents the session's keys report too); nil for
    /// keys that are not the menu's, and for a radio item being unchecked (the newly checked one
    /// says what to do).
    public func action(forProperty key: String, state: PropertyState) -> SessionIntent? {
        if key == Self.offTheRecordKey { return .offTheRecordChanged(state == .checked) }
        guard key.hasPrefix(Self.languagePrefix), state == .checked,
            let item = languages.first(where: { $0.key == key })
        else { return nil }
        return .languageChosen(item.language)
    }

    /// The `languages` setting with `language` moved to the front (the others keep their order).
    public static func languages(_ current: [String], choosing language: String) -> [String] {
        [language] + current.filter { $0 != language }
    }
}

/// The state IBus reports for a property (`IBusPropState`).
public enum PropertyState: UInt32, Sendable {
    case unchecked = 0
    case checked = 1
    case inconsistent = 2
}
