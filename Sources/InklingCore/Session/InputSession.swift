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
public final class InputSession {
    /// The predictor behind the candidates.
    public let predictor: Predictor
    /// Settings, followed live.
    public var settings: SessionSettings {
        didSet { lastSuggestionKey = nil }
    }

    /// What the client can do.
    public private(set) var capabilities: ClientCapabilities = [.preedit, .auxiliaryText, .lookupTable, .focus]
    /// The current field's content type.
    public private(set) var contentType = ContentType()

    private var typed = ""
    private var pendingSpace = false
    /// Text before the cursor as far as the engine knows it (surrounding text, else its own record).
    private var contextBefore = ""
    private var contextKnown = true
    private var candidates: [String] = []
    private var tableCursor = 0
    private var cursorVisible = false
    private var tableVisible = false
    private var lastSuggestionKey: String? = nil

    /// Creates a session over a predictor.
    public init(predictor: Predictor, settings: SessionSettings = SessionSettings()) {
        self.predictor = predictor
        self.settings = settings
    }

    /// The word being typed (for tests and diagnostics).
    public var composingText: String { typed }
    /// The candidates currently offered.
    public var currentCandidates: [String] { tableVisible ? candidates : [] }
    /// The engine's view of the text before the cursor (not including the preedit).
    public var knownContext: String { contextBefore }

    private var isInert: Bool { contentType.isSecret || !capabilities.contains(.preedit) }

    // MARK: Client notifications

    /// The client gained focus: a new field, so nothing from the previous one carries over.
    public func focusIn() -> [SessionEffect] {
        clearComposition()
        contextBefore = ""
        contextKnown = true
        predictor.reset()
        return [.hidePreedit, .hideLookupTable, .hideAuxiliaryText]
    }

    /// The client lost focus. The client commits the preedit itself (commit-on-focus-out mode).
    public func focusOut() -> [SessionEffect] {
        let effects = tableVisible || !typed.isEmpty || pendingSpace ? [SessionEffect.hideLookupTable] : []
        absorbPreeditIntoContext()
        clearComposition()
        return effects
    }

    /// The client reset the context (it commits the preedit itself, so the engine must not).
    public func reset() -> [SessionEffect] {
        absorbPreeditIntoContext()
        clearComposition()
        return [.hidePreedit, .hideLookupTable]
    }

    /// The client's capabilities changed.
    public func setCapabilities(_ capabilities: ClientCapabilities) {
        self.capabilities = capabilities
    }

    /// The field's purpose and hints changed.
    public func setContentType(_ contentType: ContentType) -> [SessionEffect] {
        self.contentType = contentType
        if contentType.isSecret {
            let hadSomething = !typed.isEmpty || pendingSpace || tableVisible
            clearComposition()
            contextBefore = ""
            predictor.reset()
            return hadSomething ? [.hidePreedit, .hideLookupTable] : []
        }
        return []
    }

    /// The client reported its text around the cursor.
    ///
    /// The echo of the engine's own commit matches what the engine already knows and changes
    /// nothing, so it never causes a second prediction.
    public func setSurroundingText(_ surrounding: SurroundingText?) -> (effects: [SessionEffect], needsSuggestions: Bool) {
        guard !contentType.isSecret, let surrounding else { return ([], false) }
        let before = String(surrounding.before.unicodeScalars.suffix(1000))
        contextKnown = true
        if before == contextBefore { return ([], false) }
        contextBefore = before
        // A change the engine did not cause: suggestions for the new position, unless composing.
        return ([], typed.isEmpty && !pendingSpace)
    }

    // MARK: Keys

    /// Handles a key event and answers at once; suggestions follow via `refreshSuggestions()`.
    public func processKey(_ event: KeyEvent) -> KeyResult {
        if isInert || event.isRelease || Keysym.isModifierOnly(event.keyval) {
            return KeyResult(handled: false, effects: [], needsSuggestions: false)
        }
        if !event.modifiers.intersection(.shortcut).isEmpty {
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        }
        switch event.keyval {
        case Keysym.backSpace: return backspace()
        case Keysym.space: return space()
        case Keysym.returnKey, Keysym.keypadEnter: return returnKey(event)
        case Keysym.escape: return escape()
        case Keysym.tab, Keysym.down:
            if tableVisible { return moveHighlight(by: 1) }
            return passThrough(flushing: true, appending: event.keyval == Keysym.tab ? "\t" : nil, invalidatesContext: event.keyval != Keysym.tab)
        case Keysym.isoLeftTab, Keysym.up:
            if tableVisible { return moveHighlight(by: -1) }
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        case Keysym.pageDown, Keysym.pageUp:
            if tableVisible { return page(forward: event.keyval == Keysym.pageDown) }
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        case Keysym.f1...Keysym.f9:
            let index = pageStart + Int(event.keyval - Keysym.f1)
            if tableVisible && index < candidates.count { return select(index) }
            return passThrough(flushing: true, appending: nil, invalidatesContext: false)
        default:
            break
        }
        guard let character = event.character, character.value >= 0x20, character.value != 0x7F else {
            // Cursor movement, Delete and every other non-typing key: the application's.
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        }
        let isDigit = character.properties.generalCategory == .decimalNumber
        // Apostrophes and hyphens join a word only inside it (`don't`, `well-known`).
        if !isDigit && (WordText.isWordScalar(character) || (WordText.isJoiner(character) && !typed.isEmpty)) {
            return typeLetter(character)
        }
        return punctuation(character)
    }

    /// A candidate was clicked in the panel (index within the current page).
    public func candidateClicked(pageIndex: Int) -> KeyResult {
        let index = pageStart + pageIndex
        guard !isInert, tableVisible, index >= 0, index < candidates.count else {
            return KeyResult(handled: false, effects: [], needsSuggestions: false)
        }
        return select(index)
    }

    /// Recomputes the candidates for the current state; call after a key is answered.
    ///
    /// Returns nothing when the state is the one last predicted for (no work done twice).
    public func refreshSuggestions() -> [SessionEffect] {
        guard !isInert else { return [] }
        let before: String
        if !typed.isEmpty {
            before = contextBefore + typed
        } else if settings.nextWordPredictions && contextKnown && (pendingSpace || endsWithSpace(contextBefore)) {
            before = contextBefore + (pendingSpace ? " " : "")
        } else {
            lastSuggestionKey = nil
            return hideTable()
        }
        if before == lastSuggestionKey, tableVisible || candidates.isEmpty { return [] }
        lastSuggestionKey = before
        candidates = predictor.suggest(before: before, count: settings.candidateCount)
        tableCursor = 0
        cursorVisible = false
        if candidates.isEmpty { return hideTable() }
        tableVisible = true
        return [.updateLookupTable(table())]
    }

    // MARK: Key rules

    private func typeLetter(_ character: Unicode.Scalar) -> KeyResult {
        var effects: [SessionEffect] = []
        if pendingSpace {
            effects.append(commit(" "))
            pendingSpace = false
        }
        typed.unicodeScalars.append(character)
        effects.append(preeditEffect())
        return KeyResult(handled: true, effects: effects, needsSuggestions: true)
    }

    private func backspace() -> KeyResult {
        if !typed.isEmpty {
            typed.removeLast()
            return KeyResult(handled: true, effects: [preeditEffect()], needsSuggestions: true)
        }
        if pendingSpace {
            pendingSpace = false
            lastSuggestionKey = nil
            return KeyResult(handled: true, effects: [.hidePreedit] + hideTable(), needsSuggestions: false)
        }
        if !contextBefore.isEmpty { contextBefore.removeLast() }
        lastSuggestionKey = nil
        return KeyResult(handled: false, effects: hideTable(), needsSuggestions: true)
    }

    private func space() -> KeyResult {
        if !typed.isEmpty {
            let word = cursorVisible && tableCursor < candidates.count ? candidates[tableCursor] : typed
            typed = ""
            var effects = [commit(word + " ")]
            effects.append(.hidePreedit)
            return KeyResult(handled: true, effects: effects, needsSuggestions: true)
        }
        if pendingSpace {
            pendingSpace = false
            return KeyResult(handled: true, effects: [commit(" "), .hidePreedit], needsSuggestions: true)
        }
        if tableVisible && cursorVisible && tableCursor < candidates.count {
            let word = candidates[tableCursor]
            return KeyResult(handled: true, effects: [commit(word + " ")] + hideTable(), needsSuggestions: true)
        }
        contextBefore.append(" ")
        return KeyResult(handled: false, effects: hideTable(), needsSuggestions: true)
    }

    private func returnKey(_ event: KeyEvent) -> KeyResult {
        var effects: [SessionEffect] = []
        if !typed.isEmpty {
            let word = cursorVisible && tableCursor < candidates.count ? candidates[tableCursor] : typed
            typed = ""
            effects.append(commit(word))
            effects.append(.hidePreedit)
        } else if pendingSpace {
            pendingSpace = false
            effects.append(.hidePreedit)
        }
        contextBefore.append("\n")
        effects += hideTable()
        return KeyResult(handled: false, effects: effects, needsSuggestions: false)
    }

    private func escape() -> KeyResult {
        if tableVisible {
            lastSuggestionKey = typed.isEmpty ? contextBefore : contextBefore + typed
            return KeyResult(handled: true, effects: hideTable(), needsSuggestions: false)
        }
        return passThrough(flushing: true, appending: nil, invalidatesContext: false)
    }

    private func moveHighlight(by step: Int) -> KeyResult {
        guard !candidates.isEmpty else { return KeyResult(handled: true, effects: [], needsSuggestions: false) }
        if cursorVisible {
            tableCursor = (tableCursor + step + candidates.count) % candidates.count
        } else {
            tableCursor = step > 0 ? pageStart : min(candidates.count - 1, pageStart + settings.pageSize - 1)
            cursorVisible = true
        }
        return KeyResult(handled: true, effects: [.updateLookupTable(table())], needsSuggestions: false)
    }

    private func page(forward: Bool) -> KeyResult {
        let pageSize = max(1, settings.pageSize)
        let pages = (candidates.count + pageSize - 1) / pageSize
        let current = tableCursor / pageSize
        let next = forward ? min(pages - 1, current + 1) : max(0, current - 1)
        tableCursor = next * pageSize
        return KeyResult(handled: true, effects: [.updateLookupTable(table())], needsSuggestions: false)
    }

    private func select(_ index: Int) -> KeyResult {
        let word = candidates[index]
        var effects: [SessionEffect] = []
        if pendingSpace && typed.isEmpty {
            effects.append(commit(" "))
        }
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

    private func punctuation(_ character: Unicode.Scalar) -> KeyResult {
        var effects: [SessionEffect] = []
        if pendingSpace && typed.isEmpty && Self.attachesToPrevious.contains(character) {
            pendingSpace = false
            effects.append(.hidePreedit)
        }
        let flushed = passThrough(flushing: true, appending: String(character), invalidatesContext: false)
        return KeyResult(handled: false, effects: effects + flushed.effects, needsSuggestions: true)
    }

    /// Commits whatever is composed, then lets the application have the key.
    private func passThrough(flushing: Bool, appending: String?, invalidatesContext: Bool) -> KeyResult {
        var effects: [SessionEffect] = []
        if flushing {
            var text = typed
            if pendingSpace { text = typed.isEmpty ? " " : typed }
            if !text.isEmpty {
                effects.append(commit(text))
                effects.append(.hidePreedit)
            }
            typed = ""
            pendingSpace = false
        }
        if let appending { contextBefore.append(appending) }
        if invalidatesContext {
            // The cursor may have moved: only the client's surrounding text can say where to.
            contextKnown = false
            contextBefore = ""
        }
        lastSuggestionKey = nil
        effects += hideTable()
        return KeyResult(handled: false, effects: effects, needsSuggestions: !invalidatesContext)
    }

    // MARK: Helpers

    private var pageStart: Int { (tableCursor / max(1, settings.pageSize)) * max(1, settings.pageSize) }

    private func commit(_ text: String) -> SessionEffect {
        contextBefore.append(text)
        if contextBefore.unicodeScalars.count > 2000 {
            contextBefore = String(contextBefore.unicodeScalars.suffix(1000))
        }
        contextKnown = true
        return .commitText(text)
    }

    private func preeditEffect() -> SessionEffect {
        if typed.isEmpty && !pendingSpace { return .hidePreedit }
        let text = typed.isEmpty ? " " : typed
        let length = text.unicodeScalars.count
        return .updatePreedit(Preedit(text: text, cursor: length, underlined: typed.isEmpty ? 0 : length))
    }

    private func table() -> CandidateTable {
        CandidateTable(
            candidates: candidates, pageSize: settings.pageSize, cursor: tableCursor, cursorVisible: cursorVisible,
            labels: (1...max(1, min(9, settings.pageSize))).map { "F\($0)" })
    }

    private func hideTable() -> [SessionEffect] {
        guard tableVisible else { return [] }
        tableVisible = false
        cursorVisible = false
        return [.hideLookupTable]
    }

    private func clearComposition() {
        typed = ""
        pendingSpace = false
        candidates = []
        tableVisible = false
        cursorVisible = false
        tableCursor = 0
        lastSuggestionKey = nil
    }

    /// The client commits the preedit on focus-out and reset; record it as context.
    private func absorbPreeditIntoContext() {
        contextBefore += typed
        if pendingSpace { contextBefore += " " }
    }

    private func endsWithSpace(_ text: String) -> Bool {
        guard let last = text.unicodeScalars.last else { return false }
        return last == " "
    }
}
