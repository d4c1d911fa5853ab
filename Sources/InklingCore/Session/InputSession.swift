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
    public private(set) var predictor: Predictor
    /// Settings, followed live.
    public var settings: SessionSettings {
        didSet {
            lastSuggestionKey = nil
            if settings.keyboardLayout != oldValue.keyboardLayout {
                checker = SpellChecker(pack: predictor.pack, layout: .named(settings.keyboardLayout))
            }
        }
    }
    /// The local checker.
    public private(set) var checker: SpellChecker

    /// What the client can do.
    public private(set) var capabilities: ClientCapabilities = [.preedit, .auxiliaryText, .lookupTable, .focus]
    /// The current field's content type.
    public private(set) var contentType = ContentType()
    /// The flags of the current text.
    public private(set) var corrections = CorrectionTracker()

    /// The word being typed, a pending space or autocorrection.
    private var composition = Composition()
    /// What the engine knows of the text before the cursor.
    private var context = TextContext()
    /// The suggestions (marked: they correct a likely typo in the typed prefix).
    private var suggestions = CandidateMenu()
    private var lastSuggestionKey: String? = nil
    /// Committed words on their way to the user model.
    private var learning = LearningQueue()
    /// A word the user finished typing, to check once the key is answered.
    private var pendingCheck: (word: String, before: String)? = nil

    /// The focused field has been a password, PIN or PRIVATE field: its text may still hold what
    /// was typed then ("show password" turns a password field into a free-form one), so nothing
    /// in it is learned or sent until focus moves to another field.
    private var fieldHeldConfidentialText = false
    /// `fieldHeldConfidentialText` came from the type held at focus-in, which may be the previous
    /// field's: ibus-daemon sends the new field's type after focus-in (1.5.27: focus-in, then
    /// set-content-type). A free-form type arriving before any key replaces it.
    private var confidentialOnlyByTypeAtFocusIn = false

    /// Milliseconds on a monotonic clock; tests inject their own.
    public var clock: () -> Int64 = InputSession.monotonicMilliseconds
    /// The cloud check: scheduler, recent answers, cancellations to send.
    private var cloudCheck = CloudCheck()
    /// When to ask the cloud and which answer is still wanted.
    public var cloud: CloudScheduler { cloudCheck.scheduler }

    private var panelOpen = false
    /// The correction panel: every flag with its explanation, in place of the suggestions.
    private var panel = CandidateMenu()
    private var shownAuxiliary: String? = nil
    /// A one-off message (a refused fix), shown until the next change.
    private var notice: String? = nil

    /// Creates a session over a predictor.
    public init(predictor: Predictor, settings: SessionSettings = SessionSettings()) {
        self.predictor = predictor
        self.settings = settings
        checker = SpellChecker(pack: predictor.pack, layout: .named(settings.keyboardLayout))
    }

    /// The word being typed (for tests and diagnostics).
    public var composingText: String { composition.typed }
    /// The candidates currently offered.
    public var currentCandidates: [String] { suggestions.isShown && !panelOpen ? suggestions.items : [] }
    /// The engine's view of the text before the cursor (not including the preedit).
    public var knownContext: String { context.before }
    /// Whether this client includes the engine's own preedit in the surrounding text it reports
    /// (LibreOffice does): proven once a report minus a preedit is exactly the known text.
    public var clientEchoesPreedit: Bool { context.clientEchoesPreedit }
    /// Whether the correction panel (every flag with its explanation) is shown in the table.
    public var correctionPanelIsOpen: Bool { panelOpen }

    private var isInert: Bool { contentType.isSecret || !capabilities.contains(.preedit) }

    /// Whether committed words are learned: not in password, PIN or PRIVATE fields, not off the record.
    public var learningAllowed: Bool {
        settings.learning && !settings.offTheRecord && !contentType.isSecret && !contentType.isPrivate && !fieldHeldConfidentialText
    }

    /// Uses another predictor (a language switch); the word being typed is committed as shown.
    public func switchPredictor(to predictor: Predictor) -> [SessionEffect] {
        // The word on screen stays in the text, as shown (the preedit alone would vanish).
        let kept = commitShownComposition()
        self.predictor = predictor
        // The usual layout of the pack's language weights its typos (QWERTZ for German, …).
        settings.keyboardLayout = KeyboardLayout.forLanguage(predictor.pack.language).name
        settings.language = predictor.pack.language
        predictor.options.keyboardLayout = settings.keyboardLayout
        checker = SpellChecker(pack: predictor.pack, layout: .named(settings.keyboardLayout))
        clearComposition()
        corrections.expireAll()
        learning.dropAll()
        return kept + [.hidePreedit, .hideLookupTable] + auxiliaryEffects()
    }

    /// Commits what the preedit shows (the typed word, an autocorrection, a pending space),
    /// unlearned, for changes that end the composition without the client committing it.
    private func commitShownComposition() -> [SessionEffect] {
        let shown = composition.shownText
        guard !shown.isEmpty else { return [] }
        return [commit(shown, learn: false)]
    }

    // MARK: Client notifications

    /// The client gained focus: a new field, so nothing from the previous one carries over.
    public func focusIn() -> [SessionEffect] {
        clearComposition()
        context.focusIn()
        fieldHeldConfidentialText = contentType.isSecret || contentType.isPrivate
        confidentialOnlyByTypeAtFocusIn = fieldHeldConfidentialText
        corrections.clear()
        dropCloudRequest()
        predictor.reset()
        shownAuxiliary = nil
        notice = nil
        return [.hidePreedit, .hideLookupTable, .hideAuxiliaryText]
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
        absorbPreeditIntoContext()
        learning.dropUnfinished()
        runPendingLearning()
        clearComposition()
        return effects
    }

    /// The client reset the context (it commits the preedit itself, so the engine must not).
    ///
    /// A reset can mean another widget (Qt sends only a reset when focus moves between widgets
    /// of one window) or a cursor moved by the application: the position is unknown until the
    /// client reports its text again.
    public func reset() -> [SessionEffect] {
        learning.dropUnfinished()
        clearComposition()
        context.invalidate()
        corrections.expireAll()
        return [.hidePreedit, .hideLookupTable] + auxiliaryEffects()
    }

    /// The client's capabilities changed.
    public func setCapabilities(_ capabilities: ClientCapabilities) {
        context.capabilityChanged(had: self.capabilities.contains(.surroundingText), has: capabilities.contains(.surroundingText))
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
            corrections.clear()
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
    public func setSurroundingText(text: String, cursor: Int, anchor: Int) -> (effects: [SessionEffect], needsSuggestions: Bool) {
        guard !contentType.isSecret else { return ([], false) }
        return reportOutcome(context.apply(text: text, cursor: cursor, anchor: anchor, shownPreedit: composition.preedit?.text))
    }

    /// The client reported its text around the cursor (nil: offsets that cannot be code points).
    ///
    /// The echo of the engine's own commit matches what the engine already knows and changes
    /// nothing, so it never causes a second prediction.
    public func setSurroundingText(_ surrounding: SurroundingText?) -> (effects: [SessionEffect], needsSuggestions: Bool) {
        guard !contentType.isSecret else { return ([], false) }
        return reportOutcome(context.apply(surrounding, shownPreedit: composition.preedit?.text))
    }

    /// What a report means for the flags and suggestions: a change the engine did not cause asks
    /// for suggestions at the new position, unless composing.
    private func reportOutcome(_ outcome: TextContext.ReportOutcome) -> (effects: [SessionEffect], needsSuggestions: Bool) {
        switch outcome {
        case .unchanged: return ([], false)
        case .changed: corrections.verify(before: Substring(context.before))
        case .guessed: corrections.expireAll()
        }
        return (auxiliaryEffects(), !composition.hasWordOrSpace)
    }

    // MARK: Keys

    /// Handles a key event and answers at once; suggestions follow via `refreshSuggestions()`.
    public func processKey(_ event: KeyEvent) -> KeyResult {
        let hadNotice = notice != nil
        var result = applyKeyRules(event)
        // A one-off message goes with the next key, whatever that key does.
        if hadNotice, !event.isRelease, !Keysym.isModifierOnly(event.keyval) { result.effects += auxiliaryEffects() }
        if cloudEnabled, !event.isRelease, !Keysym.isModifierOnly(event.keyval) {
            cloudCheck.scheduler.noteChange(now: clock(), endsSentence: composition.typed.isEmpty && CloudCheck.endsSentence(context.before))
        }
        return result
    }

    private func applyKeyRules(_ event: KeyEvent) -> KeyResult {
        // Typed into (a password field's keys included): a later type change is the field's own.
        if !event.isRelease { confidentialOnlyByTypeAtFocusIn = false }
        if isInert || event.isRelease || Keysym.isModifierOnly(event.keyval) {
            return KeyResult(handled: false, effects: [], needsSuggestions: false)
        }
        context.noteTyped()
        notice = nil
        if panelOpen, let result = panelKey(event) { return result }
        if let binding = settings.applyFixKey, binding.matches(event), let newest = corrections.flags.first {
            return applyFix(id: newest.id, replacement: nil)
        }
        if let binding = settings.correctionPanelKey, binding.matches(event), !corrections.flags.isEmpty {
            panelOpen = true
            panel.cursor = 0
            return KeyResult(handled: true, effects: [.updateLookupTable(panelTable())] + auxiliaryEffects(), needsSuggestions: false)
        }
        if let binding = settings.keepWordKey, binding.matches(event) {
            if !composition.typed.isEmpty {
                corrections.keep(word: composition.typed)
                return KeyResult(handled: true, effects: finishWord(checked: false) + hideTable() + auxiliaryEffects(), needsSuggestions: true)
            }
            if let newest = corrections.flags.first {
                corrections.keep(id: newest.id)
                return KeyResult(handled: true, effects: auxiliaryEffects(), needsSuggestions: false)
            }
        }
        if let binding = settings.offTheRecordKey, binding.matches(event) {
            settings.offTheRecord.toggle()
            learning.dropUnfinished()
            notice = settings.offTheRecord ? "off the record: nothing is learned or sent" : "back on the record"
            return KeyResult(handled: true, effects: auxiliaryEffects(), needsSuggestions: false)
        }
        // Ctrl with a selection key forgets that learned word (the peer's convention).
        if suggestions.isShown, event.modifiers.intersection(.shortcut) == .control, (Keysym.f1...Keysym.f9).contains(event.keyval) {
            if let index = suggestions.index(row: Int(event.keyval - Keysym.f1)) {
                let word = suggestions.items[index]
                let known = predictor.userModel.knows(WordText.key(word))
                predictor.updateUserModel { $0.forget(word) }
                notice = known ? "forgot \u{201C}\(word)\u{201D}" : "\u{201C}\(word)\u{201D} was not learned"
                lastSuggestionKey = nil
                return KeyResult(handled: true, effects: auxiliaryEffects(), needsSuggestions: true)
            }
        }
        if event.isShortcut {
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        }
        switch event.keyval {
        case Keysym.backSpace: return backspace()
        case Keysym.space: return space()
        case Keysym.returnKey, Keysym.keypadEnter: return returnKey()
        case Keysym.escape: return escape()
        case Keysym.tab, Keysym.down:
            if suggestions.isShown { return moveHighlight(by: 1) }
            return passThrough(
                flushing: true, appending: event.keyval == Keysym.tab ? "\t" : nil, invalidatesContext: event.keyval != Keysym.tab)
        case Keysym.isoLeftTab, Keysym.up:
            if suggestions.isShown { return moveHighlight(by: -1) }
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        case Keysym.pageDown, Keysym.pageUp:
            if suggestions.isShown { return page(forward: event.keyval == Keysym.pageDown) }
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        case Keysym.f1...Keysym.f9:
            if suggestions.isShown, let index = suggestions.index(row: Int(event.keyval - Keysym.f1)) { return select(index) }
            return passThrough(flushing: true, appending: nil, invalidatesContext: false)
        default:
            break
        }
        guard let character = event.character, character.value >= 0x20, character.value != 0x7F else {
            // Cursor movement, Delete and every other non-typing key: the application's.
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        }
        let isDigit = character.properties.generalCategory == .decimalNumber
        if isDigit, settings.selectionKeys == .digits, suggestions.isShown, ("1"..."9").contains(character) {
            if let index = suggestions.index(row: Int(character.value - 0x31)) { return select(index) }
        }
        // Apostrophes and hyphens join a word only inside it (`don't`, `well-known`).
        if !isDigit && (WordText.isWordScalar(character) || (WordText.isJoiner(character) && !composition.typed.isEmpty)) {
            return typeLetter(character)
        }
        return punctuation(character)
    }

    /// A candidate was clicked in the panel (index within the current page).
    public func candidateClicked(pageIndex: Int) -> KeyResult {
        // A row of the shown page; anything else (a stale or hostile index) selects nothing.
        let menu = panelOpen ? panel : suggestions
        guard pageIndex >= 0, pageIndex < menu.shownPageSize else { return KeyResult(handled: false, effects: [], needsSuggestions: false) }
        if panelOpen {
            let index = (panel.cursor / panel.shownPageSize) * panel.shownPageSize + pageIndex
            guard index >= 0, index < corrections.flags.count else { return KeyResult(handled: false, effects: [], needsSuggestions: false) }
            panelOpen = false
            return applyFix(id: corrections.flags[index].id, replacement: nil)
        }
        guard !isInert, suggestions.isShown, let index = suggestions.index(row: pageIndex) else {
            return KeyResult(handled: false, effects: [], needsSuggestions: false)
        }
        return select(index)
    }

    /// A request from the candidate panel's own controls (arrows, page buttons): it moves the
    /// correction panel while that is open, else the suggestions as the keys that do the same.
    public func panelRequest(_ request: CandidatePanelRequest) -> KeyResult {
        guard !isInert else { return KeyResult(handled: false, effects: [], needsSuggestions: false) }
        if panelOpen, !corrections.flags.isEmpty {
            refreshPanelRows()
            switch request {
            case .cursorDown: panel.moveHighlight(by: 1)
            case .cursorUp: panel.moveHighlight(by: -1)
            case .pageDown, .pageUp: panel.page(forward: request == .pageDown, pageSize: pageSize)
            }
            return KeyResult(handled: true, effects: [.updateLookupTable(panelTable())] + auxiliaryEffects(), needsSuggestions: false)
        }
        guard !currentCandidates.isEmpty else { return KeyResult(handled: false, effects: [], needsSuggestions: false) }
        let keyval: UInt32
        switch request {
        case .pageUp: keyval = Keysym.pageUp
        case .pageDown: keyval = Keysym.pageDown
        case .cursorUp: keyval = Keysym.up
        case .cursorDown: keyval = Keysym.down
        }
        return processKey(KeyEvent(keyval: keyval))
    }

    /// Recomputes the candidates for the current state and checks a finished word; call after a
    /// key is answered. Returns nothing when the state is the one last predicted for.
    public func refreshSuggestions() -> [SessionEffect] {
        guard !isInert else { return [] }
        runPendingLearning()
        var effects = runPendingCheck()
        guard !panelOpen else { return effects }
        let before: String
        if !composition.typed.isEmpty {
            before = context.before + composition.typed
        } else if settings.nextWordPredictions && context.isKnown && (composition.pendingSpace || endsWithSpace(context.before)) {
            before = context.before + (composition.pendingAutocorrection.map { $0.replacement } ?? "") + (composition.pendingSpace ? " " : "")
        } else {
            lastSuggestionKey = nil
            return effects + hideTable()
        }
        if before == lastSuggestionKey, suggestions.isShown || suggestions.items.isEmpty { return effects }
        lastSuggestionKey = before
        let predicted = predictor.suggestions(before: before, count: settings.candidateCount)
        suggestions.replace(items: predicted.map(\.text), marks: predicted.map(\.isCorrection))
        if suggestions.items.isEmpty { return effects + hideTable() }
        effects.append(.updateLookupTable(table()))
        return effects
    }

    // MARK: Key rules

    private func typeLetter(_ character: Unicode.Scalar) -> KeyResult {
        var effects = commitPending(keepSpace: true)
        composition.typed.unicodeScalars.append(character)
        effects.append(preeditEffect())
        return KeyResult(handled: true, effects: effects, needsSuggestions: true)
    }

    private func backspace() -> KeyResult {
        if !composition.typed.isEmpty {
            composition.typed.removeLast()
            return KeyResult(handled: true, effects: [preeditEffect()], needsSuggestions: true)
        }
        if let correction = composition.pendingAutocorrection {
            // Undo the autocorrection: exactly what was typed, and the word is kept.
            composition.dropPending()
            corrections.keep(word: correction.typed)
            lastSuggestionKey = nil
            return KeyResult(handled: true, effects: [commit(correction.typed + " "), .hidePreedit] + hideTable(), needsSuggestions: true)
        }
        if composition.pendingSpace {
            composition.pendingSpace = false
            lastSuggestionKey = nil
            return KeyResult(handled: true, effects: [.hidePreedit] + hideTable(), needsSuggestions: false)
        }
        context.deletedBackward()
        corrections.deletedBackward()
        lastSuggestionKey = nil
        return KeyResult(handled: false, effects: hideTable() + auxiliaryEffects(), needsSuggestions: true)
    }

    private func space() -> KeyResult {
        if !composition.typed.isEmpty {
            let highlighted = suggestions.highlighted
            if highlighted == nil, let replacement = autocorrection(for: composition.typed) {
                composition.pendingAutocorrection = .init(replacement: replacement, typed: composition.takeWord())
                composition.pendingSpace = true
                return KeyResult(handled: true, effects: [preeditEffect()] + hideTable(), needsSuggestions: true)
            }
            return KeyResult(handled: true, effects: finishWord(as: highlighted, suffix: " "), needsSuggestions: true)
        }
        if composition.pendingSpace {
            return KeyResult(handled: true, effects: commitPending(keepSpace: true), needsSuggestions: true)
        }
        if suggestions.isShown, let word = suggestions.highlighted {
            return KeyResult(handled: true, effects: [commit(word + " ")] + hideTable(), needsSuggestions: true)
        }
        // Typed by the engine too, so that it keeps its place among the engine's commits (see
        // `punctuation`); what was before it is no better known than it was.
        inserted(" ")
        return KeyResult(handled: true, effects: [.commitText(" ")] + hideTable(), needsSuggestions: true)
    }

    private func returnKey() -> KeyResult {
        var effects: [SessionEffect] = []
        if !composition.typed.isEmpty {
            effects += finishWord(as: suggestions.highlighted)
        } else {
            effects += commitPending(keepSpace: false)
        }
        inserted("\n")
        effects += hideTable()
        return KeyResult(handled: false, effects: effects, needsSuggestions: true)
    }

    private func escape() -> KeyResult {
        if suggestions.isShown {
            lastSuggestionKey = context.before + composition.typed
            return KeyResult(handled: true, effects: hideTable(), needsSuggestions: false)
        }
        return passThrough(flushing: true, appending: nil, invalidatesContext: false)
    }

    private func moveHighlight(by step: Int) -> KeyResult {
        guard !suggestions.items.isEmpty else { return KeyResult(handled: true, effects: [], needsSuggestions: false) }
        suggestions.moveHighlight(by: step)
        return KeyResult(handled: true, effects: [.updateLookupTable(table())], needsSuggestions: false)
    }

    private func page(forward: Bool) -> KeyResult {
        suggestions.page(forward: forward, pageSize: pageSize)
        return KeyResult(handled: true, effects: [.updateLookupTable(table())], needsSuggestions: false)
    }

    private func select(_ index: Int) -> KeyResult {
        guard suggestions.items.indices.contains(index) else { return KeyResult(handled: false, effects: [], needsSuggestions: false) }
        let word = suggestions.items[index]
        var effects: [SessionEffect] = []
        if composition.typed.isEmpty { effects += commitPending(keepSpace: true) }
        composition.typed = ""
        effects.append(commit(word))
        composition.pendingSpace = true
        effects.append(preeditEffect())
        effects += hideTable()
        return KeyResult(handled: true, effects: effects, needsSuggestions: true)
    }

    /// Characters that attach to the word before them, so a pending space is dropped.
    private static let attachesToPrevious: Set<Unicode.Scalar> = [
        ",", ".", ";", ":", "!", "?", ")", "]", "}", "\u{2026}", "\u{201D}", "%",
    ]

    /// A character that is not part of a word: the engine types it, in one commit with the word
    /// or pending space before it. ibus-gtk3 hands a key the engine passes on back to the
    /// application at the end of its event queue, behind keys already queued whose effects
    /// (commits, preedit) arrive first; a slow application (LibreOffice) then inserts it out
    /// of order or loses it. Commits keep their order.
    private func punctuation(_ character: Unicode.Scalar) -> KeyResult {
        var text = ""
        if composition.isEmpty {
            // Nothing composed: what is before the cursor is no better known than it was.
            inserted(String(character))
            lastSuggestionKey = nil
            return KeyResult(handled: true, effects: [.commitText(String(character))] + hideTable() + auxiliaryEffects(), needsSuggestions: true)
        }
        var effects: [SessionEffect]
        if !composition.typed.isEmpty {
            effects = finishWord(suffix: String(character))
        } else {
            if let correction = composition.pendingAutocorrection {
                text = correction.replacement + (Self.attachesToPrevious.contains(character) ? "" : " ")
            } else if composition.pendingSpace {
                text = Self.attachesToPrevious.contains(character) ? "" : " "
            }
            effects = [commit(text + String(character)), .hidePreedit]
        }
        composition.dropPending()
        lastSuggestionKey = nil
        effects += hideTable() + auxiliaryEffects()
        return KeyResult(handled: true, effects: effects, needsSuggestions: true)
    }

    /// Commits whatever is composed, then lets the application have the key.
    private func passThrough(flushing: Bool, appending: String?, invalidatesContext: Bool) -> KeyResult {
        var effects: [SessionEffect] = []
        if flushing {
            if !composition.typed.isEmpty {
                effects += finishWord()
            } else {
                effects += commitPending(keepSpace: true)
            }
        }
        if let appending { inserted(appending) }
        if invalidatesContext {
            // The cursor may have moved: only the client's surrounding text can say where to.
            context.invalidate()
            pendingCheck = nil
            corrections.expireAll()
        }
        lastSuggestionKey = nil
        effects += hideTable() + auxiliaryEffects()
        return KeyResult(handled: false, effects: effects, needsSuggestions: !invalidatesContext)
    }

    // MARK: Corrections

    /// The fix Space should apply instead of the typed word, per the autocorrect setting.
    private func autocorrection(for word: String) -> String? {
        guard settings.autocorrect != .off, settings.checkSpelling, !contentType.isSecret else { return nil }
        guard let flag = checker.check(word: Substring(word), before: Substring(context.before), exempt: exemptWords()),
            let replacement = flag.replacements.first
        else { return nil }
        switch settings.autocorrect {
        case .off: return nil
        case .veryLikely:
            // Far more likely, and the first letter agrees (first-letter typos are rare).
            let sameStart = WordText.key(replacement).unicodeScalars.first == WordText.key(word).unicodeScalars.first
            return flag.margin >= 6 && sameStart ? replacement : nil
        case .always: return replacement
        }
    }

    private func exemptWords() -> Set<String> {
        var words = corrections.keptWords
        for word in WordText.words(in: context.before) { words.insert(WordText.key(word)) }
        return words
    }

    /// Checks the word finished by the last key, now that the key has been answered.
    private func runPendingCheck() -> [SessionEffect] {
        guard let check = pendingCheck else { return [] }
        pendingCheck = nil
        guard settings.checkSpelling, context.isKnown, context.before.hasPrefix(check.before + check.word) else { return [] }
        let tail = String(context.before.unicodeScalars.dropFirst((check.before + check.word).unicodeScalars.count))
        // Earlier words are the user's own (names, jargon), unless they are flagged themselves:
        // the same typo twice in a sentence is flagged twice.
        var exempt = corrections.keptWords
        let flagged = Set(corrections.flags.map { WordText.key($0.flag.word) })
        for word in WordText.words(in: check.before) where !flagged.contains(WordText.key(word)) {
            exempt.insert(WordText.key(word))
        }
        guard let flag = checker.check(word: Substring(check.word), before: Substring(check.before), after: Substring(tail), exempt: exempt)
        else { return [] }
        corrections.add(flag, before: Substring(check.before), tail: tail)
        return auxiliaryEffects()
    }

    /// Applies a flag's fix after proving the word is exactly where it was.
    private func applyFix(id: Int, replacement: String?) -> KeyResult {
        // Only what the client has reported proves the word's position; a word this key commits
        // below goes out before the edits, in order, so it needs no report.
        let refusal = context.fixRefusal(clientReports: capabilities.contains(.surroundingText))
        var effects: [SessionEffect] = []
        if !composition.typed.isEmpty {
            effects += finishWord()
        } else {
            effects += commitPending(keepSpace: true)
        }
        panelOpen = false
        effects += hideTable()
        if let refusal {
            corrections.remove(id: id)
            notice = refusal.description
            return KeyResult(handled: true, effects: effects + auxiliaryEffects(), needsSuggestions: true)
        }
        let chosen = replacement ?? corrections.flags.first { $0.id == id }?.flag.replacements.first ?? ""
        switch corrections.plan(id: id, replacement: chosen, before: Substring(context.before)) {
        case .failure(let why):
            corrections.remove(id: id)
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
            corrections.applied(id: id, replacement: chosen)
            lastSuggestionKey = nil
            // One commit per answer: Wayland clients keep only the last (EditBatch).
            return KeyResult(handled: true, effects: EditBatch.coalesced(effects + auxiliaryEffects()), needsSuggestions: true)
        }
    }

    /// Keys while the correction panel is open; nil hands the key to the normal rules.
    private func panelKey(_ event: KeyEvent) -> KeyResult? {
        let flags = corrections.flags
        guard !flags.isEmpty else {
            panelOpen = false
            return nil
        }
        func redraw() -> KeyResult {
            KeyResult(handled: true, effects: [.updateLookupTable(panelTable())] + auxiliaryEffects(), needsSuggestions: false)
        }
        if let binding = settings.keepWordKey, binding.matches(event) {
            corrections.keep(id: flags[min(panel.cursor, flags.count - 1)].id)
            panel.cursor = min(panel.cursor, max(0, corrections.flags.count - 1))
            if corrections.flags.isEmpty { return closePanel() }
            return redraw()
        }
        // With Ctrl, Alt or Super a key is a shortcut (Ctrl+F1 forgets a learned candidate), never
        // a panel key: it closes the panel and does what it always does.
        let panelKeyval = event.modifiers.isDisjoint(with: .shortcut) ? event.keyval : 0
        switch panelKeyval {
        case Keysym.escape:
            return closePanel()
        case Keysym.down, Keysym.tab:
            panel.cursor = (panel.cursor + 1) % flags.count
            return redraw()
        case Keysym.up, Keysym.isoLeftTab:
            panel.cursor = (panel.cursor + flags.count - 1) % flags.count
            return redraw()
        case Keysym.returnKey, Keysym.keypadEnter, Keysym.space:
            panelOpen = false
            return applyFix(id: flags[min(panel.cursor, flags.count - 1)].id, replacement: nil)
        case Keysym.f1...Keysym.f9:
            // The row of the shown page, as its label says (the panel pages like the suggestions).
            guard let index = panel.index(row: Int(event.keyval - Keysym.f1)), index < flags.count else { return redraw() }
            panelOpen = false
            return applyFix(id: flags[index].id, replacement: nil)
        default:
            // Any other key closes the panel and then does what it always does. The candidates
            // the panel replaced are not shown, so no selection key may pick one of them.
            panelOpen = false
            suggestions.clear()
            return nil
        }
    }

    /// Closes the panel; the user dismissed a popup, so no candidates pop up in its place.
    private func closePanel() -> KeyResult {
        panelOpen = false
        var effects: [SessionEffect] = [.hideLookupTable]
        suggestions.clear()
        effects += auxiliaryEffects()
        return KeyResult(handled: true, effects: effects, needsSuggestions: false)
    }

    private func panelTable() -> CandidateTable {
        refreshPanelRows()
        // Digits always type in the panel: its rows are selected with the function keys.
        return panel.table(pageSize: pageSize, keys: .functionKeys)
    }

    /// The panel's rows for the current flags (the highlight stays where it was).
    private func refreshPanelRows() {
        panel.update(items: corrections.flags.map { tracked in
            tracked.chip + (tracked.flag.replacements.count > 1 ? "  (" + tracked.flag.replacements.dropFirst().joined(separator: ", ") + ")" : "")
        })
        panel.cursorVisible = true
    }

    /// The auxiliary text for the current flags (chips, newest first) or the panel's explanation.
    private func auxiliaryEffects() -> [SessionEffect] {
        let text: String?
        if let notice {
            text = notice
        } else if let dictationStatus {
            text = dictationStatus
        } else if panelOpen, !corrections.flags.isEmpty {
            let tracked = corrections.flags[min(panel.cursor, corrections.flags.count - 1)]
            text = "\(tracked.chip): \(tracked.flag.explanation)"
        } else if !corrections.flags.isEmpty {
            let chips = corrections.flags.prefix(3).map(\.chip).joined(separator: "   ")
            let more = corrections.flags.count > 3 ? "   +\(corrections.flags.count - 3)" : ""
            text = chips + more + (cloudCheck.isWaiting ? Self.cloudHint : "")
        } else {
            text = cloudCheck.isWaiting ? Self.cloudHint.trimmingCharacters(in: " ").description : nil
        }
        guard text != shownAuxiliary else { return [] }
        shownAuxiliary = text
        return [text.map { .updateAuxiliaryText($0) } ?? .hideAuxiliaryText]
    }

    // MARK: Dictation (issue 16; decisions in `DictationController`)

    /// The dictation state shown in the auxiliary text (`🎙 listening…` and the partial), set by
    /// the glue from `DictationController`; a notice still takes precedence.
    public var dictationStatus: String? = nil

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

    /// Shows a short message from the glue (a refused pack, a switched language) in the
    /// auxiliary text, where the session keeps track of it until the next key.
    public func showNotice(_ text: String) -> [SessionEffect] {
        notice = text
        return auxiliaryEffects()
    }

    // MARK: Cloud check

    /// Whether the cloud check may run here: opted in, not a password, PIN or private field,
    /// not off the record.
    public var cloudEnabled: Bool {
        settings.cloudCheck && !settings.offTheRecord && !contentType.isSecret && !contentType.isPrivate && !isInert
            && !fieldHeldConfidentialText
    }

    /// When the glue should call `cloudTimerFired()` (milliseconds on `clock`).
    public var cloudDeadline: Int64? { cloudEnabled ? cloud.deadline : nil }

    /// Forgets the request in flight and queues its cancellation for the helper.
    private func dropCloudRequest() {
        cloudCheck.cancel()
    }

    /// Lines the glue should send the helper now (cancellations of abandoned requests).
    public func takePendingCloudLines() -> [String] {
        if !cloudEnabled, cloudCheck.isWaiting { dropCloudRequest() }
        return cloudCheck.takePendingLines()
    }

    /// The cloud timer ran out: the request to send for the current sentence, if any.
    public func cloudTimerFired() -> CloudAction {
        let now = clock()
        guard cloudEnabled, cloudCheck.scheduler.isDue(now: now) else { return CloudAction() }
        // Nothing known to ask about: wait for the next key rather than firing again.
        guard context.isKnown, let (sentence, start) = CloudCheck.sentence(endingAt: context.before) else {
            cloudCheck.scheduler.clearDeadline()
            return CloudAction()
        }
        let flags = CloudCheck.flags(corrections.flags, before: context.before, sentenceStart: start, length: sentence.unicodeScalars.count)
        let (request, superseded) = cloudCheck.scheduler.start(
            sentence: sentence, language: settings.language, flags: flags, before: context.before, sentenceStart: start, now: now)
        var lines: [String] = []
        if let superseded { lines.append(CloudLine.cancel(id: superseded)) }
        if var reply = cloudCheck.cachedReply(for: request) {
            // Answered before: no need to ask again.
            reply.id = request.id
            let effects = applyCloudReply(reply)
            return CloudAction(lines: lines, effects: effects)
        }
        lines.append(CloudLine.encode(request))
        return CloudAction(lines: lines, effects: auxiliaryEffects())
    }

    /// A line from the helper. Stale, malformed and out-of-date answers change nothing.
    public func cloudReplyReceived(_ line: String) -> [SessionEffect] {
        guard let reply = CloudReply.parse(line), reply.type != "hello" else { return [] }
        guard cloudEnabled else {
            _ = cloudCheck.scheduler.finish(id: reply.id)
            return auxiliaryEffects()
        }
        return applyCloudReply(reply)
    }

    /// The helper died or hung: forget what was asked; local flags stay as they are.
    public func cloudHelperGone() -> [SessionEffect] {
        _ = cloudCheck.scheduler.finish(id: cloud.inFlight?.request.id)
        return auxiliaryEffects()
    }

    /// Whether the request in flight has waited longer than any answer is worth.
    public var cloudRequestTimedOut: Bool { cloudCheck.scheduler.hasTimedOut(now: clock()) }

    private func applyCloudReply(_ reply: CloudReply) -> [SessionEffect] {
        guard let (request, before, start) = cloudCheck.scheduler.finish(id: reply.id) else { return [] }
        guard reply.type == "result" else { return auxiliaryEffects() }
        let valid = reply.validated(against: request)
        cloudCheck.remember(valid, for: request)
        // Only text appended since the request keeps its positions; anything else drops the answer.
        guard context.before.unicodeScalars.starts(with: before.unicodeScalars) else { return auxiliaryEffects() }
        CloudCheck.merge(valid, sentenceStart: start, before: context.before, into: &corrections)
        return auxiliaryEffects()
    }

    /// Milliseconds since an arbitrary, fixed point of a monotonic clock (never negative).
    public static func monotonicMilliseconds() -> Int64 {
        // The origin is read first: it is initialised lazily, on the first call, and reading the
        // clock before it would put "now" before the origin.
        let origin = processStart
        return milliseconds(from: origin, to: ContinuousClock.now)
    }

    /// Whole milliseconds from `origin` to `now`, 0 when `now` is not after `origin`.
    public static func milliseconds(from origin: ContinuousClock.Instant, to now: ContinuousClock.Instant) -> Int64 {
        guard now > origin else { return 0 }
        let elapsed = origin.duration(to: now).components
        // Saturates rather than overflowing: a monotonic clock does not run for 292 million years.
        let (whole, overflow) = elapsed.seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return .max }
        let (sum, overflowSum) = whole.addingReportingOverflow(elapsed.attoseconds / 1_000_000_000_000_000)
        return overflowSum ? .max : sum
    }

    private static let processStart = ContinuousClock.now

    /// Seconds on `clock` for learned entries' last use: an injected or disturbed clock that
    /// reports a negative time counts as the origin rather than trapping on the key path.
    private func learningTime() -> Int64 { max(0, clock()) / 1000 }

    /// Shown in the auxiliary text while a cloud check is in flight.
    public static let cloudHint = "   \u{2601} checking\u{2026}"

    // MARK: Helpers

    /// Candidates per page, at least one (the setting comes from the user's configuration).
    private var pageSize: Int { max(1, settings.pageSize) }


    /// Finishes the typed word: commits it (or `replacement`, a highlighted candidate, in its
    /// place) followed by `suffix`, hides the preedit, and queues the typed word's check.
    private func finishWord(as replacement: String? = nil, suffix: String = "", checked: Bool = true) -> [SessionEffect] {
        let before = context.before
        let word = composition.takeWord()
        let effects = [commit((replacement ?? word) + suffix), .hidePreedit]
        if checked, replacement == nil { pendingCheck = (word, before) }
        return effects
    }

    /// Commits a pending autocorrection or space.
    private func commitPending(keepSpace: Bool) -> [SessionEffect] {
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

    private func commit(_ text: String, learn: Bool = true) -> SessionEffect {
        reached(text, learn: learn)
        context.committed()
        return .commitText(text)
    }

    /// Text the user wrote reached the application (committed by the engine, or the preedit
    /// committed by the client): its words are candidates for learning once their chunk ends.
    private func reached(_ text: String, learn: Bool = true) {
        if learn && learningAllowed { learning.reached(text, after: context.before) }
        inserted(text)
    }

    /// Records the queued words (off the key path: from `refreshSuggestions()` and focus-out).
    private func runPendingLearning() {
        let ready = learning.takeReady()
        guard !ready.isEmpty, learningAllowed else { return }
        let now = learningTime()
        for (word, before) in ready { predictor.learn(word: word, before: before, now: now) }
    }

    /// Text that reached the application at the cursor (committed or passed through).
    private func inserted(_ text: String) {
        learning.inserting(text, after: context.before, learningAllowed: learningAllowed)
        context.inserted(text)
        corrections.inserted(text)
    }

    private func preeditEffect() -> SessionEffect {
        guard let preedit = composition.preedit else { return .hidePreedit }
        context.preeditShown(preedit.text)
        return .updatePreedit(preedit)
    }

    /// The mark after a candidate that corrects the typed prefix (`tge` → `the ✎`).
    public static let correctionMark = " \u{270E}"

    private func table() -> CandidateTable {
        suggestions.table(pageSize: pageSize, keys: settings.selectionKeys, mark: Self.correctionMark)
    }

    private func hideTable() -> [SessionEffect] {
        guard suggestions.isShown else { return [] }
        suggestions.isShown = false
        suggestions.cursorVisible = false
        return [.hideLookupTable]
    }

    private func clearComposition() {
        composition.clear()
        suggestions.clear()
        lastSuggestionKey = nil
        pendingCheck = nil
        panelOpen = false
    }

    /// The client commits the preedit on focus-out and reset; record it as context.
    private func absorbPreeditIntoContext() {
        reached(composition.shownText)
    }

    private func endsWithSpace(_ text: String) -> Bool {
        guard let last = text.unicodeScalars.last else { return false }
        return last == " "
    }
}
