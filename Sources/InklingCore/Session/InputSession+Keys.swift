/// The session's key handlers, in the order `InputSession.keyHandlers` asks them: each
/// accepts a key (a handled result), rejects it (an unhandled result: the application gets
/// it, after the effects), or ignores it (nil: the next handler decides), as librime's
/// processors do.

extension InputSession {
    /// The key handlers in the order they are asked; the first that answers decides. Made once,
    /// and each takes the session as an argument: the list of bound methods it was before made
    /// an array and a closure per handler at every key event (issue 18).
    static let keyHandlers: [@Sendable (InputSession, KeyEvent) -> KeyResult?] = [
        { $0.correctionPanelKeys($1) }, { $0.commandKeys($1) }, { $0.shortcutKeys($1) },
        { $0.heldKeys($1) },  // PassedKeyOrdering.swift
        { $0.editingKeys($1) }, { $0.navigationKeys($1) }, { $0.selectionKeys($1) },
        { $0.compositionKeys($1) },
    ]

    /// Keys while the correction panel is open: it takes its own keys; any other key closes it
    /// and goes on to the next handlers.
    func correctionPanelKeys(_ event: KeyEvent) -> KeyResult? {
        guard corrections.panelIsOpen else { return nil }
        return panelKey(event)
    }

    /// The configurable commands: apply the newest fix, open the correction panel, keep the word,
    /// toggle off the record.
    func commandKeys(_ event: KeyEvent) -> KeyResult? {
        if let binding = settings.applyFixKey, binding.matches(event), let newest = corrections.flags.first {
            return applyFix(id: newest.id, replacement: nil)
        }
        if let binding = settings.correctionPanelKey, binding.matches(event), !corrections.flags.isEmpty {
            corrections.openPanel()
            return KeyResult(
                handled: true, effects: [.updateLookupTable(panelTable())] + auxiliaryEffects(), needsSuggestions: false
            )
        }
        if let binding = settings.keepWordKey, binding.matches(event) {
            if !composition.typed.isEmpty {
                corrections.tracker.keep(word: composition.typed)
                return KeyResult(
                    handled: true, effects: finishWord(checked: false) + hideTable() + auxiliaryEffects(),
                    needsSuggestions: true)
            }
            if let newest = corrections.flags.first {
                corrections.tracker.keep(id: newest.id)
                return KeyResult(handled: true, effects: auxiliaryEffects(), needsSuggestions: false)
            }
        }
        if let binding = settings.offTheRecordKey, binding.matches(event) {
            // Asked for, not set: the settings reader applies it to every session (one way).
            let offTheRecord = !settings.offTheRecord
            learning.dropUnfinished()
            notice = offTheRecord ? tr("off the record: nothing is learned or sent") : tr("back on the record")
            return KeyResult(
                handled: true, effects: auxiliaryEffects(), needsSuggestions: false,
                intents: [.offTheRecordChanged(offTheRecord)])
        }
        return nil
    }

    /// Ctrl with a selection key forgets that learned word (the peer's convention); any other
    /// chord belongs to the application.
    func shortcutKeys(_ event: KeyEvent) -> KeyResult? {
        if suggestions.isShown, event.modifiers.intersection(.shortcut) == .control,
            (Keysym.f1...Keysym.f9).contains(event.keyval)
        {
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
        return nil
    }

    /// BackSpace, Space, Return and Escape.
    func editingKeys(_ event: KeyEvent) -> KeyResult? {
        switch event.keyval {
        case Keysym.backSpace: return backspace()
        case Keysym.space: return space()
        case Keysym.returnKey, Keysym.keypadEnter: return returnKey()
        case Keysym.escape: return escape()
        default: return nil
        }
    }

    /// The highlight and paging keys move the suggestions while they show; otherwise the
    /// application's (Tab types a tab; the arrows may move the cursor).
    func navigationKeys(_ event: KeyEvent) -> KeyResult? {
        switch event.keyval {
        case Keysym.tab, Keysym.down:
            if suggestions.isShown { return moveHighlight(by: 1) }
            return passThrough(
                flushing: true, appending: event.keyval == Keysym.tab ? "\t" : nil,
                invalidatesContext: event.keyval != Keysym.tab)
        case Keysym.isoLeftTab, Keysym.up:
            if suggestions.isShown { return moveHighlight(by: -1) }
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        case Keysym.pageDown, Keysym.pageUp:
            if suggestions.isShown { return page(forward: event.keyval == Keysym.pageDown) }
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        default:
            return nil
        }
    }

    /// F1…F9 (and, in digits mode, 1…9) pick the row of the shown page that their label names.
    func selectionKeys(_ event: KeyEvent) -> KeyResult? {
        if (Keysym.f1...Keysym.f9).contains(event.keyval) {
            if suggestions.isShown, let index = suggestions.index(row: Int(event.keyval - Keysym.f1)) {
                return select(index)
            }
            return passThrough(flushing: true, appending: nil, invalidatesContext: false)
        }
        guard settings.selectionKeys == .digits, suggestions.isShown, let character = event.character,
            character.properties.generalCategory == .decimalNumber, ("1"..."9").contains(character)
        else { return nil }
        return suggestions.index(row: Int(character.value - 0x31)).map(select)
    }

    /// Letters build the word; other characters are typed by the engine (punctuation); keys that
    /// type nothing (cursor movement, Delete) are the application's.
    func compositionKeys(_ event: KeyEvent) -> KeyResult? {
        guard let character = event.character, character.value >= 0x20, character.value != 0x7F else {
            return passThrough(flushing: true, appending: nil, invalidatesContext: true)
        }
        let isDigit = character.properties.generalCategory == .decimalNumber
        // Apostrophes and hyphens join a word only inside it (`don't`, `well-known`).
        if !isDigit
            && (WordText.isWordScalar(character) || (WordText.isJoiner(character) && !composition.typed.isEmpty))
        {
            return typeLetter(character)
        }
        return punctuation(character)
    }

    /// A candidate was clicked in the panel (index within the current page).
    public func candidateClicked(pageIndex: Int) -> KeyResult {
        // A row of the shown page; anything else (a stale or hostile index) selects nothing.
        if corrections.panelIsOpen {
            guard let id = corrections.panelFlagID(clickedRow: pageIndex) else {
                return KeyResult(handled: false, effects: [], needsSuggestions: false)
            }
            corrections.closePanel()
            return applyFix(id: id, replacement: nil)
        }
        guard pageIndex >= 0, pageIndex < suggestions.shownPageSize else {
            return KeyResult(handled: false, effects: [], needsSuggestions: false)
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
        if corrections.panelIsOpen, !corrections.flags.isEmpty {
            corrections.panelRequest(request, pageSize: pageSize)
            return KeyResult(
                handled: true, effects: [.updateLookupTable(panelTable())] + auxiliaryEffects(), needsSuggestions: false
            )
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

    func typeLetter(_ character: Unicode.Scalar) -> KeyResult {
        var effects = commitPending(keepSpace: true)
        composition.typed.unicodeScalars.append(character)
        effects.append(preeditEffect())
        return KeyResult(handled: true, effects: effects, needsSuggestions: true)
    }

    func backspace() -> KeyResult {
        if !composition.typed.isEmpty {
            composition.typed.removeLast()
            return KeyResult(handled: true, effects: [preeditEffect()], needsSuggestions: true)
        }
        if let correction = composition.pendingAutocorrection {
            // Undo the autocorrection: exactly what was typed, and the word is kept.
            composition.dropPending()
            corrections.tracker.keep(word: correction.typed)
            lastSuggestionKey = nil
            return KeyResult(
                handled: true, effects: [commit(correction.typed + " "), .hidePreedit] + hideTable(),
                needsSuggestions: true)
        }
        if composition.pendingSpace {
            composition.pendingSpace = false
            lastSuggestionKey = nil
            return KeyResult(handled: true, effects: [.hidePreedit] + hideTable(), needsSuggestions: false)
        }
        passingOnTextChangingKey(inserts: false)  // PassedKeyOrdering.swift
        context.deletedBackward()
        corrections.tracker.deletedBackward()
        lastSuggestionKey = nil
        return KeyResult(handled: false, effects: hideTable() + auxiliaryEffects(), needsSuggestions: true)
    }

    func space() -> KeyResult {
        if !composition.typed.isEmpty {
            let highlighted = suggestions.highlighted
            // No autocorrection of a word begun before the composition: it would rewrite letters
            // already in the text (the finished word's check flags it instead).
            if highlighted == nil, attachedFragment().isEmpty, let replacement = autocorrection(for: composition.typed)
            {
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

    func returnKey() -> KeyResult {
        var effects: [SessionEffect] = []
        if !composition.typed.isEmpty {
            effects += finishWord(as: suggestions.highlighted)
        } else {
            effects += commitPending(keepSpace: false)
        }
        passingOnTextChangingKey()  // PassedKeyOrdering.swift
        inserted("\n")
        effects += hideTable()
        return KeyResult(handled: false, effects: effects, needsSuggestions: true)
    }

    func escape() -> KeyResult {
        if suggestions.isShown {
            lastSuggestionKey = context.before + composition.typed
            return KeyResult(handled: true, effects: hideTable(), needsSuggestions: false)
        }
        return passThrough(flushing: true, appending: nil, invalidatesContext: false)
    }

    func moveHighlight(by step: Int) -> KeyResult {
        guard !suggestions.items.isEmpty else { return KeyResult(handled: true, effects: [], needsSuggestions: false) }
        suggestions.moveHighlight(by: step)
        return KeyResult(handled: true, effects: [.updateLookupTable(table())], needsSuggestions: false)
    }

    func page(forward: Bool) -> KeyResult {
        suggestions.page(forward: forward, pageSize: pageSize)
        return KeyResult(handled: true, effects: [.updateLookupTable(table())], needsSuggestions: false)
    }

    func select(_ index: Int) -> KeyResult {
        guard suggestions.items.indices.contains(index) else {
            return KeyResult(handled: false, effects: [], needsSuggestions: false)
        }
        let word = suggestions.items[index]
        var effects: [SessionEffect] = []
        if composition.typed.isEmpty { effects += commitPending(keepSpace: true) }
        // After the word's start already in the text, only the rest (the table keeps only
        // candidates that begin with it; if a report changed it since, what was typed).
        let completion = Self.completion(of: word, after: attachedFragment()) ?? composition.typed
        composition.typed = ""
        effects.append(commit(completion))
        composition.pendingSpace = true
        effects.append(preeditEffect())
        effects += hideTable()
        return KeyResult(handled: true, effects: effects, needsSuggestions: true)
    }

    /// Characters that attach to the word before them, so a pending space is dropped.
    static let attachesToPrevious: Set<Unicode.Scalar> = [
        ",", ".", ";", ":", "!", "?", ")", "]", "}", "\u{2026}", "\u{201D}", "%",
    ]

    /// A character that is not part of a word: the engine types it, in one commit with the word
    /// or pending space before it. ibus-gtk3 hands a key the engine passes on back to the
    /// application at the end of its event queue, behind keys already queued whose effects
    /// (commits, preedit) arrive first; a slow application (LibreOffice) then inserts it out
    /// of order or loses it. Commits keep their order.
    func punctuation(_ character: Unicode.Scalar) -> KeyResult {
        var text = ""
        if composition.isEmpty {
            // Nothing composed: what is before the cursor is no better known than it was.
            inserted(String(character))
            lastSuggestionKey = nil
            return KeyResult(
                handled: true, effects: [.commitText(String(character))] + hideTable() + auxiliaryEffects(),
                needsSuggestions: true)
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
    func passThrough(flushing: Bool, appending: String?, invalidatesContext: Bool) -> KeyResult {
        var effects: [SessionEffect] = []
        if flushing {
            if !composition.typed.isEmpty {
                effects += finishWord()
            } else {
                effects += commitPending(keepSpace: true)
            }
        }
        if let appending {
            passingOnTextChangingKey()  // PassedKeyOrdering.swift
            inserted(appending)
        }
        if invalidatesContext {
            // The cursor may have moved: only the client's surrounding text can say where to.
            context.invalidate()
            corrections.dropPendingCheck()
            corrections.tracker.expireAll()
        }
        lastSuggestionKey = nil
        effects += hideTable() + auxiliaryEffects()
        return KeyResult(handled: false, effects: effects, needsSuggestions: !invalidatesContext)
    }
}
