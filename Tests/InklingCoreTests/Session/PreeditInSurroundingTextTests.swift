import InklingCore
import Testing

private let applyFix = KeyEvent.key(Keysym.returnKey, modifiers: [.control, .alt])

/// A field that behaves like LibreOffice Writer: its surrounding text includes the preedit.
private func writerField(trimming: Bool = false, text: String = "") -> FakeField {
    let field = FakeField(reporting: .codePoints, text: text)
    field.reportsPreedit = true
    field.trimsTrailingWhitespace = trimming
    field.skipsUnchangedReports = true
    return field
}

@Suite("Clients that report the preedit as part of their text (LibreOffice)")
struct PreeditInSurroundingTextTests {
    @Test func completionsAreOfTheTypedWordNotOfItTwice() throws {
        let field = writerField()
        field.type("hel")
        let candidates = try #require(field.table).candidates
        #expect(candidates.contains("hello"))
        #expect(candidates.allSatisfy { $0.lowercased().hasPrefix("hel") }, "not Hegel or beheld: \(candidates)")
        #expect(field.session.clientEchoesPreedit)
        #expect(field.session.knownContext == "")
    }

    @Test func aCapitalisedWordIsNotDoubled() throws {
        let field = writerField()
        field.type("We")
        let candidates = try #require(field.table).candidates
        #expect(
            candidates.allSatisfy { $0.lowercased().hasPrefix("we") && !$0.lowercased().hasPrefix("wwe") },
            "\(candidates)")
    }

    @Test func noCandidateRepeatsTheTypedWord() throws {
        let field = writerField()
        field.type("I would like to reco")
        let candidates = try #require(field.table, "the table stays after reco").candidates
        #expect(
            candidates.allSatisfy { $0.lowercased().hasPrefix("reco") && !$0.lowercased().contains("recoreco") },
            "\(candidates)")
        #expect(field.session.knownContext == "I would like to ")
        field.type("mm")
        // The engine's list; the table on screen may be the one sent for "reco" when its shown
        // page did not change (an unchanged page is not sent again).
        let again = field.session.currentCandidates
        #expect(!again.isEmpty && again.allSatisfy { $0.lowercased().hasPrefix("recomm") }, "\(again)")
        let shown = try #require(field.table).sentPage.candidates.filter { !$0.isEmpty }
        #expect(shown.allSatisfy { $0.lowercased().hasPrefix("recomm") }, "\(shown)")
    }

    @Test func aTypoIsFlaggedAndFixed() {
        let field = writerField()
        field.type("I saw teh cat")
        #expect(field.auxiliary == "teh → the")
        field.press(applyFix)
        #expect(field.text == "I saw the cat")
    }

    @Test func aClientThatFirstReportsAfterTheFirstKeyIsReadWithoutThePreedit() throws {
        // Writer does not answer at focus-in: its first report holds the first letter's preedit.
        let field = FakeField(reporting: .none)
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        field.reporting = .codePoints
        field.reportsPreedit = true
        field.trimsTrailingWhitespace = true
        field.type("I would like to reco")
        #expect(field.session.knownContext == "I would like to ")
        #expect(field.session.clientEchoesPreedit)
        let candidates = try #require(field.table).candidates
        #expect(candidates.allSatisfy { $0.lowercased().hasPrefix("reco") }, "\(candidates)")
    }

    @Test func afterTheCursorMovesTheNewPositionIsReadWithoutThePreedit() {
        let field = writerField()
        field.type("We saw it ")
        field.key(Keysym.left)
        field.type("x")
        #expect(field.session.knownContext == "We saw it", "the preedit x is not text before the cursor")
    }

    @Test func aClientThatDoesNotEchoThePreeditKeepsTextThatLooksLikeIt() {
        // GTK reports text without the preedit: text that happens to end like the preedit is real.
        let field = FakeField(reporting: .codePoints)
        field.type("he")
        field.key(Keysym.left)
        field.type("he")
        #expect(field.session.clientEchoesPreedit == false)
        #expect(field.session.knownContext == "h", "the text before the cursor, as reported")
    }

    @Test(arguments: ["hel", "We saw teh ", "I would like to reco", "Then, ", "a word (another "])
    func theKnownTextNeverHoldsThePreedit(typing: String) {
        let field = writerField(trimming: true)
        field.type(typing)
        #expect(field.session.knownContext == field.text)
        #expect(field.visible == typing)
    }
}

@Suite("Clients that leave trailing whitespace out of their reports (LibreOffice)")
struct TrimmedSurroundingTextTests {
    @Test func aFixAfterAReportedWordIsApplied() {
        let field = writerField(trimming: true)
        field.type("I saw teh cat")
        field.press(applyFix)
        #expect(field.text == "I saw the cat")
    }

    @Test func aFixIsRefusedWhenTheSpaceBeforeTheCursorIsNotReported() {
        let field = writerField(trimming: true)
        field.type("I saw teh cat. ")
        #expect(field.auxiliary == "teh → the")
        field.press(applyFix)
        #expect(field.text == "I saw teh cat. ", "never a guess")
        #expect(field.auxiliary == FixRefusal.whitespaceNotReported.description)
    }

    @Test func aKeyTheApplicationLostIsNeverCountedAsText() {
        // Writer under load lost the space after `cat.`; its report (trimmed or not) lacks it,
        // and a fix planned from the engine's own record would cut one character too many.
        let field = writerField(trimming: true)
        field.type("I saw teh cat.")
        field.pressLost(.key(Keysym.space))
        field.press(applyFix)
        #expect(field.text == "I saw teh cat.", "not `I sawthe cat. `")
        #expect(field.auxiliary == FixRefusal.whitespaceNotReported.description)
    }

    @Test func aFixWaitsForTheApplicationToReportTheText() throws {
        let field = FakeField(reporting: .none)
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        _ = field.session.setSurroundingText(text: "", cursor: 0, anchor: 0)
        field.type("I saw teh cat ")
        field.press(applyFix)
        #expect(field.text == "I saw teh cat ")
        let waiting = try #require(field.session.waitingFix, "waits for the report (AwaitedFixTests)")
        field.apply(field.session.awaitedReportTimedOut(serial: waiting.serial))
        #expect(field.text == "I saw teh cat ")
        #expect(field.auxiliary == FixRefusal.unconfirmed.description)
    }
}

@Suite("Punctuation after a word: one commit with the word")
struct PunctuationCommitTests {
    @Test(arguments: [",", ".", "!", "?", ";", ":", ")", "\"", "1", "\u{2026}"])
    func theWordAndThePunctuationReachTheApplicationTogether(mark: String) {
        let field = FakeField()
        field.handlesPassedKeyBeforeCommit = true
        field.type("hello")
        #expect(field.press(.typing(mark.unicodeScalars.first!)) == true, "the engine types it")
        #expect(field.log.contains(.commitText("hello" + mark)))
        #expect(field.text == "hello" + mark)
    }

    @Test func proseKeepsItsOrderWhenTheApplicationHandlesKeysFirst() {
        let field = FakeField()
        field.handlesPassedKeyBeforeCommit = true
        let prose = "Well, I think -- no, I know: it works. \"Yes\" (really)!"
        field.type(prose)
        #expect(field.visible == prose)
    }

    @Test func aPendingSpaceIsDroppedOrKeptInTheSameCommit() throws {
        let field = FakeField()
        field.type("hel")
        let first = try #require(field.pageCandidates.first)
        field.key(Keysym.f1)
        #expect(field.press(.typing(",")))
        #expect(field.log.last(where: { if case .commitText = $0 { true } else { false } }) == .commitText(","))
        field.type(" hel")
        field.key(Keysym.f1)
        field.press(.typing("("))
        #expect(field.text == first + ", " + first + " (")
    }

    @Test func spacesAndPunctuationWithNothingComposedAreTypedByTheEngineToo() {
        // Writer handles a passed-on key after the commits of the keys that followed it
        // (ibus-gtk3 puts it back at the end of the event queue): only commits keep the order.
        let field = FakeField()
        field.handlesPassedKeyBeforeCommit = true
        field.type("ok ")
        #expect(field.press(.typing(",")))
        #expect(field.press(.key(Keysym.space)))
        #expect(field.press(.key(Keysym.space)))
        #expect(field.text == "ok ,  ")
    }

    @Test func theWordIsStillCheckedAndTheReleaseStillReachesTheApplication() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh,")  // `press` also expects the release to be passed on
        #expect(field.auxiliary == "teh → the")
    }
}

@Suite("Late echoes")
struct LateEchoTests {
    @Test func aReportAfterTheEngineDeletedAllItKnewIsTakenAsIs() {
        // After focus-in the engine knows only what it committed; BackSpace takes that away, and
        // the client's report of the text before it was once a trap (an empty range).
        let field = FakeField(reporting: .none, text: "hello ")
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        field.type("a ")
        field.key(Keysym.backSpace)
        field.key(Keysym.backSpace)
        #expect(field.session.knownContext == "")
        _ = field.session.setSurroundingText(text: "hello ", cursor: 6, anchor: 6)
        #expect(field.session.knownContext == "hello ")
    }
}
