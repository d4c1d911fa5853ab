/// The corrections of the current text: its flags (`CorrectionTracker`), the finished word
/// waiting for its check, autocorrection, the correction panel and the auxiliary text that shows
/// them.
///
/// It decides; the session carries out (commits, fixes through `TextContext`, learning). A fix is
/// applied only through `CorrectionTracker`'s verified plan.
public struct Corrections: Sendable {
    /// A word the user finished typing, and the text before it, checked once the key is answered.
    public struct PendingCheck: Equatable, Sendable {
        public var word: String
        public var before: String
        public init(word: String, before: String) {
            self.word = word
            self.before = before
        }
    }

    /// A word's check under way: the word and its search of near words.
    public struct RunningCheck: Sendable {
        /// The word checked and the text before it when it was finished.
        public var check: PendingCheck
        /// The check, at its search of near words.
        public var search: WordCheckSearch
    }

    /// What a key does while the correction panel is open.
    public enum PanelAnswer: Equatable, Sendable {
        /// The panel changed: draw it again.
        case redraw
        /// The panel is closed; the user dismissed it, so no candidates pop up in its place.
        case close
        /// Apply this flag's fix (the panel is closed).
        case applyFix(id: Int)
        /// Not a panel key: the panel is closed and the key does what it always does.
        case passOn
    }

    /// The flags of the current text and the words the user kept.
    public internal(set) var tracker = CorrectionTracker()
    /// The word to check once the key is answered.
    public internal(set) var pendingCheck: PendingCheck? = nil
    /// A check under way: its search of near words runs a slice at a time.
    public internal(set) var runningCheck: RunningCheck? = nil
    /// Whether the correction panel (every flag with its explanation) replaces the suggestions.
    public internal(set) var panelIsOpen = false
    /// The panel's rows: one per flag, its chip and the other fixes.
    public internal(set) var panel = CandidateMenu()

    /// No flags, nothing to check, the panel closed.
    public init() {}

    /// The flags, newest first.
    public var flags: [TrackedFlag] { tracker.flags }

    // MARK: Checking finished words

    /// Words never flagged before the cursor: the ones the user kept, and those of `before` (names
    /// and jargon the user typed in this text).
    public func exemptWords(before: String) -> Set<String> {
        var words = tracker.keptWords
        for word in WordText.words(in: before) { words.insert(WordText.key(word)) }
        return words
    }

    /// The fix Space should apply instead of `word` under `mode`, or nil.
    public func autocorrection(
        for word: String, before: String, mode: AutocorrectMode, checker: SpellChecker
    ) -> String? {
        guard mode != .off else { return nil }
        guard
            let flag = checker.check(
                word: Substring(word), before: Substring(before), exempt: exemptWords(before: before)),
            let replacement = flag.replacements.first
        else { return nil }
        switch mode {
        case .off: return nil
        case .veryLikely:
            // Far more likely, and the first letter agrees (first-letter typos are rare).
            let sameStart = WordText.key(replacement).unicodeScalars.first == WordText.key(word).unicodeScalars.first
            return flag.margin >= 6 && sameStart ? replacement : nil
        case .always: return replacement
        }
    }

    /// Checks `word` (typed after `before`) once the key is answered.
    public mutating func queueCheck(word: String, before: String) {
        pendingCheck = PendingCheck(word: word, before: before)
    }

    /// Forgets the word waiting for its check, and a check under way (the cursor may have moved
    /// away from the word).
    public mutating func dropPendingCheck() {
        pendingCheck = nil
        runningCheck = nil
    }

    /// Checks the word waiting for its check, if `before` (the known text before the cursor now)
    /// still holds it; returns whether a flag was added.
    public mutating func runPendingCheck(before: String?, checker: SpellChecker) -> Bool {
        advanceChecks(before: before, checker: checker, work: .max).flagged
    }

    /// Carries the checks of finished words forward by at most about `limit` units of search
    /// (`WordCheckSearch.advance(work:)`): a check under way first, then the word waiting for its
    /// check. A flag is added only if `before` (the known text before the cursor now) still holds
    /// its word; `done` is false while a search is left for a later call.
    public mutating func advanceChecks(before: String?, checker: SpellChecker, work limit: Int)
        -> (flagged: Bool, done: Bool)
    {
        guard let before else {  // the text is not known (or checking is off): nothing can be proved
            dropPendingCheck()
            return (false, true)
        }
        var flagged = false
        var budget = limit
        while true {
            if var running = runningCheck {
                runningCheck = nil
                budget -= running.search.advance(work: max(1, budget))
                guard running.search.isFinished else {
                    runningCheck = running
                    return (flagged, false)
                }
                if let flag = running.search.flag, add(flag, checked: running.check, before: before) { flagged = true }
                if budget <= 0, pendingCheck != nil { return (flagged, false) }
                continue
            }
            guard let check = pendingCheck else { return (flagged, true) }
            pendingCheck = nil
            guard let tail = Self.tail(after: check, in: before) else { continue }
            // Earlier words are the user's own (names, jargon), unless they are flagged themselves:
            // the same typo twice in a sentence is flagged twice.
            var exempt = tracker.keptWords
            let flaggedWords = Set(tracker.flags.map { WordText.key($0.flag.word) })
            for word in WordText.words(in: check.before) where !flaggedWords.contains(WordText.key(word)) {
                exempt.insert(WordText.key(word))
            }
            let start = checker.startCheck(
                word: Substring(check.word), before: Substring(check.before), after: Substring(tail), exempt: exempt)
            switch start {
            case .finished(let flag):
                if let flag, add(flag, checked: check, before: before) { flagged = true }
            case .searching(let search):
                runningCheck = RunningCheck(check: check, search: search)
            }
        }
    }

    /// What follows the checked word up to the cursor, if `before` still holds the word.
    private static func tail(after check: PendingCheck, in before: String) -> String? {
        guard before.hasPrefix(check.before + check.word) else { return nil }
        return String(before.unicodeScalars.dropFirst((check.before + check.word).unicodeScalars.count))
    }

    /// Adds a flag of the checked word if `before` (the text before the cursor now, which may
    /// have grown while the check ran) still holds the word where it was.
    private mutating func add(_ flag: TypoFlag, checked check: PendingCheck, before: String) -> Bool {
        guard let tail = Self.tail(after: check, in: before) else { return false }
        tracker.add(flag, before: Substring(check.before), tail: tail)
        return true
    }

    // MARK: The correction panel

    /// Opens the panel on the newest flag (only when there is a flag).
    public mutating func openPanel() {
        guard !tracker.flags.isEmpty else { return }
        panelIsOpen = true
        panel.cursor = 0
    }

    /// Closes the panel.
    public mutating func closePanel() { panelIsOpen = false }

    /// The flag the panel's highlight is on.
    public var highlightedFlag: TrackedFlag? {
        guard !tracker.flags.isEmpty else { return nil }
        return tracker.flags[min(panel.cursor, tracker.flags.count - 1)]
    }

    /// What `event` does while the panel is open; nil when the panel has nothing to show (it
    /// closes) and the key goes to the other rules. `keepWordKey` dismisses the highlighted flag.
    public mutating func panelKey(_ event: KeyEvent, keepWordKey: KeyBinding?) -> PanelAnswer? {
        let flags = tracker.flags
        guard !flags.isEmpty else {
            panelIsOpen = false
            return nil
        }
        if let keepWordKey, keepWordKey.matches(event) {
            tracker.keep(id: flags[min(panel.cursor, flags.count - 1)].id)
            panel.cursor = min(panel.cursor, max(0, tracker.flags.count - 1))
            if tracker.flags.isEmpty {
                panelIsOpen = false
                return .close
            }
            return .redraw
        }
        // With Ctrl, Alt or Super a key is a shortcut (Ctrl+F1 forgets a learned candidate), never
        // a panel key: it closes the panel and does what it always does.
        let panelKeyval = event.modifiers.isDisjoint(with: .shortcut) ? event.keyval : 0
        switch panelKeyval {
        case Keysym.escape:
            panelIsOpen = false
            return .close
        case Keysym.down, Keysym.tab:
            panel.cursor = (panel.cursor + 1) % flags.count
            return .redraw
        case Keysym.up, Keysym.isoLeftTab:
            panel.cursor = (panel.cursor + flags.count - 1) % flags.count
            return .redraw
        case Keysym.returnKey, Keysym.keypadEnter, Keysym.space:
            panelIsOpen = false
            return .applyFix(id: flags[min(panel.cursor, flags.count - 1)].id)
        case Keysym.f1...Keysym.f9:
            // The row of the shown page, as its label says (the panel pages like the suggestions).
            guard let index = panel.index(row: Int(event.keyval - Keysym.f1)), index < flags.count else {
                return .redraw
            }
            panelIsOpen = false
            return .applyFix(id: flags[index].id)
        default:
            panelIsOpen = false
            return .passOn
        }
    }

    /// A request from the candidate panel's own controls while the panel is open.
    public mutating func panelRequest(_ request: CandidatePanelRequest, pageSize: Int) {
        refreshPanelRows()
        switch request {
        case .cursorDown: panel.moveHighlight(by: 1)
        case .cursorUp: panel.moveHighlight(by: -1)
        case .pageDown, .pageUp: panel.page(forward: request == .pageDown, pageSize: pageSize)
        }
    }

    /// The flag of a clicked row of the panel's shown page; nil for a row that shows none.
    public func panelFlagID(clickedRow row: Int) -> Int? {
        guard row >= 0, row < panel.shownPageSize else { return nil }
        let index = (panel.cursor / panel.shownPageSize) * panel.shownPageSize + row
        guard index >= 0, index < tracker.flags.count else { return nil }
        return tracker.flags[index].id
    }

    /// The panel as the candidate table shows it.
    public mutating func panelTable(pageSize: Int) -> CandidateTable {
        refreshPanelRows()
        // Digits always type in the panel: its rows are selected with the function keys.
        return panel.table(pageSize: pageSize, keys: .functionKeys)
    }

    /// The panel's rows for the current flags (the highlight stays where it was).
    mutating func refreshPanelRows() {
        panel.update(
            items: tracker.flags.map { tracked in
                tracked.chip
                    + (tracked.flag.replacements.count > 1
                        ? "  (" + tracked.flag.replacements.dropFirst().joined(separator: ", ") + ")" : "")
            })
        panel.cursorVisible = true
    }

    // MARK: The auxiliary text

    /// The auxiliary text: a notice, else the dictation state, else the panel's explanation of
    /// the highlighted flag, else the chips (newest first, three at most) with `cloudHint` while
    /// the cloud check is waiting; nil for nothing.
    public func auxiliaryText(notice: String?, dictationStatus: String?, cloudHint: String?) -> String? {
        if let notice { return notice }
        if let dictationStatus { return dictationStatus }
        let flags = tracker.flags
        if panelIsOpen, let tracked = highlightedFlag { return "\(tracked.chip): \(tracked.flag.explanation)" }
        if !flags.isEmpty {
            let chips = flags.prefix(3).map(\.chip).joined(separator: "   ")
            let more = flags.count > 3 ? "   +\(flags.count - 3)" : ""
            return chips + more + (cloudHint ?? "")
        }
        return cloudHint.map { $0.trimmingCharacters(in: " ").description }
    }
}
