/// Corrections in the session: decisions in `Corrections` (check, autocorrection, the panel, the
/// auxiliary text) and `CorrectionTracker` (verified fix plans); carried out here, where the
/// commits, the known text and learning are.

extension InputSession {
    /// The fix Space should apply instead of the typed word, per the autocorrect setting.
    func autocorrection(for word: String) -> String? {
        guard settings.checkSpelling, !contentType.isSecret else { return nil }
        return corrections.autocorrection(
            for: word, before: context.before, mode: settings.autocorrect, checker: checker)
    }

    /// Checks the word finished by the last key, now that the key has been answered.
    func runPendingCheck() -> [SessionEffect] {
        let known = settings.checkSpelling && context.isKnown ? context.before : nil
        guard corrections.runPendingCheck(before: known, checker: checker) else { return [] }
        return auxiliaryEffects()
    }

    /// Applies a flag's fix after proving the word is exactly where it was.
    func applyFix(id: Int, replacement: String?) -> KeyResult {
        // Only what the client has reported proves the word's position; a word this key commits
        // below goes out before the edits, in order, so it needs no report.
        let refusal = context.fixRefusal(clientReports: capabilities.contains(.surroundingText))
        var effects: [SessionEffect] = []
        if !composition.typed.isEmpty {
            effects += finishWord()
        } else {
            effects += commitPending(keepSpace: true)
        }
        corrections.closePanel()
        effects += hideTable()
        if let refusal {
            corrections.tracker.remove(id: id)
            notice = refusal.description
            return KeyResult(handled: true, effects: effects + auxiliaryEffects(), needsSuggestions: true)
        }
        let chosen = replacement ?? corrections.flags.first { $0.id == id }?.flag.replacements.first ?? ""
        switch corrections.tracker.plan(id: id, replacement: chosen, before: Substring(context.before)) {
        case .failure(let why):
            corrections.tracker.remove(id: id)
            notice = why.description
            return KeyResult(handled: true, effects: effects + auxiliaryEffects(), needsSuggestions: true)
        case .success(let edits):
            for edit in edits {
                switch edit {
                case .deleteSurroundingText(_, let count):
                    context.fixDeleted(count: count)
                    effects.append(edit)
                case .commitText(let text):
                    context.fixInserted(text)
                    effects.append(edit)
                    if learningAllowed, LearningPolicy.mayRecord(chosen) {
                        predictor.learn(word: chosen, before: "", now: learningTime())
                    }
                default:
                    effects.append(edit)
                }
            }
            corrections.tracker.applied(id: id, replacement: chosen)
            lastSuggestionKey = nil
            // One commit per answer: Wayland clients keep only the last (EditBatch). LibreOffice,
            // which shows the preedit in its text, keeps the order it was proven with: it cut the
            // word's space (`I sawthe cat`) when the preedit went before the deletion. GNOME Shell
            // batches whatever the application: Firefox on Wayland also shows the preedit in its
            // text, and the uncoalesced answer gave `I sthe cat` there (2026-12-02, fifth session).
            let answer = effects + auxiliaryEffects()
            let batches = focusClient?.editsArriveInBatches ?? false
            return KeyResult(
                handled: true, effects: clientEchoesPreedit && !batches ? answer : EditBatch.coalesced(answer),
                needsSuggestions: true)
        }
    }

    /// Keys while the correction panel is open; nil hands the key to the normal rules.
    func panelKey(_ event: KeyEvent) -> KeyResult? {
        switch corrections.panelKey(event, keepWordKey: settings.keepWordKey) {
        case nil:
            return nil
        case .redraw:
            return KeyResult(
                handled: true, effects: [.updateLookupTable(panelTable())] + auxiliaryEffects(), needsSuggestions: false
            )
        case .close:
            return closePanel()
        case .applyFix(let id):
            return applyFix(id: id, replacement: nil)
        case .passOn:
            // The key does what it always does. The candidates the panel replaced are not
            // shown, so no selection key may pick one of them.
            suggestions.clear()
            return nil
        }
    }

    /// Closes the panel; the user dismissed a popup, so no candidates pop up in its place.
    func closePanel() -> KeyResult {
        corrections.closePanel()
        var effects: [SessionEffect] = [.hideLookupTable]
        suggestions.clear()
        effects += auxiliaryEffects()
        return KeyResult(handled: true, effects: effects, needsSuggestions: false)
    }

    func panelTable() -> CandidateTable { corrections.panelTable(pageSize: pageSize) }

    /// The auxiliary text for the current state (`Corrections.auxiliaryText`), when it changed.
    func auxiliaryEffects() -> [SessionEffect] {
        let text = corrections.auxiliaryText(
            notice: notice, dictationStatus: dictationStatus, cloudHint: cloudCheck.isWaiting ? Self.cloudHint : nil)
        guard text != shownAuxiliary else { return [] }
        shownAuxiliary = text
        return [text.map { .updateAuxiliaryText($0) } ?? .hideAuxiliaryText]
    }

    /// Shows a short message from the glue (a refused pack, a switched language) in the
    /// auxiliary text, where the session keeps track of it until the next key.
    public func showNotice(_ text: String) -> [SessionEffect] {
        notice = text
        return auxiliaryEffects()
    }
}
