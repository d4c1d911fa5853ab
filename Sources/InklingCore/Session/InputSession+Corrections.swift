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

    /// Checks the word finished by the last key, now that the key has been answered, by at most
    /// about `limit` units of search (`done`: nothing is left to check).
    func runPendingCheck(work limit: Int) -> (effects: [SessionEffect], done: Bool) {
        let known = settings.checkSpelling && context.isKnown ? context.before : nil
        let step = corrections.advanceChecks(before: known, checker: checker, work: limit)
        return (step.flagged ? auxiliaryEffects() : [], step.done)
    }

    /// Applies a flag's fix after proving the word is exactly where it was.
    ///
    /// When the application reports its text but has not yet reported what the engine last put
    /// before the cursor, the fix waits for that report (`AwaitedFix`) instead of being refused
    /// at once: through GNOME Shell, Firefox's report came a moment after the fix key in 2 of 4
    /// runs (2026-12-02, sixth session), and the fix was refused although the next report proved
    /// the word's place.
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
        if refusal == .unconfirmed {
            awaitedFixSerial += 1
            awaitedFix = AwaitedFix(id: id, replacement: replacement, serial: awaitedFixSerial)
            return KeyResult(handled: true, effects: effects + auxiliaryEffects(), needsSuggestions: true)
        }
        if let refusal {
            refuseFix(id: id, refusal)
            return KeyResult(handled: true, effects: effects + auxiliaryEffects(), needsSuggestions: true)
        }
        return KeyResult(
            handled: true, effects: carryOutFix(id: id, replacement: replacement, after: effects),
            needsSuggestions: true)
    }

    /// Drops a fix and says why.
    func refuseFix(id: Int, _ refusal: FixRefusal) {
        corrections.tracker.remove(id: id)
        noteRefusal(refusal)
    }

    /// Shows why a fix was not applied (until the next key) and counts it for the trace.
    func noteRefusal(_ refusal: FixRefusal) {
        notice = refusal.description
        lastFixRefusal = refusal
        fixRefusals += 1
    }

    /// The verified plan's edits after `effects` (what the fix key committed first), or the
    /// reason it failed.
    private func carryOutFix(id: Int, replacement: String?, after effects: [SessionEffect]) -> [SessionEffect] {
        var effects = effects
        let chosen = replacement ?? corrections.flags.first { $0.id == id }?.flag.replacements.first ?? ""
        switch corrections.tracker.plan(id: id, replacement: chosen, before: Substring(context.before)) {
        case .failure(let why):
            refuseFix(id: id, why)
            return effects + auxiliaryEffects()
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
            return clientEchoesPreedit && !batches ? answer : EditBatch.coalesced(answer)
        }
    }

    /// A report came while a fix waits for one: applied once the report proves the text before
    /// the cursor, refused with the reason when it shows something else.
    func resolveAwaitedFix() -> [SessionEffect] {
        guard let awaited = awaitedFix else { return [] }
        let refusal = context.fixRefusal(clientReports: capabilities.contains(.surroundingText))
        if refusal == .unconfirmed { return [] }  // an earlier state: the next report may prove it
        awaitedFix = nil
        if let refusal {
            refuseFix(id: awaited.id, refusal)
            return auxiliaryEffects()
        }
        return carryOutFix(id: awaited.id, replacement: awaited.replacement, after: [])
    }

    /// No report proved the text in time (`AwaitedFix.waitMilliseconds`): the fix is refused.
    public func awaitedReportTimedOut(serial: Int) -> [SessionEffect] {
        guard let awaited = awaitedFix, awaited.serial == serial else { return [] }
        awaitedFix = nil
        refuseFix(id: awaited.id, .unconfirmed)
        return auxiliaryEffects()
    }

    /// A key, focus change or reset ends the wait for a report: the user moved on (`saying`:
    /// the reason is shown now).
    func abandonAwaitedFix(saying: Bool) {
        guard let awaited = awaitedFix else { return }
        awaitedFix = nil
        if saying {
            refuseFix(id: awaited.id, .unconfirmed)
        } else {
            corrections.tracker.remove(id: awaited.id)
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
