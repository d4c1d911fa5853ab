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

    /// Forgets the word waiting for its check (the cursor may have moved away from it).
    public mutating func dropPendingCheck() { pendingCheck = nil }

    /// Checks the word waiting for its check, if `before` (the known text before the cursor now)
    /// still holds it; returns whether a flag was added.
    public mutating func runPendingCheck(before: String?, checker: SpellChecker) -> Bool {
        guard let check = pendingCheck else { return false }
        pendingCheck = nil
        guard let before, before.hasPrefix(check.before + check.word) else { return false }
        let tail = String(before.unicodeScalars.dropFirst((check.before + check.word).unicodeScalars.count))
        // Earlier words are the user's own (names, jargon), unless they are flagged themselves:
        // the same typo twice in a sentence is flagged twice.
        var exempt = tracker.keptWords
        let flagged = Set(tracker.flags.map { WordText.key($0.flag.word) })
        for word in WordText.words(in: check.before) where !flagged.contains(WordText.key(word)) {
            exempt.insert(WordText.key(word))
        }
        guard
            let flag = checker.check(
                word: Substring(check.word), before: Substring(check.before), after: Substring(tail), exempt: exempt)
        else { return false }
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
