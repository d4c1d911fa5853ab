/// Commits, the preedit and the suggestion table: the small steps every key rule is made of.

extension InputSession {
    /// Commits what the preedit shows (the typed word, an autocorrection, a pending space),
    /// unlearned, for changes that end the composition without the client committing it.
    func commitShownComposition() -> [SessionEffect] {
        let shown = composition.shownText
        guard !shown.isEmpty else { return [] }
        return [commit(shown, learn: false)]
    }

    /// Finishes the typed word: commits it (or `replacement`, a highlighted candidate, in its
    /// place) followed by `suffix`, hides the preedit, and queues the typed word's check.
    ///
    /// A word begun before the composition (`attachedFragment()`) is completed, not repeated:
    /// only the candidate's part after it is committed, and the check sees the whole word.
    func finishWord(as replacement: String? = nil, suffix: String = "", checked: Bool = true) -> [SessionEffect] {
        let fragment = attachedFragment()
        let before = context.before
        let word = composition.takeWord()
        let completion = replacement.flatMap { Self.completion(of: $0, after: fragment) }
        let effects = [commit((completion ?? word) + suffix), .hidePreedit]
        // Inside a word, what was typed is not a word of its own: nothing to check.
        if checked, completion == nil, !isInsideAWord(fragment: fragment) {
            let wordStart = before.unicodeScalars.count - fragment.unicodeScalars.count
            corrections.queueCheck(
                word: fragment + word,
                before: String(String.UnicodeScalarView(before.unicodeScalars.prefix(wordStart))))
        }
        return effects
    }

    /// The start of the composing word that is already in the application's text, right before
    /// the cursor: letters passed on behind a BackSpace (`PassedKeyOrdering`), or a word the
    /// cursor was put at the end of. The predictor completes the whole word, so a candidate
    /// commits only what follows this (a candidate committed whole doubled it: `rrecommend`).
    func attachedFragment() -> String {
        guard !composition.typed.isEmpty else { return "" }
        return Self.attachedFragment(before: context.before, typed: composition.typed)
    }

    /// Whether the composition, after `fragment` (its `attachedFragment()`), sits inside a word
    /// of the text: letters before it and after the cursor (typing before a word, or after one,
    /// is not inside it).
    func isInsideAWord(fragment: String) -> Bool {
        context.wordContinuesAfterCursor && !fragment.isEmpty
    }

    /// The part of the word ending `before + typed` that lies in `before`.
    public static func attachedFragment(before: String, typed: String) -> String {
        guard let first = typed.unicodeScalars.first, WordText.isWordScalar(first),
            let last = before.unicodeScalars.last
        else { return "" }
        // Nearly every key: the text before ends in a space or punctuation, which no word runs
        // over (a word reaches back only over a letter, a digit or a joiner after one).
        guard WordText.isWordScalar(last) || WordText.isJoiner(last) else { return "" }
        // On the key path: the end of `before` is enough (no copy of the whole context), unless
        // the word reaches back to near the start of that end.
        let scalars = before.unicodeScalars
        var tailLength = 64
        while true {
            let tail = scalars.suffix(tailLength)
            let partial = WordText.splitPartialWord(String(String.UnicodeScalarView(tail)) + typed).partial
            let extra = partial.unicodeScalars.count - typed.unicodeScalars.count
            guard extra > 0 else { return "" }
            if extra < tail.count - 2 || tail.startIndex == scalars.startIndex {
                return String(String.UnicodeScalarView(partial.unicodeScalars.prefix(extra)))
            }
            tailLength *= 4
        }
    }

    /// What to commit for the candidate `word` after `fragment`, the word's start already in the
    /// text; nil when the candidate does not begin exactly with it (it would change those letters,
    /// and edits are inserts and deletions proven by a report only).
    public static func completion(of word: String, after fragment: String) -> String? {
        guard !fragment.isEmpty else { return word }
        let scalars = word.unicodeScalars
        guard scalars.count > fragment.unicodeScalars.count, scalars.starts(with: fragment.unicodeScalars) else {
            return nil
        }
        return String(String.UnicodeScalarView(scalars.dropFirst(fragment.unicodeScalars.count)))
    }

    /// Commits a pending autocorrection or space.
    func commitPending(keepSpace: Bool) -> [SessionEffect] {
        if let correction = composition.pendingAutocorrection {
            composition.dropPending()
            return [commit(correction.replacement + (keepSpace ? " " : "")), .hidePreedit]
        }
        if composition.pendingSpace {
            composition.pendingSpace = false
            return keepSpace ? [commit(" "), .hidePreedit] : [.hidePreedit]
        }
        return []
    }

    func commit(_ text: String, learn: Bool = true) -> SessionEffect {
        reached(text, learn: learn)
        context.committed()
        return .commitText(text)
    }

    /// Text the user wrote reached the application (committed by the engine, or the preedit
    /// committed by the client): its words are candidates for learning once their chunk ends.
    func reached(_ text: String, learn: Bool = true) {
        if learn && learningAllowed { learning.reached(text, after: context.before) }
        inserted(text)
    }

    /// Records the queued words (off the key path: from `refreshSuggestions()` and focus-out).
    func runPendingLearning() {
        let ready = learning.takeReady()
        guard !ready.isEmpty, learningAllowed else { return }
        let now = learningTime()
        for (word, before) in ready { predictor.learn(word: word, before: before, now: now) }
    }

    /// Text that reached the application at the cursor (committed or passed through).
    func inserted(_ text: String) {
        learning.inserting(text, after: context.before, learningAllowed: learningAllowed)
        context.inserted(text)
        corrections.tracker.inserted(text)
    }

    func preeditEffect() -> SessionEffect {
        guard let preedit = composition.preedit else { return .hidePreedit }
        context.preeditShown(preedit.text)
        return .updatePreedit(preedit)
    }

    /// The mark after a candidate that corrects the typed prefix (`tge` → `the ✎`).
    public static let correctionMark = " \u{270E}"

    func table() -> CandidateTable {
        suggestions.table(pageSize: pageSize, keys: settings.selectionKeys, mark: Self.correctionMark)
    }

    func hideTable() -> [SessionEffect] {
        guard suggestions.isShown else { return [] }
        suggestions.isShown = false
        suggestions.cursorVisible = false
        return [.hideLookupTable]
    }

    func clearComposition() {
        composition.clear()
        suggestions.clear()
        lastSuggestionKey = nil
        corrections.dropPendingCheck()
        corrections.closePanel()
    }

    /// The client commits the preedit on focus-out and reset; record it as context.
    func absorbPreeditIntoContext() {
        reached(composition.shownText)
    }

    func endsWithSpace(_ text: String) -> Bool {
        guard let last = text.unicodeScalars.last else { return false }
        return last == " "
    }

    /// The checker and the predictor weigh typos by the settings' layout (`KeyboardLayout.chosen`).
    func useKeyboardLayout() {
        checker = SpellChecker(pack: predictor.pack, layout: .named(settings.keyboardLayout))
        if predictor.options.keyboardLayout != settings.keyboardLayout {
            predictor.options.keyboardLayout = settings.keyboardLayout
        }
    }

    /// Candidates per page, in `SessionSettings.pageSizes` (the rule the settings reader applies).
    var pageSize: Int { SessionSettings.pageSize(forSetting: settings.pageSize) }

    /// Seconds on `clock` for learned entries' last use: an injected or disturbed clock that
    /// reports a negative time counts as the origin rather than trapping on the key path.
    func learningTime() -> Int64 { max(0, clock.now()) / 1000 }
}
