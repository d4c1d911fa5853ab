/// A key event as IBus delivers it, plus the character it types (if any).
public struct KeyEvent: Equatable, Sendable {
    /// The X keysym.
    public var keyval: UInt32
    /// The hardware keycode.
    public var keycode: UInt32
    /// IBus modifier state.
    public var modifiers: KeyModifiers
    /// The character the key types (the glue fills it with `ibus_keyval_to_unicode`).
    public var character: Unicode.Scalar?

    /// Creates a key event.
    public init(keyval: UInt32, keycode: UInt32 = 0, modifiers: KeyModifiers = [], character: Unicode.Scalar? = nil) {
        self.keyval = keyval
        self.keycode = keycode
        self.modifiers = modifiers
        self.character = character
    }

    /// A key press that types `scalar` (its keysym is derived the way X does for Unicode).
    public static func typing(_ scalar: Unicode.Scalar, modifiers: KeyModifiers = []) -> KeyEvent {
        let value = scalar.value
        let keyval: UInt32 =
            (value >= 0x20 && value <= 0x7E) || (value >= 0xA0 && value <= 0xFF) ? value : 0x0100_0000 | value
        return KeyEvent(keyval: keyval, modifiers: modifiers, character: scalar)
    }

    /// A press of a named key.
    public static func key(_ keyval: UInt32, modifiers: KeyModifiers = []) -> KeyEvent {
        KeyEvent(keyval: keyval, modifiers: modifiers, character: keyval == Keysym.space ? " " : nil)
    }

    /// Whether this is a release.
    public var isRelease: Bool { modifiers.contains(.release) }
}

/// IBus modifier bits (`IBusModifierType`).
public struct KeyModifiers: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let shift = KeyModifiers(rawValue: 1 << 0)
    public static let capsLock = KeyModifiers(rawValue: 1 << 1)
    public static let control = KeyModifiers(rawValue: 1 << 2)
    public static let alt = KeyModifiers(rawValue: 1 << 3)
    public static let mod4 = KeyModifiers(rawValue: 1 << 6)
    public static let superKey = KeyModifiers(rawValue: 1 << 26)
    public static let hyper = KeyModifiers(rawValue: 1 << 27)
    public static let meta = KeyModifiers(rawValue: 1 << 28)
    public static let release = KeyModifiers(rawValue: 1 << 30)
    /// Modifiers that turn a key into a shortcut the application owns.
    public static let shortcut: KeyModifiers = [.control, .alt, .mod4, .superKey, .hyper, .meta]
}

/// The X keysyms the session treats specially.
public enum Keysym {
    public static let space: UInt32 = 0x0020
    public static let backSpace: UInt32 = 0xFF08
    public static let tab: UInt32 = 0xFF09
    public static let isoLeftTab: UInt32 = 0xFE20
    public static let returnKey: UInt32 = 0xFF0D
    public static let keypadEnter: UInt32 = 0xFF8D
    public static let escape: UInt32 = 0xFF1B
    public static let delete: UInt32 = 0xFFFF
    public static let home: UInt32 = 0xFF50
    public static let left: UInt32 = 0xFF51
    public static let up: UInt32 = 0xFF52
    public static let right: UInt32 = 0xFF53
    public static let down: UInt32 = 0xFF54
    public static let pageUp: UInt32 = 0xFF55
    public static let pageDown: UInt32 = 0xFF56
    public static let end: UInt32 = 0xFF57
    public static let f1: UInt32 = 0xFFBE
    public static let f9: UInt32 = 0xFFC6

    /// Shift, Control, Alt, Super, Hyper, Meta, Caps/Num/Scroll Lock and level shifts.
    public static func isModifierOnly(_ keyval: UInt32) -> Bool {
        (0xFFE1...0xFFEE).contains(keyval) || (0xFE01...0xFE0F).contains(keyval)
            || keyval == 0xFF7F || keyval == 0xFF14 || keyval == 0xFF7E
    }
}

/// What the client field is for (`IBusInputPurpose`) and how to treat it (`IBusInputHints`).
public struct ContentType: Equatable, Sendable {
    public var purpose: UInt32
    public var hints: UInt32
    public init(purpose: UInt32 = 0, hints: UInt32 = 0) {
        self.purpose = purpose
        self.hints = hints
    }
    public static let purposePassword: UInt32 = 8
    public static let purposePIN: UInt32 = 9
    public static let hintPrivate: UInt32 = 1 << 11

    /// Password and PIN fields: keys pass straight through and nothing is kept.
    public var isSecret: Bool { purpose == Self.purposePassword || purpose == Self.purposePIN }
    /// The PRIVATE hint: suggestions, but nothing learned and nothing sent anywhere.
    public var isPrivate: Bool { hints & Self.hintPrivate != 0 }
}

/// What the client can show and provide (`IBusCapabilite`).
public struct ClientCapabilities: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let preedit = ClientCapabilities(rawValue: 1 << 0)
    public static let auxiliaryText = ClientCapabilities(rawValue: 1 << 1)
    public static let lookupTable = ClientCapabilities(rawValue: 1 << 2)
    public static let focus = ClientCapabilities(rawValue: 1 << 3)
    public static let surroundingText = ClientCapabilities(rawValue: 1 << 5)
}

/// The word being composed, shown in the application but not yet part of its text.
public struct Preedit: Equatable, Sendable {
    /// The text shown.
    public var text: String
    /// The cursor inside it, in code points.
    public var cursor: Int
    /// How many code points from the start are underlined (the typed word; a pending space is not).
    public var underlined: Int
    public init(text: String, cursor: Int, underlined: Int) {
        self.text = text
        self.cursor = cursor
        self.underlined = underlined
    }
}

/// The candidate list as the panel should show it.
public struct CandidateTable: Equatable, Sendable {
    /// All candidates; the panel shows them a page at a time.
    public var candidates: [String]
    /// Candidates per page.
    public var pageSize: Int
    /// The highlighted candidate (global index); it also selects the page.
    public var cursor: Int
    /// Whether the highlight is shown (only once the user moved it).
    public var cursorVisible: Bool
    /// Labels for the rows of a page (`F1`…).
    public var labels: [String]
}

/// One thing the glue must do to the client, in order.
public enum SessionEffect: Equatable, Sendable {
    case commitText(String)
    case updatePreedit(Preedit)
    case hidePreedit
    case updateLookupTable(CandidateTable)
    case hideLookupTable
    case updateAuxiliaryText(String)
    case hideAuxiliaryText
    /// Delete `count` code points starting `offset` code points from the cursor (negative: before it).
    case deleteSurroundingText(offset: Int, count: Int)
}

/// Lines for the cloud helper and effects for the client, from a cloud timer or reply.
public struct CloudAction: Equatable, Sendable {
    /// Messages to send the helper, in order.
    public var messages: [CloudRequestMessage]
    /// Effects to render.
    public var effects: [SessionEffect]
    public init(messages: [CloudRequestMessage] = [], effects: [SessionEffect] = []) {
        self.messages = messages
        self.effects = effects
    }
}

/// The answer to a key event.
public struct KeyResult: Equatable, Sendable {
    /// Whether the engine consumed the key (false: the application gets it unchanged).
    public var handled: Bool
    /// Effects to apply now, before the key's answer.
    public var effects: [SessionEffect]
    /// Whether suggestions should be recomputed after the key is answered (`refreshSuggestions()`).
    public var needsSuggestions: Bool
    /// Setting changes the user asked for with this key, for the settings reader to apply.
    public var intents: [SessionIntent]
    public init(
        handled: Bool, effects: [SessionEffect], needsSuggestions: Bool, intents: [SessionIntent] = []
    ) {
        self.handled = handled
        self.effects = effects
        self.needsSuggestions = needsSuggestions
        self.intents = intents
    }
}

/// Settings the session follows (live: assign a new value at any time).
public struct SessionSettings: Equatable, Sendable {
    /// Candidates per page of the lookup table (`setPageSize(_:)` applies the `page-size` setting).
    public var pageSize = 5
    /// Candidates computed (several pages).
    public var candidateCount = 10
    /// Which keys select a candidate of the page: F1…F9, or also the digits 1…9 while a table shows.
    public var selectionKeys = SelectionKeys.functionKeys
    /// Whether the next word is predicted after a space.
    public var nextWordPredictions = true
    /// Whether Space replaces a flagged word by its fix.
    public var autocorrect = AutocorrectMode.off
    /// Applies the newest fix (the first chip).
    public var applyFixKey = KeyBinding(accelerator: "<Control><Alt>Return")
    /// Opens the correction panel: every flag with its explanation.
    public var correctionPanelKey = KeyBinding(accelerator: "<Control><Alt>space")
    /// Keeps the word: dismisses its flag, or commits the typed word as it is.
    public var keepWordKey = KeyBinding(accelerator: "<Control><Alt>k")
    /// The `keyboard-layout` setting: a layout's name, or `auto` to follow the language.
    public var layoutChoice = KeyboardLayout.automatic
    /// Keyboard layout for weighting typos: the chosen one, else the language's (`KeyboardLayout.chosen`).
    public var keyboardLayout: String { KeyboardLayout.chosen(layoutChoice, language: language).name }
    /// Whether the local checker flags typos.
    public var checkSpelling = true
    /// Whether finished sentences are sent to the cloud check (opt-in).
    public var cloudCheck = false
    /// Nothing is learned and nothing is sent while this is on.
    public var offTheRecord = false
    /// Toggles `offTheRecord`.
    public var offTheRecordKey = KeyBinding(accelerator: "<Control><Alt>o")
    /// Whether committed words are learned at all.
    public var learning = true
    /// The language of the active pack.
    public var language = "en"
    /// Whether dictation is enabled (issue 16; the companion app or `inkling dictation enable`).
    public var dictation = false
    /// Toggles dictation in the focused field (`DictationController`).
    public var dictationKey = KeyBinding(accelerator: SessionSettings.defaultDictationKey)
    /// The sound server's source dictation records from; empty: its default source.
    public var dictationDevice = ""
    /// Control+Alt+M ("microphone"): not a default shortcut of GNOME, KDE Plasma, Xfce
    /// (which takes Control+Alt+D), Cinnamon or MATE, next to the engine's other Control+Alt keys.
    public static let defaultDictationKey = "<Control><Alt>m"
    public init() {}

    /// The page sizes the lookup table takes: F1…F9 label nine rows (the schema's range).
    public static let pageSizes = 1...9

    /// A `page-size` value brought into `pageSizes`.
    public static func pageSize(forSetting value: Int) -> Int {
        min(pageSizes.upperBound, max(pageSizes.lowerBound, value))
    }

    /// Applies the `page-size` setting: the page size (brought into `pageSizes`) and the
    /// candidates computed for it (two pages, never fewer than the default).
    public mutating func setPageSize(_ value: Int) {
        pageSize = Self.pageSize(forSetting: value)
        candidateCount = max(SessionSettings().candidateCount, pageSize * 2)
    }
}

/// The keys that select candidates.
public enum SelectionKeys: String, Sendable, CaseIterable {
    /// F1…F9 (digits always reach the application).
    case functionKeys = "f-keys"
    /// F1…F9 and, while the candidate table shows, 1…9.
    case digits
}

/// When Space replaces a flagged word by its fix.
public enum AutocorrectMode: String, Sendable, CaseIterable {
    /// Never: flags only.
    case off
    /// Only when the fix is far more likely than the typed word.
    case veryLikely = "very-likely"
    /// Whenever the checker flags the word.
    case always
}
