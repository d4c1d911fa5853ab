/// The input session: a state machine from key events and client notifications to effects.
///
/// Everything the user sees is decided here, so it is tested here without IBus. The IBus glue
/// forwards callbacks and renders the returned effects in order; it decides nothing.
///
/// Composition model: letters build the current word as underlined preedit; the lookup table
/// offers completions of it, or next words after a space. A selected candidate is committed and
/// followed by a *pending space*, shown as (not underlined) preedit: the next letter commits it,
/// closing punctuation drops it (`word,` never `word ,`), and an explicit Space just confirms it.
/// The preedit is shown in commit-on-focus-out mode, so the client, not the engine, commits it
/// when focus leaves or the context is reset; the engine therefore never commits on reset.
///
/// Corrections: a finished word is checked; a likely typo becomes a chip (`teh → the`) in the
/// auxiliary text. A fix is applied only through `CorrectionTracker`'s verified plan: delete
/// backward from the cursor to the word's start, then insert the fix and what followed it.
public final class InputSession {
    /// The predictor behind the candidates.
    public internal(set) var predictor: Predictor
    /// Settings, followed live; written only by the settings reader, through `apply(_:)`.
    public private(set) var settings: SessionSettings
    /// The local checker.
    public internal(set) var checker: SpellChecker

    /// What the client can do.
    public internal(set) var capabilities: ClientCapabilities = [.preedit, .auxiliaryText, .lookupTable, .focus]
    /// The current field's content type.
    public internal(set) var contentType = ContentType()
    /// The flags of the current text, the word waiting for its check and the correction panel.
    public internal(set) var corrections = Corrections()

    /// The word being typed, a pending space or autocorrection.
    var composition = Composition()
    /// What the engine knows of the text before the cursor.
    var context = TextContext()
    /// The focused input context (PreeditRecovery.swift) and a word its window lost at focus-out.
    var focusClient: FocusClient? = nil
    var preeditRecovery = PreeditRecovery()
    /// Input contexts that stopped reporting their text (StoppedReportingContexts.swift).
    var stoppedReportingContexts = StoppedReportingContexts()
    /// The suggestions (marked: they correct a likely typo in the typed prefix).
    var suggestions = CandidateMenu()
    var lastSuggestionKey: String? = nil
    /// A passed-on key waiting for the client's report (PassedKeyOrdering.swift).
    var passedKeyOrdering = PassedKeyOrdering()
    /// Committed words on their way to the user model.
    var learning = LearningQueue()

    /// The focused field has been a password, PIN or PRIVATE field: its text may still hold what
    /// was typed then ("show password" turns a password field into a free-form one), so nothing
    /// in it is learned or sent until focus moves to another field.
    var fieldHeldConfidentialText = false
    /// `fieldHeldConfidentialText` came from the type held at focus-in, which may be the previous
    /// field's: ibus-daemon sends the new field's type after focus-in (1.5.27: focus-in, then
    /// set-content-type). A free-form type arriving before any key replaces it.
    var confidentialOnlyByTypeAtFocusIn = false

    /// The product's clock (the glue's real one; tests inject their own).
    public var clock: ProductClock
    /// The cloud check: scheduler, recent answers, cancellations to send.
    var cloudCheck = CloudCheck()
    /// When to ask the cloud and which answer is still wanted.
    public var cloud: CloudScheduler { cloudCheck.scheduler }

    var shownAuxiliary: String? = nil
    /// A one-off message (a refused fix), shown until the next change.
    var notice: String? = nil
    /// A fix waiting for the application's report (`AwaitedFix`).
    var awaitedFix: AwaitedFix? = nil
    var awaitedFixSerial = 0
    /// The reason the last fix was refused, and how many were (for the engine's trace).
    public internal(set) var lastFixRefusal: FixRefusal? = nil
    public internal(set) var fixRefusals = 0

    /// Creates a session over a predictor.
    public init(predictor: Predictor, settings: SessionSettings = SessionSettings(), clock: ProductClock = .monotonic) {
        self.predictor = predictor
        self.clock = clock
        self.settings = settings
        checker = SpellChecker(pack: predictor.pack, layout: .named(settings.keyboardLayout))
        useKeyboardLayout()
    }

    /// The word being typed (for tests and diagnostics).
    public var composingText: String { composition.typed }
    /// The candidates currently offered.
    public var currentCandidates: [String] { suggestions.isShown && !corrections.panelIsOpen ? suggestions.items : [] }
    /// The engine's view of the text before the cursor (not including the preedit).
    public var knownContext: String { context.before }
    /// Whether this client includes the engine's own preedit in the surrounding text it reports
    /// (LibreOffice does): proven once a report minus a preedit is exactly the known text.
    public var clientEchoesPreedit: Bool { context.clientEchoesPreedit }
    /// Whether the correction panel (every flag with its explanation) is shown in the table.
    public var correctionPanelIsOpen: Bool { corrections.panelIsOpen }
    /// The fix waiting for the application's report, if any: the glue ends the wait after
    /// `AwaitedFix.waitMilliseconds` with `awaitedReportTimedOut(serial:)`.
    public var waitingFix: AwaitedFix? { awaitedFix }

    var isInert: Bool { contentType.isSecret || !capabilities.contains(.preedit) }

    /// Whether committed words are learned: not in password, PIN or PRIVATE fields, not off the record.
    public var learningAllowed: Bool {
        settings.learning && !settings.offTheRecord && !contentType.isSecret && !contentType.isPrivate
            && !fieldHeldConfidentialText
    }

    /// The settings reader's new settings (the only way settings change: the session reports
    /// what the user asks for as `KeyResult.intents`, and the reader applies it here).
    public func apply(_ settings: SessionSettings) {
        let old = self.settings
        self.settings = settings
        lastSuggestionKey = nil
        if settings.keyboardLayout != old.keyboardLayout { useKeyboardLayout() }
    }

    /// Uses another predictor (a language switch); the word being typed is committed as shown.
    /// The settings reader then applies the new language's settings (`apply(_:)`).
    public func switchPredictor(to predictor: Predictor) -> [SessionEffect] {
        // The word on screen stays in the text, as shown (the preedit alone would vanish).
        let kept = commitShownComposition()
        self.predictor = predictor
        useKeyboardLayout()
        clearComposition()
        abandonAwaitedFix(saying: false)
        corrections.tracker.expireAll()
        learning.dropAll()
        return kept + [.hidePreedit, .hideLookupTable] + auxiliaryEffects()
    }

    // MARK: Client notifications

    /// The client gained focus: a new field, so nothing from the previous one carries over.
    public func focusIn() -> [SessionEffect] {
        clearComposition()
        passedKeyOrdering.clear()  // PassedKeyOrdering.swift
        context.focusIn()
        recallStoppedReporting()
        fieldHeldConfidentialText = contentType.isSecret || contentType.isPrivate
        confidentialOnlyByTypeAtFocusIn = fieldHeldConfidentialText
        abandonAwaitedFix(saying: false)
        corrections.tracker.clear()
        dropCloudRequest()
        predictor.reset()
        shownAuxiliary = nil
        notice = nil
        return [.hidePreedit, .hideLookupTable, .hideAuxiliaryText] + recoverLostWord()
    }

    /// The client lost focus. The client commits the preedit itself (commit-on-focus-out mode).
    ///
    /// The unfinished chunk is not learned: a focus change does not prove it ended where a word
    /// would, nor that it was prose. Chromium sends the first keys typed into a password field
    /// that a page focused by script to the text field's context, as free text, then takes the
    /// context away (focus-out) without ever telling IBus the purpose: those keys are the start
    /// of the password.
    public func focusOut() -> [SessionEffect] {
        let effects = suggestions.isShown || composition.hasWordOrSpace ? [SessionEffect.hideLookupTable] : []
        abandonAwaitedFix(saying: false)  // the report would come from another field
        noteWordAtFocusOut()
        absorbPreeditIntoContext()
        learning.dropUnfinished()
        runPendingLearning()
        clearComposition()
        passedKeyOrdering.clear()  // PassedKeyOrdering.swift
        return effects
    }

    /// The client reset the context (it commits the preedit itself, so the engine must not).
    ///
    /// A reset can mean another widget (Qt sends only a reset when focus moves between widgets
    /// of one window) or a cursor moved by the application: the position is unknown until the
    /// client reports its text again.
    public func reset() -> [SessionEffect] {
        preeditRecovery.reset()
        learning.dropUnfinished()
        clearComposition()
        abandonAwaitedFix(saying: true)  // the cursor may have moved: the position is unknown
        context.invalidate()
        corrections.tracker.expireAll()
        return [.hidePreedit, .hideLookupTable] + auxiliaryEffects()
    }

    /// The client's capabilities changed.
    public func setCapabilities(_ capabilities: ClientCapabilities) {
        context.capabilityChanged(
            had: self.capabilities.contains(.surroundingText), has: capabilities.contains(.surroundingText))
        noteReportingOfFocusedContext(has: capabilities.contains(.surroundingText))
        self.capabilities = capabilities
    }

    /// The field's purpose and hints changed.
    public func setContentType(_ contentType: ContentType) -> [SessionEffect] {
        self.contentType = contentType
        if confidentialOnlyByTypeAtFocusIn, !contentType.isSecret, !contentType.isPrivate {
            fieldHeldConfidentialText = false
        }
        confidentialOnlyByTypeAtFocusIn = false
        if contentType.isSecret || contentType.isPrivate {
            fieldHeldConfidentialText = true
            // Words typed before the field turned confidential were typed in the open, but
            // their chunk may continue with confidential text: none of them is learned.
            learning.dropUnfinished()
        }
        if contentType.isSecret {
            let hadSomething = composition.hasWordOrSpace || suggestions.isShown || shownAuxiliary != nil
            // What was typed in the open stays in the field (hiding the preedit would drop it).
            let kept = commitShownComposition()
            clearComposition()
            context.forgetText()
            abandonAwaitedFix(saying: false)
            corrections.tracker.clear()
            dropCloudRequest()
            predictor.reset()
            shownAuxiliary = nil
            return hadSomething ? kept + [.hidePreedit, .hideLookupTable, .hideAuxiliaryText] : []
        }
        return []
    }

    /// The client reported its text and offsets as IBus delivers them.
    ///
    /// Offsets that cannot be code points (Qt's UTF-16 with emoji before the cursor) still give
    /// prediction context when they fit as UTF-16, but no fix is ever applied on them.
    public func setSurroundingText(text: String, cursor: Int, anchor: Int) -> (
        effects: [SessionEffect], needsSuggestions: Bool
    ) {
        guard !contentType.isSecret else { return ([], false) }
        notePassedKeyReport(text: text, cursor: cursor, anchor: anchor)
        let outcome = context.apply(text: text, cursor: cursor, anchor: anchor, shownPreedit: composition.preedit?.text)
        return withAwaitedFix(confirmRecoveredWord(reportOutcome(outcome)))
    }

    /// The client reported its text around the cursor (nil: offsets that cannot be code points).
    ///
    /// The echo of the engine's own commit matches what the engine already knows and changes
    /// nothing, so it never causes a second prediction.
    public func setSurroundingText(_ surrounding: SurroundingText?) -> (
        effects: [SessionEffect], needsSuggestions: Bool
    ) {
        guard !contentType.isSecret else { return ([], false) }
        notePassedKeyReport(surrounding)
        return withAwaitedFix(
            confirmRecoveredWord(reportOutcome(context.apply(surrounding, shownPreedit: composition.preedit?.text))))
    }

    /// A report's answer, followed by the fix that waited for it, when it proves the word's place.
    private func withAwaitedFix(_ answer: (effects: [SessionEffect], needsSuggestions: Bool)) -> (
        effects: [SessionEffect], needsSuggestions: Bool
    ) {
        guard awaitedFix != nil else { return answer }
        let fix = resolveAwaitedFix()
        return (answer.effects + fix, answer.needsSuggestions || !fix.isEmpty)
    }

    /// What a report means for the flags and suggestions: a change the engine did not cause asks
    /// for suggestions at the new position, unless composing.
    func reportOutcome(_ outcome: TextContext.ReportOutcome) -> (effects: [SessionEffect], needsSuggestions: Bool) {
        switch outcome {
        case .unchanged: return ([], false)
        case .changed: corrections.tracker.verify(before: Substring(context.before))
        case .guessed: corrections.tracker.expireAll()
        }
        return (auxiliaryEffects(), !composition.hasWordOrSpace)
    }

    // MARK: Keys

    /// Handles a key event and answers at once; suggestions follow via `refreshSuggestions()`.
    public func processKey(_ event: KeyEvent) -> KeyResult {
        let hadNotice = notice != nil
        // A key before the report that a waiting fix needs: the user moved on; say why it was
        // not applied once the key is answered.
        let abandonsFix = awaitedFix != nil && !event.isRelease && !Keysym.isModifierOnly(event.keyval)
        if abandonsFix { abandonAwaitedFix(saying: false) }
        var result = applyKeyRules(event)
        if abandonsFix, notice == nil {
            noteRefusal(.unconfirmed)
            result.effects += auxiliaryEffects()
        }
        // A one-off message goes with the next key, whatever that key does.
        if hadNotice, !event.isRelease, !Keysym.isModifierOnly(event.keyval) { result.effects += auxiliaryEffects() }
        // Judged under the settings the key asked for (the reader applies them after the answer);
        // nearly every key asks for nothing, and then the settings are not copied.
        let cloudOn =
            result.intents.isEmpty
            ? cloudEnabled(under: settings) : cloudEnabled(under: settings.applying(result.intents))
        if cloudOn, !event.isRelease, !Keysym.isModifierOnly(event.keyval) {
            cloudCheck.scheduler.noteChange(
                now: clock.now(), endsSentence: composition.typed.isEmpty && CloudCheck.endsSentence(context.before))
        }
        return result
    }

    func applyKeyRules(_ event: KeyEvent) -> KeyResult {
        // Typed into (a password field's keys included): a later type change is the field's own.
        if !event.isRelease { confidentialOnlyByTypeAtFocusIn = false }
        if isInert || event.isRelease || Keysym.isModifierOnly(event.keyval) {
            return KeyResult(handled: false, effects: [], needsSuggestions: false)
        }
        context.noteTyped()
        notice = nil
        for handler in Self.keyHandlers {
            if let result = handler(self, event) { return result }
        }
        // Unreachable: the composition handler answers every key.
        return KeyResult(handled: false, effects: [], needsSuggestions: false)
    }

    /// Recomputes the candidates for the current state and checks a finished word; call after a
    /// key is answered. Returns nothing when the state is the one last predicted for.
    public func refreshSuggestions() -> [SessionEffect] {
        refreshTable() + checkFinishedWord()
    }

    /// The table's part of `refreshSuggestions()`: the candidates for the current state (learning
    /// what is ready first, so that the table already knows it). The glue sends it before
    /// `checkFinishedWord()` runs, so the check is off the way from the key to the table.
    public func refreshTable() -> [SessionEffect] {
        guard !isInert else { return [] }
        runPendingLearning()
        guard !corrections.panelIsOpen else { return [] }
        let before: String
        // The start of the word already in the text, before the composition (usually none).
        var fragment = ""
        if !composition.typed.isEmpty {
            fragment = attachedFragment()
            if isInsideAWord(fragment: fragment) {
                // Typed inside a word: no completion fits (it would end before the word's rest).
                lastSuggestionKey = nil
                return hideTable()
            }
            before = context.before + composition.typed
        } else if settings.nextWordPredictions && context.isKnown
            && (composition.pendingSpace || endsWithSpace(context.before))
        {
            before =
                context.before + (composition.pendingAutocorrection.map { $0.replacement } ?? "")
                + (composition.pendingSpace ? " " : "")
        } else {
            lastSuggestionKey = nil
            return hideTable()
        }
        if before == lastSuggestionKey, suggestions.isShown || suggestions.items.isEmpty { return [] }
        lastSuggestionKey = before
        var predicted = predictor.suggestions(before: before, count: settings.candidateCount)
        // The word began before the composition: only candidates that keep its start.
        if !fragment.isEmpty { predicted.removeAll { Self.completion(of: $0.text, after: fragment) == nil } }
        let wasShown = suggestions.isShown
        suggestions.replace(items: predicted.map(\.text), marks: predicted.map(\.isCorrection))
        if suggestions.items.isEmpty { return hideTable() }
        let previouslySent = suggestions.lastSent
        let table = table()
        // The page on screen would not change (a longer prefix of the same words): nothing to send.
        if wasShown, previouslySent == suggestions.lastSent { return [] }
        return [.updateLookupTable(table)]
    }

    /// The check of the word the last key finished (a chip in the auxiliary text when it is a
    /// likely typo): nothing the table shows depends on it, so it runs after `refreshTable()`.
    public func checkFinishedWord() -> [SessionEffect] {
        advanceFinishedWordCheck(work: .max).effects
    }

    /// `checkFinishedWord()` a slice at a time: at most about `limit` units of work of its
    /// search of near words (a long word in a large pack visits ~10^5). While `done` is false,
    /// call again at the next idle moment, after any key that came meanwhile.
    public func advanceFinishedWordCheck(work limit: Int) -> (effects: [SessionEffect], done: Bool) {
        guard !isInert else {
            corrections.dropPendingCheck()
            return ([], true)
        }
        return runPendingCheck(work: limit)
    }

    // MARK: Dictation (issue 16; decisions in `DictationController`)

    /// The dictation state shown in the auxiliary text (`🎙 listening…` and the partial), set by
    /// the glue from `DictationController`; a notice still takes precedence.
    public var dictationStatus: String? = nil
}
