/// What is being composed: the typed word, a pending space, a pending autocorrection, and the
/// preedit that shows them.
///
/// A selected candidate is committed and followed by a *pending space*, shown as (not
/// underlined) preedit; an autocorrection on Space is shown as the fix plus a space until the
/// next key commits it (Backspace restores what was typed).
public struct Composition: Equatable, Sendable {
    /// An autocorrection shown but not yet committed.
    public struct Autocorrection: Equatable, Sendable {
        /// The fix shown.
        public var replacement: String
        /// What was typed (Backspace restores it).
        public var typed: String
        /// An autocorrection of `typed` to `replacement`.
        public init(replacement: String, typed: String) {
            self.replacement = replacement
            self.typed = typed
        }
    }

    /// The word being typed.
    public var typed = ""
    /// A space shown after a committed candidate, not yet part of the text.
    public var pendingSpace = false
    /// An autocorrection shown but not yet committed.
    public var pendingAutocorrection: Autocorrection? = nil

    /// Nothing composed.
    public init() {}

    /// Whether nothing is composed (no word, no pending space, no pending autocorrection).
    public var isEmpty: Bool { typed.isEmpty && !pendingSpace && pendingAutocorrection == nil }

    /// Whether a word or a pending space is shown (what the client would commit on focus-out,
    /// before an autocorrection).
    public var hasWordOrSpace: Bool { !typed.isEmpty || pendingSpace }

    /// The text the preedit stands for: what the client commits on focus-out or reset.
    public var shownText: String {
        if let correction = pendingAutocorrection { return correction.replacement + " " }
        return typed + (pendingSpace ? " " : "")
    }

    /// The preedit to show (nil: none).
    public var preedit: Preedit? {
        if let correction = pendingAutocorrection {
            let text = correction.replacement + " "
            let underlined = correction.replacement.unicodeScalars.count
            return Preedit(text: text, cursor: underlined + 1, underlined: underlined)
        }
        if typed.isEmpty && !pendingSpace { return nil }
        let text = typed.isEmpty ? " " : typed
        let length = text.unicodeScalars.count
        return Preedit(text: text, cursor: length, underlined: typed.isEmpty ? 0 : length)
    }

    /// Ends the typed word: returns it and leaves nothing typed.
    public mutating func takeWord() -> String {
        defer { typed = "" }
        return typed
    }

    /// Drops the pending space and autocorrection.
    public mutating func dropPending() {
        pendingSpace = false
        pendingAutocorrection = nil
    }

    /// Forgets everything composed.
    public mutating func clear() {
        typed = ""
        dropPending()
    }
}
