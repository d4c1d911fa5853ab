/// Where a Compose sequence stands after one more keysym (libxkbcommon's `xkb_compose_status`).
public enum ComposeStep: Equatable, Sendable {
    /// The keysym neither started nor continued a sequence: it is an ordinary key.
    case none
    /// A sequence started or advanced (a dead key, `Multi_key`, `Multi_key s`).
    case composing
    /// A sequence ended with this text (`dead_acute e` → `é`, `Multi_key s s` → `ß`).
    case composed(String)
    /// The keysym does not continue the sequence in progress: the sequence is abandoned.
    case cancelled
}

/// The system's Compose tables behind a keysym-at-a-time state machine (libxkbcommon in the engine).
///
/// Implementations only translate; `ComposeFilter` decides what the session does with each step.
public protocol KeysymComposer: AnyObject {
    /// Feeds the keysym of a key press and says where the sequence stands.
    func feed(_ keysym: UInt32) -> ComposeStep
    /// Forgets a sequence in progress.
    func reset()
}

/// Dead keys, Compose (`Multi_key`) sequences and the keys in between, in front of the session.
///
/// A composed character reaches the session as an ordinary typed character, so `c a f`,
/// `dead_acute`, `e` builds the word `café` with its candidates, exactly like a layout that has
/// an `é` key. While a sequence is in progress its keys are consumed, and so are their releases.
///
/// The pending dead key is not shown. The preedit is shown in commit-on-focus-out mode, so the
/// client commits whatever it holds when focus moves or the application resets the context; a
/// spacing accent appended to it (`caf´`) would then land in the text, while the sequence itself
/// is dropped on focus-out (as GTK's and IBus's simple input methods do). The word stays shown,
/// underlined, with its candidates, until the sequence ends.
///
/// An invalid sequence (`dead_acute` then `q`), Escape or BackSpace while composing drop the
/// sequence and the key that ended it, as GTK's simple input method and ibus-engine-simple do;
/// the word being typed is kept. A key that types no character (F1, Return, Tab, arrows) drops
/// the sequence and then does what it always does, so a pending accent never eats a selection;
/// a second dead key replaces the first. Password and PIN fields, and clients that cannot show a
/// preedit, get every key untouched: the application composes there itself.
public final class ComposeFilter {
    /// The session the keys go to.
    public let session: InputSession
    private let composer: KeysymComposer?
    /// Whether a sequence is in progress.
    public private(set) var isComposing = false
    /// Presses this filter consumed whose release has not arrived yet (keycode, or keysym when 0).
    private var consumedPresses: [(keycode: UInt32, keyval: UInt32)] = []
    /// More presses than fingers cannot be held; older entries lost their release (focus moved).
    private static let maximumHeld = 16

    /// Puts `composer` in front of `session` (nil: keys go straight to the session).
    public init(session: InputSession, composer: KeysymComposer?) {
        self.session = session
        self.composer = composer
    }

    /// Handles a key event: composes, or hands it to the session.
    public func processKey(_ event: KeyEvent) -> KeyResult {
        if event.isRelease {
            if let index = consumedPresses.firstIndex(where: { Self.same($0, event) }) {
                consumedPresses.remove(at: index)
                return KeyResult(handled: true, effects: [], needsSuggestions: false)
            }
            return session.processKey(event)
        }
        guard let composer, composes else {
            cancel()
            return session.processKey(event)
        }
        // Shift or AltGr between the dead key and the letter (`dead_acute`, Shift, `e` → `É`).
        if Keysym.isModifierOnly(event.keyval) { return session.processKey(event) }
        if event.isShortcut {
            // A chord belongs to the application; a half-typed accent does not survive it.
            cancel()
            return session.processKey(event)
        }
        if isComposing && event.keyval == Keysym.backSpace {
            // The invisible pending accent is what BackSpace takes back, not the word's last letter.
            cancel()
            return consumed(event)
        }
        var step = composer.feed(event.keyval)
        if step == .cancelled {
            cancel()
            // Another dead key or Compose starts its own sequence (`dead_acute dead_tilde n` → `ñ`).
            step = composer.feed(event.keyval)
            if step == .none {
                // A key that types nothing (F1, Return, an arrow) still does its job; a letter
                // that fits no sequence is dropped with the accent.
                if !Self.typesCharacter(event) { return session.processKey(event) }
                return consumed(event)
            }
        }
        switch step {
        case .none:
            isComposing = false
            return session.processKey(event)
        case .composing:
            isComposing = true
            return consumed(event)
        case .cancelled:
            cancel()
            return consumed(event)
        case .composed(let text):
            isComposing = false
            composer.reset()
            return type(text, for: event)
        }
    }

    /// Drops a sequence in progress (focus moved, the context was reset, the field became secret).
    public func cancel() {
        if isComposing { composer?.reset() }
        isComposing = false
    }

    /// Whether keys are composed here: the session takes keys (not a password, PIN or preedit-less client).
    private var composes: Bool {
        !session.contentType.isSecret && session.capabilities.contains(.preedit)
    }

    /// The composed text, one character at a time, as if typed on a layout that has those keys.
    private func type(_ text: String, for event: KeyEvent) -> KeyResult {
        var effects: [SessionEffect] = []
        var needsSuggestions = false
        var intents: [SessionIntent] = []
        var modifiers = event.modifiers
        modifiers.remove(.release)
        for scalar in text.unicodeScalars {
            var typed = KeyEvent.typing(scalar, modifiers: modifiers)
            typed.keycode = event.keycode
            let result = session.processKey(typed)
            effects += result.effects
            needsSuggestions = needsSuggestions || result.needsSuggestions
            intents += result.intents
            // Not handled (punctuation, `¿`, `«`): the application would insert the last key of the
            // sequence (`e`, `<`), not the composed character, so the character is committed here.
            if !result.handled { effects.append(.commitText(String(scalar))) }
        }
        remember(event)
        return KeyResult(handled: true, effects: effects, needsSuggestions: needsSuggestions, intents: intents)
    }

    private static func typesCharacter(_ event: KeyEvent) -> Bool {
        guard let character = event.character else { return false }
        return character.value >= 0x20 && character.value != 0x7F
    }

    private func consumed(_ event: KeyEvent) -> KeyResult {
        remember(event)
        return KeyResult(handled: true, effects: [], needsSuggestions: false)
    }

    private func remember(_ event: KeyEvent) {
        consumedPresses.append((event.keycode, event.keyval))
        if consumedPresses.count > Self.maximumHeld { consumedPresses.removeFirst() }
    }

    /// Whether a release belongs to a remembered press: the same key (keycode), or the same
    /// keysym when the client sends no keycodes (Shift may change the keysym, not the keycode).
    private static func same(_ press: (keycode: UInt32, keyval: UInt32), _ release: KeyEvent) -> Bool {
        if press.keycode != 0 || release.keycode != 0 { return press.keycode == release.keycode }
        return press.keyval == release.keyval
    }
}

/// The locale whose Compose file applies, as libxkbcommon's documentation describes it.
public enum ComposeLocale {
    /// Locales to try in order: the user's (`LC_ALL`, `LC_CTYPE`, `LANG`), as UTF-8, then `C.UTF-8`.
    ///
    /// The engine commits UTF-8 whatever the locale's codeset, so a legacy locale (`pl_PL`,
    /// `de_DE.ISO-8859-1`) uses its UTF-8 sibling, whose Compose file yields UTF-8 text; `C` and
    /// `POSIX` use `C.UTF-8` (the en_US.UTF-8 table) rather than the Latin-1 table `C` names.
    public static func candidates(environment: [String: String]) -> [String] {
        let fallback = "C.UTF-8"
        var locale = ""
        for name in ["LC_ALL", "LC_CTYPE", "LANG"] {
            if let value = environment[name], !value.isEmpty {
                locale = value
                break
            }
        }
        let base = String(locale.prefix { $0 != "." && $0 != "@" })
        if base.isEmpty || base == "C" || base == "POSIX" { return [fallback] }
        let codeset = locale.drop { $0 != "." }.dropFirst().prefix { $0 != "@" }.lowercased()
        let preferred = codeset == "utf-8" || codeset == "utf8" ? locale : base + ".UTF-8"
        return preferred == fallback ? [fallback] : [preferred, fallback]
    }
}
