/// Dictation in the session (issue 16; decisions in `DictationController`).

extension InputSession {
    /// The auxiliary text after `dictationStatus` changed.
    public func refreshAuxiliary() -> [SessionEffect] { auxiliaryEffects() }

    /// Commits a finalized dictated utterance as typed words would be: what is composed first,
    /// then the words spaced and capitalised by `DictationController.textToCommit`, followed by
    /// a pending space; learned like typed words (never in PRIVATE fields or off the record,
    /// see `learningAllowed`). Nothing in password or PIN fields.
    public func commitDictated(_ utterance: String) -> [SessionEffect] {
        guard !contentType.isSecret else { return [] }
        var effects: [SessionEffect] = []
        if !composition.typed.isEmpty {
            effects.append(commit(composition.takeWord()))
        } else {
            effects += commitPending(keepSpace: true)
        }
        let text = DictationController.textToCommit(utterance, before: context.isKnown ? context.before : nil)
        guard !text.isEmpty else { return effects + [preeditEffect()] }
        effects.append(commit(text))
        composition.pendingSpace = true
        lastSuggestionKey = nil
        return effects + [preeditEffect()] + hideTable()
    }
}
