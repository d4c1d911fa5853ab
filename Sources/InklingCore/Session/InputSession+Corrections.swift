/// Corrections in the session: the check of a finished word, autocorrection, verified fixes
/// (planned by `CorrectionTracker`), the correction panel and the auxiliary text.

extension InputSession {
    /// The fix Space should apply instead of the typed word, per the autocorrect setting.
    func autocorrection(for word: String) -> String? {
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

    func exemptWords() -> Set<String> {
        var words = corrections.keptWords
        for word in WordText.words(in: context.before) { words.insert(WordText.key(word)) }
        return words
    }

    /// Checks the word finished by the last key, now that the key has been answered.
    func runPendingCheck() -> [SessionEffect] {
        guard let check = pendingCheck else { return [] }
        pendingCheck = nil
        guard settings.checkSpelling, context.isKnown, context.before.hasPrefix(check.before + check.word) else {
            return []
        }
        let tail = String(context.before.unicodeScalars.dropFirst((check.before + check.word).unicodeScalars.count))
        // Earlier words are the user's own (names, jargon), unless they are flagged themselves:
        // the same typo twice in a sentence is flagged twice.
        var exempt = corrections.keptWords
        let flagged = Set(corrections.flags.map { WordText.key($0.flag.word) })
        for word in WordText.words(in: check.before) where !flagged.contains(WordText.key(word)) {
            exempt.insert(WordText.key(word))
        }
        guard
            let flag = checker.check(
                word: Substring(check.word), before: Substring(check.before), after: Substring(tail), exempt: exempt)
        else { return [] }
        corrections.add(flag, before: Substring(check.before), tail: tail)
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
            // One commit per answer: Wayland clients keep only the last (EditBatch). LibreOffice,
            // which shows the preedit in its text, keeps the order it was proven with: it cut the
            // word's space (`I sawthe cat`) when the preedit went before the deletion.
            let answer = effects + auxiliaryEffects()
            return KeyResult(
                handled: true, effects: clientEchoesPreedit ? answer : EditBatch.coalesced(answer),
                needsSuggestions: true)
        }
    }

    /// Keys while the correction panel is open; nil hands the key to the normal rules.
    func panelKey(_ event: KeyEvent) -> KeyResult? {
        let flags = corrections.flags
        guard !flags.isEmpty else {
            panelOpen = false
            return nil
        }
        func redraw() -> KeyResult {
            KeyResult(
                handled: true, effects: [.updateLookupTable(panelTable())] + auxiliaryEffects(), needsSuggestions: false
            )
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
            guard let index = panel.index(row: Int(event.keyval - Keysym.f1)), index < flags.count else {
                return redraw()
            }
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
    func closePanel() -> KeyResult {
        panelOpen = false
        var effects: [SessionEffect] = [.hideLookupTable]
        suggestions.clear()
        effects += auxiliaryEffects()
        return KeyResult(handled: true, effects: effects, needsSuggestions: false)
    }

    func panelTable() -> CandidateTable {
        refreshPanelRows()
        // Digits always type in the panel: its rows are selected with the function keys.
        return panel.table(pageSize: pageSize, keys: .functionKeys)
    }

    /// The panel's rows for the current flags (the highlight stays where it was).
    func refreshPanelRows() {
        panel.update(
            items: corrections.flags.map { tracked in
                tracked.chip
                    + (tracked.flag.replacements.count > 1
                        ? "  (" + tracked.flag.replacements.dropFirst().joined(separator: ", ") + ")" : "")
            })
        panel.cursorVisible = true
    }

    /// The auxiliary text for the current flags (chips, newest first) or the panel's explanation.
    func auxiliaryEffects() -> [SessionEffect] {
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

    /// Shows a short message from the glue (a refused pack, a switched language) in the
    /// auxiliary text, where the session keeps track of it until the next key.
    public func showNotice(_ text: String) -> [SessionEffect] {
        notice = text
        return auxiliaryEffects()
    }
}
