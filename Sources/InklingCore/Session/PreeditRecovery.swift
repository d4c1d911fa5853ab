/// The input context that has the focus, as ibus-daemon names it (IBus's `focus-in-id`).
public struct FocusClient: Equatable, Sendable {
    /// The input context's object path: one per GTK widget context, one per Qt application.
    public let contextPath: String
    /// The client's kind: `gtk3-im:<program>`, `gtk4-im:<program>`, `gnome-shell`, `xim`,
    /// `Qt` (Qt 4), `QIBusInputContext` (Qt 5 and 6), `fake` (no input focus).
    public let name: String

    /// A client as the daemon names it.
    public init(contextPath: String, name: String) {
        self.contextPath = contextPath
        self.name = name
    }

    /// Whether the client loses the composing word when its window loses the focus.
    ///
    /// ibus-daemon commits the preedit of a client that does not commit it itself when the focus
    /// leaves; Qt's IBus plugin hands a commit only to the application's focus object, which is
    /// gone once its window is inactive, so the word vanishes (KWrite: `We saw hel` becomes
    /// `We saw `). GTK commits its own copy of the preedit on focus-out; GNOME Shell has the
    /// daemon commit it on its reset, before the focus-out.
    public var dropsPreeditWhenDeactivated: Bool { name == "QIBusInputContext" || name == "Qt" }
}

/// Brings back the word a client lost when its window lost the focus, as the composing word,
/// when the focus returns to that input context; keeps it only if the client's next report shows
/// the text that was before the word.
///
/// The word is shown again as preedit, never committed by this: if the client's report proves
/// another place (another window of the same application, which shares the input context), the
/// recovered word is taken back out of the composition, and only what was typed since stays.
public struct PreeditRecovery: Equatable, Sendable {
    /// A word lost at focus-out, and where it was.
    public struct LostWord: Equatable, Sendable {
        /// The input context it was composed in.
        public let contextPath: String
        /// The composing word.
        public let word: String
        /// The text before the word (its last `comparedScalars`), as the engine knew it.
        public let before: String
    }

    /// A word lost at focus-out, waiting for its input context to get the focus back.
    public private(set) var lost: LostWord?
    /// A word shown again, waiting for the client's report to confirm its place.
    public private(set) var unconfirmed: LostWord?

    /// How much of the text before the word a report must repeat to prove the place.
    static let comparedScalars = 200

    /// Nothing lost.
    public init() {}

    /// The focus left `client` while `word` was composing after `before` (nil: not known).
    ///
    /// Kept only for clients that lose the word, when the word and the text before it are known.
    public mutating func focusOut(client: FocusClient?, word: String, before: String?) {
        unconfirmed = nil
        guard let client, client.dropsPreeditWhenDeactivated, !word.isEmpty, let before else {
            // Another field of the same context (or an unknown one) ends the wait.
            if let client, client.contextPath == lost?.contextPath { lost = nil }
            return
        }
        let kept = String(String.UnicodeScalarView(before.unicodeScalars.suffix(Self.comparedScalars)))
        lost = LostWord(contextPath: client.contextPath, word: word, before: kept)
    }

    /// The focus came to `client`: the word to show again as composing, if it was lost there.
    public mutating func focusIn(client: FocusClient?) -> String? {
        unconfirmed = nil
        guard let lost, let client, client.contextPath == lost.contextPath else { return nil }
        self.lost = nil
        unconfirmed = lost
        return lost.word
    }

    /// The client reset its context: it commits whatever preedit it shows, a recovered word too.
    public mutating func reset() { unconfirmed = nil }

    /// What a report means for a recovered word: nil when there is none waiting; true when the
    /// text before the cursor is the text that was before the word (keep it); false otherwise
    /// (take it back out).
    public mutating func confirm(reportedBefore: String) -> Bool? {
        guard let word = unconfirmed else { return nil }
        unconfirmed = nil
        let reported = reportedBefore.unicodeScalars.suffix(Self.comparedScalars)
        return reported.elementsEqual(word.before.unicodeScalars)
    }
}

extension InputSession {
    /// The input context that has the focus (IBus's `focus-in-id`); nil when the daemon does not
    /// say (then no word is recovered).
    public func setFocusClient(_ client: FocusClient?) { focusClient = client }

    /// Shows again the word lost when this context's window lost the focus (after `focusIn()`).
    func recoverLostWord() -> [SessionEffect] {
        guard let word = preeditRecovery.focusIn(client: focusClient), composition.isEmpty else { return [] }
        composition.typed = word
        return [preeditEffect()]
    }

    /// Records the composing word before the focus leaves (before `focusOut()` clears it).
    func noteWordAtFocusOut() {
        let plainWord = composition.pendingAutocorrection == nil && !composition.pendingSpace
        preeditRecovery.focusOut(
            client: focusClient, word: plainWord ? composition.typed : "",
            before: context.isKnown ? context.before : nil)
    }

    /// After a report: a recovered word stays where the text before it is as it was, and is taken
    /// back out (keeping what was typed since) anywhere else.
    func confirmRecoveredWord(_ result: (effects: [SessionEffect], needsSuggestions: Bool)) -> (
        effects: [SessionEffect], needsSuggestions: Bool
    ) {
        guard let recovered = preeditRecovery.unconfirmed,
            let keep = preeditRecovery.confirm(reportedBefore: context.before), !keep
        else { return result }
        guard composition.pendingAutocorrection == nil, composition.typed.hasPrefix(recovered.word) else {
            return result
        }
        composition.typed = String(composition.typed.dropFirst(recovered.word.count))
        composition.pendingSpace = false
        suggestions.clear()
        lastSuggestionKey = nil
        return (result.effects + [preeditEffect()], true)
    }
}
