import InklingCore
import Testing

/// Issue 12: a key the engine passes on (Return) keeps its place among the keys typed after it.
@Suite struct PassedKeyOrderingTests {
    // MARK: The decision

    @Test func holdsKeysUntilAReportShowsTheKeyAndTheHeldKeysApplied() {
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "rather spend", now: 0)
        do {
            let held = ordering.holds("W", now: 10)
            #expect(held)
        }
        // The echo of the word committed with the Return: the Return is not applied yet.
        ordering.reported(before: "rather spend")
        #expect(ordering.isHolding)
        do {
            let held = ordering.holds("e", now: 20)
            #expect(held)
        }
        // The Return applied (a new paragraph), the held keys not yet: they are still queued.
        ordering.reported(before: "")
        #expect(ordering.isHolding)
        ordering.reported(before: "W")
        #expect(ordering.isHolding)
        ordering.reported(before: "We")
        #expect(!ordering.isHolding)
    }

    @Test func aReportOlderThanTheLastCommitKeepsTheWait() {
        // `summer` then `.` committed, then Return: a report still without the `.` is older
        // than the Return, though it differs from the text before it.
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "the summer.", now: 0)
        ordering.reported(before: "the summer")
        #expect(ordering.isHolding)
        ordering.reported(before: "")
        #expect(!ordering.isHolding, "the new paragraph")
    }

    @Test func aPassedOnBackSpaceEndsTheWaitOnTheShorterText() {
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "word.", inserts: false, now: 0)
        ordering.reported(before: "word.")
        #expect(ordering.isHolding)
        ordering.reported(before: "word")
        #expect(!ordering.isHolding)
    }

    /// A BackSpace at the start of the field removes nothing: the report after it shows only the
    /// keys typed since, behind the same (empty) text. That report ends the wait; before, the
    /// engine took it for a report older than the key and held every key for 3 s.
    @Test func aBackSpaceThatRemovedNothingEndsTheWaitOnTheHeldKeys() {
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "", inserts: false, now: 0)
        ordering.reported(before: "")
        #expect(ordering.isHolding, "nothing typed since: the report cannot tell")
        do {
            let held = ordering.holds("W", now: 10)
            #expect(held)
        }
        ordering.reported(before: "")
        #expect(ordering.isHolding, "the held key not applied yet")
        ordering.reported(before: "W")
        #expect(!ordering.isHolding)
    }

    @Test func aBackSpaceOverASpaceTheReportLeavesOutEndsTheWaitOnTheHeldKeys() {
        // LibreOffice leaves trailing spaces out: `end.` before and after the BackSpace.
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "end. ", inserts: false, now: 0)
        do {
            let held = ordering.holds("x", now: 10)
            #expect(held)
        }
        ordering.reported(before: "end.")
        #expect(ordering.isHolding)
        ordering.reported(before: "end.x")
        #expect(!ordering.isHolding)
    }

    @Test func aBackSpaceAtTheStartOfAParagraphEndsTheWaitOnTheJoinedText() {
        // LibreOffice reports a paragraph: a BackSpace at its start joins it to the one before.
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "", inserts: false, now: 0)
        ordering.reported(before: "the summer.")
        #expect(!ordering.isHolding)
    }

    @Test func aClientReportingWholeTextEndsTheWaitOnTheNewLine() {
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "one", now: 0)
        ordering.reported(before: "one")
        #expect(ordering.isHolding)
        ordering.reported(before: "one\n")
        #expect(!ordering.isHolding)
    }

    @Test func trailingSpacesLeftOutOfReportsStillMatch() {
        // LibreOffice leaves trailing spaces out of its reports.
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "end. ", now: 0)
        ordering.reported(before: "end.")
        #expect(ordering.isHolding, "the text before the key, without its space")
        do {
            let held = ordering.holds("a", now: 1)
            #expect(held)
        }
        do {
            let held = ordering.holds(" ", now: 2)
            #expect(held)
        }
        ordering.reported(before: "a")
        #expect(!ordering.isHolding)
    }

    @Test func aClientThatNeverReportsHoldsOnlyAFewKeys() {
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "x", now: 0)
        for index in 0..<PassedKeyOrdering.maxHeldKeys {
            do {
                let held = ordering.holds("a", now: Int64(index))
                #expect(held)
            }
        }
        do {
            let held = ordering.holds("a", now: 20)
            #expect(!held)
        }
        #expect(!ordering.isHolding)
    }

    @Test func aClientThatNeverReportsHoldsOnlyAMoment() {
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: "x", now: 0)
        do {
            let held = ordering.holds("a", now: PassedKeyOrdering.maxWaitMilliseconds - 1)
            #expect(held)
        }
        do {
            let held = ordering.holds("b", now: PassedKeyOrdering.maxWaitMilliseconds)
            #expect(!held)
        }
        #expect(!ordering.isHolding)
    }

    @Test func unknownTextBeforeWaitsOnlyForTheHeldKeys() {
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: nil, now: 0)
        do {
            let held = ordering.holds("W", now: 1)
            #expect(held)
        }
        ordering.reported(before: "abc")
        #expect(ordering.isHolding)
        ordering.reported(before: "abcW")
        #expect(!ordering.isHolding)
    }

    // MARK: In the session

    /// A session in a client that reports its text; the test plays the client, one step at a time.
    private func reportingSession(_ clock: ManualClock) -> InputSession {
        let session = InputSession(predictor: Predictor(pack: RealPack.pack))
        session.clock = ProductClock { clock.now }
        session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        _ = session.focusIn()
        _ = session.setSurroundingText(SurroundingText(text: "rather ", cursor: 7, anchor: 7))
        return session
    }

    private func commits(_ result: KeyResult) -> [String] {
        result.effects.compactMap { if case .commitText(let text) = $0 { text } else { nil } }
    }

    private func showsPreedit(_ result: KeyResult) -> Bool {
        result.effects.contains { if case .updatePreedit = $0 { true } else { false } }
    }

    private func press(_ session: InputSession, _ event: KeyEvent) -> KeyResult {
        let result = session.processKey(event)
        if result.needsSuggestions { _ = session.refreshSuggestions() }
        return result
    }

    /// Writer under load: the Return the engine passed on is still in GTK's queue when the next
    /// letters come; they follow it as key events, and the word is composed again once Writer's
    /// report shows the Return (and the letters) applied.
    @Test func lettersAfterAPassedOnReturnFollowItUntilTheReportShowsIt() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        for letter in "spend".unicodeScalars { #expect(press(session, .typing(letter)).handled) }
        let returnKey = press(session, .key(Keysym.returnKey))
        #expect(!returnKey.handled, "Return stays a key event")
        #expect(commits(returnKey) == ["spend"])
        // The commit is applied, the Return is not yet.
        _ = session.setSurroundingText(SurroundingText(text: "rather spend", cursor: 12, anchor: 12))
        for letter in "We".unicodeScalars {
            clock.now += 30
            let result = press(session, .typing(letter))
            #expect(!result.handled, "passed on behind the Return")
            #expect(commits(result).isEmpty && !showsPreedit(result), "nothing of the engine's overtakes it")
        }
        #expect(session.composingText.isEmpty)
        // Writer applied the Return and both letters: the new paragraph holds `We`.
        _ = session.setSurroundingText(SurroundingText(text: "We", cursor: 2, anchor: 2))
        clock.now += 30
        let next = press(session, .typing("l"))
        #expect(next.handled, "composing again")
        #expect(showsPreedit(next))
        #expect(session.composingText == "l")
        #expect(session.knownContext == "We")
    }

    @Test func aSpaceAfterAPassedOnReturnIsNotCommittedAheadOfIt() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        _ = press(session, .key(Keysym.returnKey))
        let space = press(session, .key(Keysym.space))
        #expect(!space.handled)
        #expect(commits(space).isEmpty)
    }

    @Test func aPassedOnBackSpaceAndTabHoldTheNextLetterToo() {
        for keyval in [Keysym.backSpace, Keysym.tab] {
            let clock = ManualClock()
            let session = reportingSession(clock)
            #expect(!press(session, .key(keyval)).handled)
            let letter = press(session, .typing("a"))
            #expect(!letter.handled && !showsPreedit(letter), "keyval \(keyval)")
        }
    }

    /// BackSpace in an empty field: the application deletes nothing, and its report of the next
    /// letter ends the wait, so the letter after it is composed (before: held for 3 s).
    @Test func aBackSpaceInAnEmptyFieldHoldsOnlyUntilTheNextLetterIsReported() {
        let clock = ManualClock()
        let session = InputSession(predictor: Predictor(pack: RealPack.pack))
        session.clock = ProductClock { clock.now }
        session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        _ = session.focusIn()
        _ = session.setSurroundingText(SurroundingText(text: "", cursor: 0, anchor: 0))
        #expect(!press(session, .key(Keysym.backSpace)).handled)
        clock.now += 30
        #expect(!press(session, .typing("W")).handled, "held behind the BackSpace")
        _ = session.setSurroundingText(SurroundingText(text: "W", cursor: 1, anchor: 1))
        clock.now += 30
        let next = press(session, .typing("e"))
        #expect(next.handled && showsPreedit(next), "composing again, long before the bound")
        #expect(session.knownContext == "W")
    }

    @Test func compositionResumesAfterAFewKeysWhenNoReportComes() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        _ = press(session, .key(Keysym.returnKey))
        for _ in 0..<PassedKeyOrdering.maxHeldKeys { #expect(!press(session, .typing("a")).handled) }
        #expect(press(session, .typing("a")).handled)
    }

    /// Firefox on X11, as traced in suite run 4 (2026-12-02): the field reports its text until
    /// the engine's first commit, then ibus-gtk3 takes the capability away. Return is passed on
    /// (`key handled=false`), then Shift (`handled=false`), then `M` was composed at once
    /// (`handled=true`, `preedit scalars=1`): its preedit reached Firefox before the Return that
    /// ibus-gtk3 had put back at the end of GTK's queue, and the Return was lost
    /// (`summer.My`). Now the keys after it follow it as key events until typing pauses.
    @Test func lettersAfterAReturnFollowItInAClientThatStoppedReporting() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        for letter in "summer".unicodeScalars {
            clock.now += 30
            _ = press(session, .typing(letter))
        }
        clock.now += 30
        #expect(commits(press(session, .typing("."))) == ["summer."])
        // ibus-gtk3's request for the text failed right after that commit.
        session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus])
        clock.now += 30
        let returnKey = press(session, .key(Keysym.returnKey))
        #expect(!returnKey.handled, "Return stays a key event")
        clock.now += 15
        #expect(!press(session, .key(0xFFE1)).handled, "Shift")
        var typed = ""
        for letter in "My sister".unicodeScalars {
            clock.now += 30
            let result = press(session, .typing(letter))
            #expect(!result.handled, "`\(letter)` passed on behind the Return")
            #expect(commits(result).isEmpty && !showsPreedit(result), "nothing of the engine's overtakes it")
            typed.unicodeScalars.append(letter)
        }
        #expect(session.composingText.isEmpty)
        // Typing paused: Firefox has worked through the keys it was handed back.
        clock.now += PassedKeyOrdering.pauseMilliseconds
        let next = press(session, .typing("w"))
        #expect(next.handled && showsPreedit(next), "composing again after the pause")
        #expect(session.knownContext.hasSuffix("summer.\n" + typed))
    }

    /// Chromium never reports its text: the same order, kept the same way.
    @Test func clientsWithoutSurroundingTextHoldUntilTypingPauses() {
        let clock = ManualClock()
        let session = InputSession(predictor: Predictor(pack: RealPack.pack))
        session.clock = ProductClock { clock.now }
        _ = session.focusIn()
        for letter in "spend".unicodeScalars { _ = press(session, .typing(letter)) }
        #expect(!press(session, .key(Keysym.returnKey)).handled)
        for letter in "We".unicodeScalars {
            clock.now += PassedKeyOrdering.pauseMilliseconds - 1
            let result = press(session, .typing(letter))
            #expect(!result.handled && !showsPreedit(result), "`\(letter)` passed on")
        }
        for keyval in [Keysym.backSpace, Keysym.tab] {
            clock.now += PassedKeyOrdering.pauseMilliseconds
            #expect(!press(session, .key(keyval)).handled)
            clock.now += 30
            let letter = press(session, .typing("a"))
            #expect(!letter.handled && !showsPreedit(letter), "keyval \(keyval)")
        }
        clock.now += PassedKeyOrdering.pauseMilliseconds
        let letter = press(session, .typing("W"))
        #expect(letter.handled && showsPreedit(letter))
    }

    /// No report can end the wait in a client that does not report: many keys and many seconds
    /// of continuous typing are still passed on (only a pause ends it).
    @Test func aClientThatDoesNotReportHoldsThroughLongTyping() {
        var ordering = PassedKeyOrdering()
        ordering.passedOn(textBefore: nil, now: 0)
        var now: Int64 = 0
        for _ in 0..<(2 * PassedKeyOrdering.maxHeldKeys) {
            now += 30
            let held = ordering.holds("a", now: now, clientReports: false)
            #expect(held)
        }
        #expect(now > PassedKeyOrdering.maxWaitMilliseconds)
        let held = ordering.holds("a", now: now + PassedKeyOrdering.pauseMilliseconds, clientReports: false)
        #expect(!held)
        #expect(!ordering.isHolding)
    }

    /// LibreOffice reports the sentence around the cursor: after `July.` and a Return it has not
    /// applied yet, the letters typed behind it are reported as a sentence of their own (`Tha`),
    /// which looked like the new paragraph; the wait ended and Writer put the Return after
    /// `Thanks a` (suite run 3, 2026-12-02). After a Return that ends a sentence the wait in
    /// LibreOffice now ends at a pause.
    @Test func writersReportOfTheNextSentenceDoesNotEndTheWait() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        session.setFocusClient(
            FocusClient(contextPath: "/org/freedesktop/IBus/InputContext_7", name: "gtk3-im:soffice.bin"))
        _ = session.focusIn()
        _ = session.setSurroundingText(SurroundingText(text: "in July.", cursor: 8, anchor: 8))
        #expect(!press(session, .key(Keysym.returnKey)).handled)
        for letter in "Tha".unicodeScalars {
            clock.now += 30
            #expect(!press(session, .typing(letter)).handled)
        }
        _ = session.setSurroundingText(SurroundingText(text: "Tha", cursor: 3, anchor: 3))
        clock.now += 30
        let held = press(session, .typing("n"))
        #expect(!held.handled && !showsPreedit(held), "the report cannot tell whether the Return is applied")
        clock.now += PassedKeyOrdering.pauseMilliseconds
        let next = press(session, .typing("k"))
        #expect(next.handled && showsPreedit(next))
    }

    /// A Return after text that does not end a sentence: LibreOffice's report of the held keys
    /// alone is the new paragraph, and ends the wait as in other clients.
    @Test func writersReportAfterAReturnWithinASentenceEndsTheWait() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        session.setFocusClient(
            FocusClient(contextPath: "/org/freedesktop/IBus/InputContext_7", name: "gtk3-im:soffice.bin"))
        _ = session.focusIn()
        _ = session.setSurroundingText(SurroundingText(text: "Dear Ann,", cursor: 9, anchor: 9))
        #expect(!press(session, .key(Keysym.returnKey)).handled)
        clock.now += 30
        #expect(!press(session, .typing("T")).handled)
        _ = session.setSurroundingText(SurroundingText(text: "T", cursor: 1, anchor: 1))
        clock.now += 30
        let next = press(session, .typing("h"))
        #expect(next.handled && showsPreedit(next))
    }

    @Test func sentenceEnds() {
        for text in ["in July.", "Friday!", "hotels? ", "the maps).", "he said.\u{201D}", "wait\u{2026}"] {
            #expect(PassedKeyOrdering.endsSentence(text), "\(text)")
        }
        for text in ["", "Dear Ann,", "one", "3.5 kg", "(maps)"] {
            #expect(!PassedKeyOrdering.endsSentence(text), "\(text)")
        }
    }

    /// GNOME Shell replays a passed-on key with the modifiers of the moment it replays it: a held
    /// `M` after a Return arrived as `m` in GTK 4 and GTK 3 on GNOME Wayland. Nothing is held
    /// there; GTK's own contexts (Writer, the browsers on X11) still hold.
    @Test func lettersAfterAReturnAreComposedInGnomeShellAndHeldInGtk() {
        for (client, holds) in [("gnome-shell", false), ("gtk3-im:soffice.bin", true), ("QIBusInputContext", true)] {
            let clock = ManualClock()
            let session = reportingSession(clock)
            session.setFocusClient(FocusClient(contextPath: "/org/freedesktop/IBus/InputContext_1", name: client))
            _ = session.focusIn()
            _ = session.setSurroundingText(SurroundingText(text: "summer.", cursor: 7, anchor: 7))
            #expect(!press(session, .key(Keysym.returnKey)).handled)
            clock.now += 30
            let letter = press(session, .typing("M"))
            #expect(letter.handled == !holds, "\(client)")
            #expect(showsPreedit(letter) == !holds, "\(client)")
        }
    }

    /// Firefox (X11) resets the input method as it applies each key passed on, while the keys
    /// held after it are still queued: the wait goes on until a report shows them all. Before,
    /// the reset ended it, the next word was composed and Firefox lost its first letters
    /// (`The weather` typed, `The ather` shown; desktop_driver.py --app firefox --repeat 8).
    @Test func aResetWhileKeysAreQueuedKeepsTheWait() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        _ = session.setSurroundingText(SurroundingText(text: "", cursor: 0, anchor: 0))
        #expect(!press(session, .key(Keysym.backSpace)).handled)
        for letter in "The ".unicodeScalars {
            clock.now += 30
            #expect(!press(session, .typing(letter)).handled)
        }
        _ = session.reset()
        _ = session.setSurroundingText(SurroundingText(text: "T", cursor: 1, anchor: 1))
        clock.now += 30
        let held = press(session, .typing("w"))
        #expect(!held.handled && !showsPreedit(held), "`he ` still queued: `w` follows them")
        _ = session.setSurroundingText(SurroundingText(text: "The w", cursor: 5, anchor: 5))
        clock.now += 30
        let next = press(session, .typing("e"))
        #expect(next.handled && showsPreedit(next))
        #expect(session.knownContext == "The w")
    }

    @Test func focusOutEndsTheWait() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        _ = press(session, .key(Keysym.returnKey))
        _ = session.focusOut()
        #expect(press(session, .typing("W")).handled)
    }

    @Test func focusInEndsTheWait() {
        let clock = ManualClock()
        let session = reportingSession(clock)
        _ = press(session, .key(Keysym.returnKey))
        _ = session.focusIn()
        #expect(press(session, .typing("W")).handled)
    }
}
