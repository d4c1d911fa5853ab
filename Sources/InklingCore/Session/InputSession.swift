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

    private var typed = ""
    private var pendingSpace = false
    /// An autocorrection shown but not yet committed: Backspace restores what was typed.
    private var pendingCorrection: (replacement: String, typed: String)? = nil
    /// Text before the cursor as far as the engine knows it (surrounding text, else its own record).
    private var contextBefore = ""
    private var contextKnown = true
    /// Scalars the engine put at the end of `contextBefore` that no surrounding text has echoed
    /// yet: an echo that lacks only some of them is late, not a change.
    private var unconfirmedCount = 0
    /// Whether this client includes the engine's own preedit in the surrounding text it reports
    /// (LibreOffice does): proven once a report minus a preedit is exactly the known text.
    public private(set) var clientEchoesPreedit = false
    /// The last preedits shown, oldest first: a report may show one that has already changed.
    private var recentPreedits: [String] = []
    /// The suggestions (marked: they correct a likely typo in the typed prefix).
    private var suggestions = CandidateMenu()
    private var lastSuggestionKey: String? = nil
    /// Committed words not learned yet: learning waits for the end of the whitespace-delimited
    /// chunk, so that `john@example.com` or a pasted token is recognised and never learned.
    private var unlearned: [(word: String, before: String)] = []
    /// Words of finished chunks, to be recorded once the key has been answered.
    private var learnable: [(word: String, before: String)] = []
    /// A word the user finished typing, to check once the key is answered.
    private var pendingCheck: (word: String, before: String)? = nil

    private enum SurroundingState { case unknown, reliable, unreliable }
    private var surroundingState = SurroundingState.unknown
    /// Whether the client reported its text, or was typed into, since the field got focus.
    private var usedSinceFocusIn = false
    /// Whether the client lost the surrounding-text capability after it was used in this field
    /// (Firefox after the first commit) rather than before (Chromium at focus-in): a refusal
    /// says which.
    private var stoppedReporting = false
    private var hasSelection = false
    /// The focused field has been a password, PIN or PRIVATE field: its text may still hold what
    /// was typed then ("show password" turns a password field into a free-form one), so nothing
    /// in it is learned or sent until focus moves to another field.
    private var fieldHeldConfidentialText = false
    /// `fieldHeldConfidentialText` came from the type held at focus-in, which may be the previous
    /// field's: ibus-daemon sends the new field's type after focus-in (1.5.27: focus-in, then
    /// set-content-type). A free-form type arriving before any key replaces it.
    private var confidentialOnlyByTypeAtFocusIn = false
    /// A report whose offsets fit as code points and as UTF-16 was not resolved yet.
    private var offsetsAmbiguous = false

    /// Milliseconds on a monotonic clock; tests inject their own.
    public var clock: () -> Int64 = InputSession.monotonicMilliseconds
    /// When to ask the cloud and which answer is still wanted.
    public private(set) var cloud = CloudScheduler()
    /// Cancel lines for requests dropped outside a timer (focus moved, field became private).
    private var pendingCloudLines: [String] = []
    /// Recent cloud answers by sentence and flags, so an unchanged sentence is not sent twice.
    private var cloudCache: [String: CloudReply] = [:]

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
    public var composingText: String { typed }
    /// The candidates currently offered.
    public var currentCandidates: [String] { suggestions.isShown && !panelOpen ? suggestions.items : [] }
    /// The engine's view of the text before the cursor (not including the preedit).
    public var knownContext: String { contextBefore }
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
        unlearned.removeAll()
        learnable.removeAll()
        return kept + [.hidePreedit, .hideLookupTable] + auxiliaryEffects()
    }

    /// Commits what the preedit shows (the typed word, an autocorrection, a pending space),
    /// unlearned, for changes that end the composition without the client committing it.
    private func commitShownComposition() -> [SessionEffect] {
        let shown: String
        if let correction = pendingCorrection {
            shown = correction.replacement + " "
        } else {
            shown = typed + (pendingSpace ? " " : "")
        }
        guard !shown.isEmpty else { return [] }
        return [commit(shown, learn: false)]
    }

    // MARK: Client notifications

    /// The client gained focus: a new field, so nothing from the previous one carries over.
    public func focusIn() -> [SessionEffect] {
        clearComposition()
        contextBefore = ""
        // Unknown until the client reports its text (clients and the daemon skip re-sending
        // unchanged text, so returning to a field must not look like a new, empty document).
        contextKnown = false
        surroundingState = .unknown
        usedSinceFocusIn = false
        stoppedReporting = false
        hasSelection = false
        fieldHeldConfidentialText = contentType.isSecret || contentType.isPrivate
        confidentialOnlyByTypeAtFocusIn = fieldHeldConfidentialText
        offsetsAmbiguous = false
        corrections.clear()
        dropCloudRequest()
        predictor.reset()
        shownAuxiliary = nil
        notice = nil
        recentPreedits.removeAll()
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
        let effects = suggestions.isShown || !typed.isEmpty || pendingSpace ? [SessionEffect.hideLookupTable] : []
        absorbPreeditIntoContext()
        unlearned.removeAll()
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
        unlearned.removeAll()
        clearComposition()
        contextBefore = ""
        contextKnown = false
        corrections.expireAll()
        return [.hidePreedit, .hideLookupTable] + auxiliaryEffects()
    }

    /// The client's capabilities changed.
    public func setCapabilities(_ capabilities: ClientCapabilities) {
        if self.capabilities.contains(.surroundingText), !capabilities.contains(.surroundingText), usedSinceFocusIn {
            stoppedReporting = true
        }
        if capabilities.contains(.surroundingText) { stoppedReporting = false }
        self.capabilities = capabilities
        if !capabilities.contains(.surroundingText) { surroundingState = .unknown }
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
            unlearned.removeAll()
        }
        if contentType.isSecret {
            let hadSomething = !typed.isEmpty || pendingSpace || suggestions.isShown || shownAuxiliary != nil
            // What was typed in the open stays in the field (hiding the preedit would drop it).
            let kept = commitShownComposition()
            clearComposition()
            contextBefore = ""
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
        // GNOME Shell 43 passes Wayland's UTF-8 byte offsets on unchanged (ByteOffsetReading).
        if let asBytes = SurroundingText.byteOffsetReading(text: text, cursor: cursor, anchor: anchor, known: contextKnown ? contextBefore : nil) {
            offsetsAmbiguous = false
            return setSurroundingText(asBytes)
        }
        let asUTF16 = SurroundingText.interpretingUTF16(text: text, cursor: cursor, anchor: anchor)
        if let surrounding = SurroundingText(text: text, cursor: cursor, anchor: anchor) {
            // Scalars beyond the BMP before the offsets make code points and UTF-16 disagree, and
            // Qt's UTF-16 offsets fit as code points whenever text follows the cursor: a fix on
            // the wrong reading deletes the wrong characters. The reading that ends with what the
            // engine knows it wrote wins; when neither or both do, no fix is applied on it.
            guard let asUTF16, asUTF16 != surrounding else { return setSurroundingText(surrounding) }
            let ours = contextKnown ? Array(contextBefore.unicodeScalars) : []
            let codePointsAgree = !ours.isEmpty && surrounding.before.unicodeScalars.reversed().starts(with: ours.reversed())
            let utf16Agrees = !ours.isEmpty && asUTF16.before.unicodeScalars.reversed().starts(with: ours.reversed())
            // After an unresolved report the engine's context came from the client: agreeing with
            // it proves nothing until the echo carries text the engine wrote itself.
            let evidence = !offsetsAmbiguous || unconfirmedCount > 0
            if codePointsAgree && !utf16Agrees && evidence {
                offsetsAmbiguous = false
                return setSurroundingText(surrounding)
            }
            if !utf16Agrees || codePointsAgree {
                let result = setSurroundingText(surrounding)
                if !contentType.isSecret {
                    surroundingState = .unreliable
                    offsetsAmbiguous = true
                }
                return result
            }
        }
        let result = setSurroundingText(nil)
        guard !contentType.isSecret, let guess = asUTF16 else {
            return result
        }
        let before = String(guess.before.unicodeScalars.suffix(1000))
        contextKnown = true
        if before == contextBefore { return result }
        contextBefore = before
        corrections.expireAll()
        return (result.effects + auxiliaryEffects(), typed.isEmpty && !pendingSpace)
    }

    /// The client reported its text around the cursor (nil: offsets that cannot be code points).
    ///
    /// The echo of the engine's own commit matches what the engine already knows and changes
    /// nothing, so it never causes a second prediction.
    public func setSurroundingText(_ surrounding: SurroundingText?) -> (effects: [SessionEffect], needsSuggestions: Bool) {
        guard !contentType.isSecret else { return ([], false) }
        usedSinceFocusIn = true
        guard let surrounding else {
            surroundingState = .unreliable
            return ([], false)
        }
        surroundingState = .reliable
        hasSelection = surrounding.hasSelection
        let ours = Array(contextBefore.unicodeScalars)
        var theirs = Array(surrounding.before.unicodeScalars.suffix(1000))
        if let withoutPreedit = withoutEchoedPreedit(theirs, ours: ours) { theirs = withoutPreedit }
        if contextKnown && theirs == ours {
            unconfirmedCount = 0
            return ([], false)
        }
        // The echo of an earlier state (a commit echoed before the key that followed it).
        if contextKnown, lateEchoGap(theirs, ours: ours) != nil { return ([], false) }
        contextKnown = true
        unconfirmedCount = 0
        let before = String(String.UnicodeScalarView(theirs))
        contextBefore = before
        corrections.verify(before: Substring(before))
        // A change the engine did not cause: suggestions for the new position, unless composing.
        return (auxiliaryEffects(), typed.isEmpty && !pendingSpace)
    }

    /// How many of the engine's latest scalars a report lacks when it shows an earlier state of
    /// the known text (a late echo); nil when it is not one.
    private func lateEchoGap(_ theirs: [Unicode.Scalar], ours: [Unicode.Scalar]) -> Int? {
        guard !theirs.isEmpty, unconfirmedCount > 0, !ours.isEmpty else { return nil }
        for missing in 1...min(unconfirmedCount, ours.count) where ours.dropLast(missing).suffix(theirs.count).elementsEqual(theirs) {
            return missing
        }
        return nil
    }

    /// A report without the engine's own preedit at its end, for clients that include it.
    ///
    /// The first time, it takes proof: the report minus a recent preedit is exactly the known
    /// text (or a late echo of it). Once proven, a report of an unknown position loses the
    /// preedit shown now. Reports that already match the known text are left alone.
    private func withoutEchoedPreedit(_ theirs: [Unicode.Scalar], ours: [Unicode.Scalar]) -> [Unicode.Scalar]? {
        guard !recentPreedits.isEmpty, !(contextKnown && theirs == ours) else { return nil }
        func stripping(_ preedit: String) -> [Unicode.Scalar]? {
            let scalars = Array(preedit.unicodeScalars)
            guard !scalars.isEmpty, theirs.count >= scalars.count, theirs.suffix(scalars.count).elementsEqual(scalars) else { return nil }
            return Array(theirs.dropLast(scalars.count))
        }
        if contextKnown {
            // Exactly the known text plus a preedit; then a late echo plus a preedit.
            for preedit in recentPreedits.reversed() {
                guard let rest = stripping(preedit), rest == ours else { continue }
                clientEchoesPreedit = true
                return rest
            }
            if lateEchoGap(theirs, ours: ours) != nil { return nil }
            for preedit in recentPreedits.reversed() {
                guard let rest = stripping(preedit), lateEchoGap(rest, ours: ours) != nil else { continue }
                clientEchoesPreedit = true
                return rest
            }
        }
        // A report of an unknown position that ends with the preedit shown now: from a client
        // proven to echo it, or one that answers only after the first key (LibreOffice after
        // focus-in; clients that do not echo report before the key that starts a word).
        if clientEchoesPreedit || !contextKnown, let shown = shownPreeditText, let rest = stripping(shown) { return rest }
        return nil
    }

    /// The preedit the client shows now, if any.
    private var shownPreeditText: String? {
        if case .updatePreedit(let preedit) = currentPreedit() { return preedit.text }
        return nil
    }

    // MARK: Keys

    /// Handles a key event and answers at once; suggestions follow via `refreshSuggestions()`.
    public func processKey(_ event: KeyEvent) -> KeyResult {
        let hadNotice = notice != nil
        var result = applyKeyRules(event)
        // A one-off message goes with the next key, whatever that key does.
        if hadNotice, !event.isRelease, !Keysym.isModifierOnly(event.keyval) { result.effects += auxiliaryEffects() }
        if cloudEnabled, !event.isRelease, !Keysym.isModifierOnly(event.keyval) {
            cloud.noteChange(now: clock(), endsSentence: typed.isEmpty && Self.endsSentence(contextBefore))
        }
        return result
    }

    private func applyKeyRules(_ event: KeyEvent) -> KeyResult {
        // Typed into (a password field's keys included): a later type change is the field's own.
        if !event.isRelease { confidentialOnlyByTypeAtFocusIn = false }
        if isInert || event.isRelease || Keysym.isModifierOnly(event.keyval) {
            return KeyResult(handled: false, effects: [], needsSuggestions: false)
        }
        usedSinceFocusIn = true
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
            if !typed.isEmpty {
                corrections.keep(word: typed)
                let word = typed
                typed = ""
                return KeyResult(handled: true, effects: [commit(word), .hidePreedit] + hideTable() + auxiliaryEffects(), needsSuggestions: true)
            }
            if let newest = corrections.flags.first {
                corrections.keep(id: newest.id)
                return KeyResult(handled: true, effects: auxiliaryEffects(), needsSuggestions: false)
            }
        }
        if let binding = settings.offTheRecordKey, binding.matches(event) {
            settings.offTheRecord.toggle()
            unlearned.removeAll()
            notice = settings.offTheRecord ? tr("off the record: nothing is learned or sent") : tr("back on the record")
            return KeyResult(handled: true, effects: auxiliaryEffects(), needsSuggestions: false)
        }
        // Ctrl with a selection key forgets that learned word (the peer's convention).
        if suggestions.isShown, event.modifiers.intersection(.shortcut) == .control, (Keysym.f1...Keysym.f9).contains(event.keyval) {
            if let index = suggestions.index(row: Int(event.keyval - Keysym.f1)) {
                let word = suggestions.items[index]
                let known = predictor.userModel.knows(WordText.key(word))
                predictor.updateUserModel { $0.forget(word) }
                notice = known ? tr("forgot “{word}”", ["word": word]) : tr("“{word}” was not learned", ["word": word])
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
        if !isDigit && (WordText.isWordScalar(character) || (WordText.isJoiner(character) && !typed.isEmpty)) {
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
        if !typed.isEmpty {
            before = contextBefore + typed
        } else if settings.nextWordPredictions && contextKnown && (pendingSpace || endsWithSpace(contextBefore)) {
            before = contextBefore + (pendingCorrection.map { $0.replacement } ?? "") + (pendingSpace ? " " : "")
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
        typed.unicodeScalars.append(character)
        effects.append(preeditEffect())
        return KeyResult(handled: true, effects: effects, needsSuggestions: true)
    }

    private func backspace() -> KeyResult {
        if !typed.isEmpty {
            typed.removeLast()
            return KeyResult(handled: true, effects: [preeditEffect()], needsSuggestions: true)
        }
        if let correction = pendingCorrection {
            // Undo the autocorrection: exactly what was typed, and the word is kept.
            pendingCorrection = nil
            pendingSpace = false
            corrections.keep(word: correction.typed)
            lastSuggestionKey = nil
            return KeyResult(handled: true, effects: [commit(correction.typed + " "), .hidePreedit] + hideTable(), needsSuggestions: true)
        }
        if pendingSpace {
            pendingSpace = false
            lastSuggestionKey = nil
            return KeyResult(handled: true, effects: [.hidePreedit] + hideTable(), needsSuggestions: false)
        }
        if let removed = contextBefore.popLast() {
            // What the application deletes can no longer be awaited in an echo.
            unconfirmedCount = max(0, unconfirmedCount - removed.unicodeScalars.count)
        }
        corrections.deletedBackward()
        lastSuggestionKey = nil
        return KeyResult(handled: false, effects: hideTable() + auxiliaryEffects(), needsSuggestions: true)
    }

    private func space() -> KeyResult {
        if !typed.isEmpty {
            let highlighted = suggestions.highlighted
            let word = highlighted ?? typed
            typed = ""
            if highlighted == nil, let replacement = autocorrection(for: word) {
                pendingCorrection = (replacement, word)
                pendingSpace = true
                return KeyResult(handled: true, effects: [preeditEffect()] + hideTable(), needsSuggestions: true)
            }
            let before = contextBefore
            let effects = [commit(word + " "), .hidePreedit]
            if highlighted == nil { pendingCheck = (word, before) }
            return KeyResult(handled: true, effects: effects, needsSuggestions: true)
        }
        if pendingSpace {
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
        if !typed.isEmpty {
            let highlighted = suggestions.highlighted
            let word = highlighted ?? typed
            let before = contextBefore
            typed = ""
            effects.append(commit(word))
            effects.append(.hidePreedit)
            if highlighted == nil { pendingCheck = (word, before) }
        } else {
            effects += commitPending(keepSpace: false)
        }
        inserted("\n")
        effects += hideTable()
        return KeyResult(handled: false, effects: effects, needsSuggestions: true)
    }

    private func escape() -> KeyResult {
        if suggestions.isShown {
            lastSuggestionKey = typed.isEmpty ? contextBefore : contextBefore + typed
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
        if typed.isEmpty { effects += commitPending(keepSpace: true) }
        typed = ""
        effects.append(commit(word))
        pendingSpace = true
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
        if typed.isEmpty && !pendingSpace && pendingCorrection == nil {
            // Nothing composed: what is before the cursor is no better known than it was.
            inserted(String(character))
            lastSuggestionKey = nil
            return KeyResult(handled: true, effects: [.commitText(String(character))] + hideTable() + auxiliaryEffects(), needsSuggestions: true)
        }
        if !typed.isEmpty {
            pendingCheck = (typed, contextBefore)
            text = typed
            typed = ""
        } else if let correction = pendingCorrection {
            text = correction.replacement + (Self.attachesToPrevious.contains(character) ? "" : " ")
        } else if pendingSpace {
            text = Self.attachesToPrevious.contains(character) ? "" : " "
        }
        pendingCorrection = nil
        pendingSpace = false
        lastSuggestionKey = nil
        let effects = [commit(text + String(character)), .hidePreedit] + hideTable() + auxiliaryEffects()
        return KeyResult(handled: true, effects: effects, needsSuggestions: true)
    }

    /// Commits whatever is composed, then lets the application have the key.
    private func passThrough(flushing: Bool, appending: String?, invalidatesContext: Bool) -> KeyResult {
        var effects: [SessionEffect] = []
        if flushing {
            if !typed.isEmpty {
                let before = contextBefore
                let word = typed
                typed = ""
                effects.append(commit(word))
                effects.append(.hidePreedit)
                pendingCheck = (word, before)
            } else {
                effects += commitPending(keepSpace: true)
            }
        }
        if let appending { inserted(appending) }
        if invalidatesContext {
            // The cursor may have moved: only the client's surrounding text can say where to.
            contextKnown = false
            contextBefore = ""
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
        guard let flag = checker.check(word: Substring(word), before: Substring(contextBefore), exempt: exemptWords()),
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
        for word in WordText.words(in: contextBefore) { words.insert(WordText.key(word)) }
        return words
    }

    /// Checks the word finished by the last key, now that the key has been answered.
    private func runPendingCheck() -> [SessionEffect] {
        guard let check = pendingCheck else { return [] }
        pendingCheck = nil
        guard settings.checkSpelling, contextKnown, contextBefore.hasPrefix(check.before + check.word) else { return [] }
        let tail = String(contextBefore.unicodeScalars.dropFirst((check.before + check.word).unicodeScalars.count))
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
        let unreported = contextBefore.unicodeScalars.suffix(unconfirmedCount)
        let confirmed = unconfirmedCount == 0
        var effects: [SessionEffect] = []
        if !typed.isEmpty {
            let word = typed
            let before = contextBefore
            typed = ""
            effects += [commit(word), .hidePreedit]
            pendingCheck = (word, before)
        } else {
            effects += commitPending(keepSpace: true)
        }
        panelOpen = false
        effects += hideTable()
        let refusal: FixRefusal?
        if !capabilities.contains(.surroundingText) {
            refusal = stoppedReporting ? .stoppedReportingText : .noSurroundingText
        } else if surroundingState == .unknown {
            refusal = .notReportedYet
        } else if surroundingState == .unreliable {
            refusal = .unreliableOffsets
        } else if hasSelection {
            refusal = .selection
        } else if !confirmed {
            let onlyWhitespace = !unreported.isEmpty && unreported.allSatisfy { $0.properties.isWhitespace }
            refusal = onlyWhitespace ? .whitespaceNotReported : .unconfirmed
        } else {
            refusal = nil
        }
        if let refusal {
            corrections.remove(id: id)
            notice = refusal.description
            return KeyResult(handled: true, effects: effects + auxiliaryEffects(), needsSuggestions: true)
        }
        let chosen = replacement ?? corrections.flags.first { $0.id == id }?.flag.replacements.first ?? ""
        switch corrections.plan(id: id, replacement: chosen, before: Substring(contextBefore)) {
        case .failure(let why):
            corrections.remove(id: id)
            notice = why.description
            return KeyResult(handled: true, effects: effects + auxiliaryEffects(), needsSuggestions: true)
        case .success(let edits):
            for edit in edits {
                switch edit {
                case .deleteSurroundingText(_, let count):
                    contextBefore = String(contextBefore.unicodeScalars.dropLast(count))
                    effects.append(edit)
                case .commitText(let text):
                    contextBefore.append(text)
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
            // One commit per answer: Wayland clients keep only the last (EditBatch). LibreOffice,
            // which shows the preedit in its text, keeps the order it was proven with: it cut the
            // word's space (`I sawthe cat`) when the preedit went before the deletion.
            let answer = effects + auxiliaryEffects()
            return KeyResult(handled: true, effects: clientEchoesPreedit ? answer : EditBatch.coalesced(answer), needsSuggestions: true)
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
            text = chips + more + (cloud.inFlight != nil ? Self.cloudHint : "")
        } else {
            text = cloud.inFlight != nil ? Self.cloudHint.trimmingCharacters(in: " ").description : nil
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
        if !typed.isEmpty {
            let word = typed
            typed = ""
            effects.append(commit(word))
        } else {
            effects += commitPending(keepSpace: true)
        }
        let text = DictationController.textToCommit(utterance, before: contextKnown ? contextBefore : nil)
        guard !text.isEmpty else { return effects + [preeditEffect()] }
        effects.append(commit(text))
        pendingSpace = true
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
        if let id = cloud.cancelAll() { pendingCloudLines.append(CloudLine.cancel(id: id)) }
    }

    /// Lines the glue should send the helper now (cancellations of abandoned requests).
    public func takePendingCloudLines() -> [String] {
        if !cloudEnabled, cloud.inFlight != nil { dropCloudRequest() }
        defer { pendingCloudLines.removeAll() }
        return pendingCloudLines
    }

    /// The cloud timer ran out: the request to send for the current sentence, if any.
    public func cloudTimerFired() -> CloudAction {
        let now = clock()
        guard cloudEnabled, cloud.isDue(now: now) else { return CloudAction() }
        guard contextKnown else {
            // Nothing known to ask about: wait for the next key rather than firing again.
            cloud.clearDeadline()
            return CloudAction()
        }
        guard let (sentence, start) = currentSentence() else {
            cloud.clearDeadline()
            return CloudAction()
        }
        let scalars = Array(contextBefore.unicodeScalars)
        let sentenceEnd = start + sentence.unicodeScalars.count
        var flags: [CloudFlag] = []
        for tracked in corrections.flags {
            let end = scalars.count - tracked.tail.unicodeScalars.count
            let begin = end - tracked.flag.word.unicodeScalars.count
            if begin >= start && end <= sentenceEnd {
                flags.append(CloudFlag(start: begin - start, end: end - start, word: tracked.flag.word, replacements: tracked.flag.replacements))
            }
        }
        flags.sort { $0.start < $1.start }
        let (request, superseded) = cloud.start(
            sentence: sentence, language: settings.language, flags: flags, before: contextBefore, sentenceStart: start, now: now)
        var lines: [String] = []
        if let superseded { lines.append(CloudLine.cancel(id: superseded)) }
        if let cached = cloudCache[Self.cacheKey(request)] {
            // Answered before: no need to ask again.
            var reply = cached
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
            _ = cloud.finish(id: reply.id)
            return auxiliaryEffects()
        }
        return applyCloudReply(reply)
    }

    /// The helper died or hung: forget what was asked; local flags stay as they are.
    public func cloudHelperGone() -> [SessionEffect] {
        _ = cloud.finish(id: cloud.inFlight?.request.id)
        return auxiliaryEffects()
    }

    /// Whether the request in flight has waited longer than any answer is worth.
    public var cloudRequestTimedOut: Bool { cloud.hasTimedOut(now: clock()) }

    private func applyCloudReply(_ reply: CloudReply) -> [SessionEffect] {
        guard let (request, before, start) = cloud.finish(id: reply.id) else { return [] }
        guard reply.type == "result" else { return auxiliaryEffects() }
        let valid = reply.validated(against: request)
        if cloudCache.count > 64 { cloudCache.removeAll() }
        cloudCache[Self.cacheKey(request)] = valid
        // Only text appended since the request keeps its positions; anything else drops the answer.
        guard contextBefore.unicodeScalars.starts(with: before.unicodeScalars) else { return auxiliaryEffects() }
        let scalars = Array(contextBefore.unicodeScalars)
        func trackedFlag(at begin: Int, _ end: Int) -> TrackedFlag? {
            corrections.flags.first { tracked in
                let flagEnd = scalars.count - tracked.tail.unicodeScalars.count
                return flagEnd == end && flagEnd - tracked.flag.word.unicodeScalars.count == begin
            }
        }
        for verdict in valid.verdicts ?? [] {
            guard let tracked = trackedFlag(at: start + verdict.start, start + verdict.end) else { continue }
            if verdict.verdict == "disagree" {
                corrections.remove(id: tracked.id)
            } else {
                corrections.update(id: tracked.id, replacements: nil, explanation: verdict.explanation)
            }
        }
        for fix in valid.fixes ?? [] {
            let begin = start + fix.start
            let end = start + fix.end
            guard end <= scalars.count else { continue }
            if let tracked = trackedFlag(at: begin, end) {
                corrections.update(id: tracked.id, replacements: [fix.replacement], explanation: fix.explanation)
                continue
            }
            let flag = TypoFlag(
                word: fix.original, replacements: [fix.replacement],
                explanation: fix.explanation ?? tr("suggested by the cloud check"), margin: 0)
            corrections.add(
                flag, before: Substring(String(String.UnicodeScalarView(scalars[..<begin]))),
                tail: String(String.UnicodeScalarView(scalars[end...])), origin: .cloud)
        }
        return auxiliaryEffects()
    }

    private static func cacheKey(_ request: CloudCheckRequest) -> String {
        request.language + "\u{0}" + request.sentence + "\u{0}" + request.flags.map { "\($0.start)-\($0.end)" }.joined(separator: ",")
    }

    /// The sentence before the cursor (without trailing whitespace) and where it starts, in code points.
    private func currentSentence() -> (String, Int)? {
        let scalars = Array(contextBefore.unicodeScalars)
        var end = scalars.count
        while end > 0 && scalars[end - 1].properties.isWhitespace { end -= 1 }
        // Sentence-final punctuation at the end belongs to this sentence.
        var index = end
        while index > 0 && ".!?".unicodeScalars.contains(scalars[index - 1]) { index -= 1 }
        var start = 0
        while index > 0 {
            let scalar = scalars[index - 1]
            if scalar == "\n" || (".!?".unicodeScalars.contains(scalar) && index < scalars.count && scalars[index].properties.isWhitespace) {
                start = index
                break
            }
            index -= 1
        }
        while start < end && scalars[start].properties.isWhitespace { start += 1 }
        guard end > start, end - start <= CloudProtocol.maximumSentenceScalars,
            scalars[start..<end].contains(where: { $0.properties.isAlphabetic })
        else { return nil }
        return (String(String.UnicodeScalarView(scalars[start..<end])), start)
    }

    static func endsSentence(_ text: String) -> Bool {
        for scalar in text.unicodeScalars.reversed() {
            if scalar.properties.isWhitespace { continue }
            return ".!?".unicodeScalars.contains(scalar)
        }
        return false
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
    public static var cloudHint: String { "   " + tr("☁ checking…") }

    // MARK: Helpers

    /// Candidates per page, at least one (the setting comes from the user's configuration).
    private var pageSize: Int { max(1, settings.pageSize) }


    /// Commits a pending autocorrection or space.
    private func commitPending(keepSpace: Bool) -> [SessionEffect] {
        if let correction = pendingCorrection {
            pendingCorrection = nil
            pendingSpace = false
            return [commit(correction.replacement + (keepSpace ? " " : "")), .hidePreedit]
        }
        if pendingSpace {
            pendingSpace = false
            return keepSpace ? [commit(" "), .hidePreedit] : [.hidePreedit]
        }
        return []
    }

    private func commit(_ text: String, learn: Bool = true) -> SessionEffect {
        reached(text, learn: learn)
        contextKnown = true
        return .commitText(text)
    }

    /// Text the user wrote reached the application (committed by the engine, or the preedit
    /// committed by the client): its words are candidates for learning once their chunk ends.
    private func reached(_ text: String, learn: Bool = true) {
        if learn && learningAllowed {
            for word in WordText.words(in: text) {
                unlearned.append((String(word), contextBefore + text[..<word.startIndex]))
            }
        }
        inserted(text)
    }

    /// Queues the words of a finished chunk for learning, unless the chunk is an address or looks
    /// like a secret. Recording (with its occasional decay pass) runs after the key is answered.
    private func learnFinishedChunk(_ chunk: Substring) {
        defer { unlearned.removeAll() }
        guard !unlearned.isEmpty, learningAllowed else { return }
        guard LearningPolicy.mayLearnChunk(chunk) else { return }
        learnable += unlearned.filter { LearningPolicy.mayRecord($0.word) }
    }

    /// Records the queued words (off the key path: from `refreshSuggestions()` and focus-out).
    private func runPendingLearning() {
        guard !learnable.isEmpty else { return }
        defer { learnable.removeAll() }
        guard learningAllowed else { return }
        let now = learningTime()
        for (word, before) in learnable { predictor.learn(word: word, before: before, now: now) }
    }

    /// The whitespace-delimited chunk ending `head` is finished: its words may be learned.
    private func endChunk(before head: String) {
        guard !unlearned.isEmpty else { return }
        let scalars = head.unicodeScalars
        let start = scalars.lastIndex(where: { $0.properties.isWhitespace }).map { scalars.index(after: $0) } ?? scalars.startIndex
        learnFinishedChunk(Substring(scalars[start...]))
    }

    /// Text that reached the application at the cursor (committed or passed through).
    private func inserted(_ text: String) {
        if !unlearned.isEmpty, let space = text.unicodeScalars.firstIndex(where: { $0.properties.isWhitespace }) {
            endChunk(before: contextBefore + String(text.unicodeScalars[..<space]))
        }
        contextBefore.append(text)
        unconfirmedCount += text.unicodeScalars.count
        if contextBefore.unicodeScalars.count > 2000 {
            contextBefore = String(contextBefore.unicodeScalars.suffix(1000))
        }
        corrections.inserted(text)
    }

    private func preeditEffect() -> SessionEffect {
        let effect = currentPreedit()
        if case .updatePreedit(let preedit) = effect, recentPreedits.last != preedit.text {
            recentPreedits.append(preedit.text)
            if recentPreedits.count > 8 { recentPreedits.removeFirst() }
        }
        return effect
    }

    /// The preedit for the current composition (`hidePreedit` when there is none).
    private func currentPreedit() -> SessionEffect {
        if let correction = pendingCorrection {
            let text = correction.replacement + " "
            let underlined = correction.replacement.unicodeScalars.count
            return .updatePreedit(Preedit(text: text, cursor: underlined + 1, underlined: underlined))
        }
        if typed.isEmpty && !pendingSpace { return .hidePreedit }
        let text = typed.isEmpty ? " " : typed
        let length = text.unicodeScalars.count
        return .updatePreedit(Preedit(text: text, cursor: length, underlined: typed.isEmpty ? 0 : length))
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
        typed = ""
        pendingSpace = false
        pendingCorrection = nil
        suggestions.clear()
        lastSuggestionKey = nil
        pendingCheck = nil
        panelOpen = false
    }

    /// The client commits the preedit on focus-out and reset; record it as context.
    private func absorbPreeditIntoContext() {
        if let correction = pendingCorrection {
            reached(correction.replacement + " ")
        } else {
            reached(typed + (pendingSpace ? " " : ""))
        }
    }

    private func endsWithSpace(_ text: String) -> Bool {
        guard let last = text.unicodeScalars.last else { return false }
        return last == " "
    }
}
