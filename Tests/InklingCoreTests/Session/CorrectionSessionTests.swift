import InklingCore
import Testing

private let applyFix = KeyEvent.key(Keysym.returnKey, modifiers: [.control, .alt])
private let openPanel = KeyEvent.key(Keysym.space, modifiers: [.control, .alt])
private let keepWord = KeyEvent.typing("k", modifiers: [.control, .alt])

@Suite("Corrections: chips and verified fixes")
struct CorrectionSessionTests {
    @Test func aTypoShowsAChipAtOnceAndTheFixReplacesExactlyIt() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat. ")
        #expect(field.auxiliary == "teh → the")
        #expect(field.text == "I saw teh cat. ", "flagging never edits")
        field.press(applyFix)
        #expect(field.text == "I saw the cat. ")
        #expect(field.auxiliary == nil)
        #expect(
            field.log.contains(.deleteSurroundingText(offset: -9, count: 9)),
            "delete backward from the cursor to the word's start")
    }

    @Test(arguments: [
        "😀 I saw ", "👍🏽 I saw ", "👨‍👩‍👧 I saw ", "🇩🇪 I saw ", "Cafe\u{301} I saw ", "中文 I saw ", "Привет, I saw ",
    ])
    func fixesCountCodePointsWithWideTextBefore(prefix: String) {
        let field = FakeField(reporting: .codePoints, text: prefix)
        field.type("teh cat 👨‍👩‍👧 x\u{301} 🇫🇷 ")
        field.press(applyFix)
        #expect(field.text == prefix + "the cat 👨‍👩‍👧 x\u{301} 🇫🇷 ")
    }

    @Test func textAfterTheCursorIsNeverTouched() {
        let (text, cursor) = marked("I saw |😀 tail")
        let field = FakeField(reporting: .codePoints)
        field.edit(text, cursorAt: cursor)
        field.type("teh ")
        field.press(applyFix)
        #expect(field.text == "I saw the 😀 tail")
    }

    @Test func theSameTypoTwiceInASentenceIsFlaggedTwiceAndFixedOneByOne() {
        let field = FakeField(reporting: .codePoints)
        field.type("teh cat and teh dog ")
        #expect(field.session.corrections.flags.count == 2)
        #expect(field.auxiliary == "teh → the   teh → the")
        field.press(applyFix)
        #expect(field.text == "teh cat and the dog ")
        field.press(applyFix)
        #expect(field.text == "the cat and the dog ")
    }

    @Test func movingTheCursorAwayDropsTheFix() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat")
        field.key(Keysym.left)
        #expect(field.session.corrections.flags.isEmpty, "the chip expires")
        #expect(field.press(applyFix) == false, "with no flag the key is the application's")
        #expect(field.text == "I saw teh cat")
    }

    @Test func textChangedElsewhereDropsTheFix() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat ")
        field.edit("I saw tehx cat ")
        #expect(field.session.corrections.flags.isEmpty)
        field.press(applyFix)
        #expect(field.text == "I saw tehx cat ")
    }

    @Test func deletingIntoTheWordExpiresTheChip() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh ")
        #expect(field.auxiliary != nil)
        field.key(Keysym.backSpace)
        #expect(field.session.corrections.flags.count == 1, "the space went, the word is still there")
        field.key(Keysym.backSpace)
        #expect(field.session.corrections.flags.isEmpty)
        #expect(field.auxiliary == nil)
    }

    @Test func withoutSurroundingTextTheFixIsRefusedAndSaidSo() {
        let field = FakeField(reporting: .none)
        field.type("I saw teh cat. ")
        #expect(field.auxiliary == "teh → the")
        field.press(applyFix)
        #expect(field.text == "I saw teh cat. ")
        #expect(field.auxiliary == FixRefusal.noSurroundingText.description)
        #expect(!field.log.contains { if case .deleteSurroundingText = $0 { return true } else { return false } })
    }

    /// Firefox: reports its text at focus-in, fails after the first commit, and ibus-gtk3 then
    /// drops the surrounding-text capability until the next focus-in.
    @Test func aClientThatStoppedReportingIsNamedAsSuch() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw ")
        field.reporting = .none
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus])
        field.type("teh cat ")
        #expect(field.auxiliary == "teh → the")
        field.press(applyFix)
        #expect(field.text == "I saw teh cat ")
        #expect(field.auxiliary == FixRefusal.stoppedReportingText.description)
        #expect(field.auxiliary != FixRefusal.noSurroundingText.description)
    }

    /// Chromium: offers the capability at focus-in, never answers, and loses it at once.
    @Test func aClientThatNeverReportedIsNamedAsSuch() {
        let field = FakeField(reporting: .none)
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        field.apply(field.session.focusIn())
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus])
        field.type("I saw teh cat ")
        field.press(applyFix)
        #expect(field.auxiliary == FixRefusal.noSurroundingText.description)
    }

    /// Firefox as seen in the desktop test: the capability at focus-in but no report (ibus-gtk3
    /// does not send an empty field's unchanged text), lost after the first commit.
    @Test func aClientThatStoppedBeforeEverReportingIsNamedAsStopped() {
        let field = FakeField(reporting: .none)
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        field.apply(field.session.focusIn())
        field.type("I ")
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus])
        field.type("saw teh cat ")
        field.press(applyFix)
        #expect(field.auxiliary == FixRefusal.stoppedReportingText.description)
    }

    /// What happened in the previous field does not make this one a client that stopped.
    @Test func theFieldBeforeTheFocusMovedDoesNotCount() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw ")
        field.reporting = .none
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus])
        field.apply(field.session.focusIn())
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus])
        field.type("teh cat ")
        field.press(applyFix)
        #expect(field.auxiliary == FixRefusal.noSurroundingText.description)
    }

    /// The capability is there but no report came since focus-in.
    @Test func aClientThatHasNotReportedYetIsNamedAsSuch() {
        let field = FakeField(reporting: .none)
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        field.apply(field.session.focusIn())
        field.type("I saw teh cat ")
        field.press(applyFix)
        #expect(field.auxiliary == FixRefusal.notReportedYet.description)
    }

    @Test func qtStyleOffsetsWithEmojiAreRefused() {
        let field = FakeField(reporting: .utf16, text: "😀 ")
        field.type("I saw teh cat ")
        field.press(applyFix)
        #expect(field.text == "😀 I saw teh cat ")
        #expect(field.auxiliary == FixRefusal.unreliableOffsets.description)
    }

    /// KWrite after emoji: UTF-16 offsets, and each change reported again with the preedit. The
    /// engine once took that second report for a change of the text (the preedit twice in its
    /// context), so the flag was never placed, or placed and withdrawn at the next letter.
    @Test func aQtClientEchoingThePreeditAfterEmojiKeepsTheFlagAndRefusesTheFixWithItsReason() {
        let field = FakeField(reporting: .utf16, text: "👨‍👩‍👧 👍🏽 ")
        field.reportsPreedit = true
        field.type("I saw te")
        #expect(field.session.knownContext == "👨‍👩‍👧 👍🏽 I saw ", "the echoed preedit is not text")
        field.type("h ca")
        #expect(field.auxiliary == "teh → the", "the chip stays while the next word is typed")
        field.type("t")
        field.press(applyFix)
        #expect(field.text == "👨‍👩‍👧 👍🏽 I saw teh cat")
        #expect(field.auxiliary == FixRefusal.unreliableOffsets.description)
    }

    /// The same with text after the cursor, where Qt's UTF-16 offsets also fit as code points.
    @Test func aQtClientEchoingThePreeditBeforeTextKeepsItsContextAndRefusesTheFix() {
        let field = FakeField(reporting: .utf16)
        field.reportsPreedit = true
        field.edit("😀 tail", cursorAt: 2)
        field.type("I saw te")
        #expect(field.session.knownContext.hasSuffix("😀 I saw "), "the echoed preedit is not text")
        field.type("h cat")
        #expect(field.auxiliary == "teh → the")
        field.press(applyFix)
        #expect(field.text == "😀 I saw teh cattail")
        #expect(field.auxiliary == FixRefusal.unreliableOffsets.description)
    }

    /// LibreOffice after emoji: code points, the preedit in every report. Both readings of the
    /// offsets fit; the code-point one ends with what the engine wrote (before the echoed
    /// preedit), the UTF-16 one does not, so the fix is proven and applied. Until 2026-12-03 the
    /// echoed preedit hid that agreement and the fix was refused ("counts text positions
    /// differently"; Writer in the desktop tests).
    @Test func aCodePointClientEchoingThePreeditAfterEmojiGetsItsFix() {
        let field = FakeField(reporting: .codePoints, text: "👨‍👩‍👧 👍🏽 ")
        field.reportsPreedit = true
        field.throughOffsetReadings = true
        field.type("I saw teh cat")
        #expect(field.session.knownContext == "👨‍👩‍👧 👍🏽 I saw teh ")
        field.press(applyFix)
        #expect(field.text == "👨‍👩‍👧 👍🏽 I saw the cat")
    }

    @Test func applyingWhileTypingTheNextWordCommitsItFirst() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh ca")
        field.press(applyFix)
        #expect(field.text == "I saw the ca")
        #expect(field.preedit == nil)
    }

    @Test func keepDismissesTheFlagForTheRestOfTheDocument() {
        let field = FakeField(reporting: .codePoints)
        field.type("Meet Kaine teh ")
        field.press(keepWord)
        #expect(field.session.corrections.flags.isEmpty)
        field.type("and teh ")
        #expect(field.session.corrections.flags.isEmpty, "a kept word is not flagged again")
        #expect(field.text == "Meet Kaine teh and teh ")
    }

    @Test func namesNumbersAndIdentifiersAreNotFlagged() {
        let field = FakeField(reporting: .codePoints)
        field.type("NASA and foo_bar and example.com and 3rd and iPhone and teh. ")
        #expect(field.session.corrections.flags.map(\.flag.word) == ["teh"])
    }

    @Test func thePanelListsFlagsWithExplanationsAndAppliesTheChosenOne() throws {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat adn dog ")
        #expect(field.session.corrections.flags.count == 2)
        field.press(openPanel)
        let table = try #require(field.table)
        #expect(table.candidates.first?.hasPrefix("adn → and") == true, "newest first")
        #expect(field.auxiliary?.contains("adn → and:") == true)
        field.key(Keysym.down)
        #expect(field.auxiliary?.contains("teh → the: swapped letters") == true)
        field.key(Keysym.f1 + 1)
        #expect(field.text == "I saw the cat adn dog ")
        #expect(field.table?.candidates.contains { $0.contains("→") } != true, "the panel is closed")
        #expect(field.auxiliary == "adn → and")
    }

    /// The panel's own arrows and page buttons reach the correction panel (the glue used to drop
    /// them while it was open, as no suggestions were shown).
    @Test func thePanelsButtonsMoveTheCorrectionPanel() throws {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat adn dog ")
        field.press(openPanel)
        let result = field.session.panelRequest(.cursorDown)
        #expect(result.handled)
        field.apply(result.effects)
        #expect(field.table?.cursor == 1)
        #expect(field.auxiliary?.contains("teh → the: swapped letters") == true)
        field.apply(field.session.panelRequest(.cursorUp).effects)
        #expect(field.table?.cursor == 0)
        #expect(field.session.correctionPanelIsOpen)
        #expect(field.text == "I saw teh cat adn dog ", "moving never edits")
    }

    @Test func thePanelPagesAndItsFunctionKeysPickTheRowTheLabelNames() throws {
        var settings = SessionSettings()
        settings.pageSize = 2
        let field = FakeField(settings: settings, reporting: .codePoints)
        field.type("teh cat adn dgo ran ")
        #expect(field.session.corrections.flags.count == 3)
        field.press(openPanel)
        field.apply(field.session.panelRequest(.pageDown).effects)
        let table = try #require(field.table)
        #expect(table.cursor == 2, "the second page")
        #expect(table.candidates[2].hasPrefix("teh → the"), "the oldest flag is on the second page")
        field.key(Keysym.f1)
        #expect(field.text == "the cat adn dgo ran ", "F1 picks the first row of the shown page")
    }

    @Test func panelRequestsMoveTheSuggestionsLikeTheirKeys() throws {
        let field = FakeField()
        field.type("th")
        let count = try #require(field.table).candidates.count
        field.apply(field.session.panelRequest(.cursorDown).effects)
        #expect(field.table?.cursorVisible == true)
        #expect(field.table?.cursor == 0)
        field.apply(field.session.panelRequest(.pageDown).effects)
        #expect(field.table?.cursor == (count > 5 ? 5 : 0))
        field.key(Keysym.escape)
        #expect(field.session.panelRequest(.cursorDown).handled == false, "nothing shown, nothing moves")
    }

    @Test func escapeClosesThePanelAndKeepsTheFlags() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat ")
        field.press(openPanel)
        #expect(field.table != nil)
        #expect(field.press(.key(Keysym.escape)))
        #expect(field.table == nil)
        #expect(field.session.corrections.flags.count == 1)
        #expect(field.text == "I saw teh cat ")
    }

    @Test func chipsStayWhileTypingContinues() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat and then a dog ")
        #expect(field.auxiliary == "teh → the")
    }

    @Test func farAwayFlagsExpire() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat ")
        field.type(String(repeating: "and a dog ", count: 30))
        #expect(field.session.corrections.flags.isEmpty)
    }

    @Test func secretFieldsAreNeverChecked() {
        let field = FakeField(contentType: ContentType(purpose: ContentType.purposePassword), reporting: .codePoints)
        field.type("teh cat ")
        #expect(field.auxiliary == nil)
        #expect(field.session.corrections.flags.isEmpty)
    }
}

@Suite("Corrections: autocorrect on Space")
struct AutocorrectTests {
    @Test func offByDefault() {
        let field = FakeField()
        field.type("teh cat")
        #expect(field.visible == "teh cat")
    }

    @Test func alwaysReplacesAndBackspaceRestoresExactlyWhatWasTyped() {
        var settings = SessionSettings()
        settings.autocorrect = .always
        let field = FakeField(settings: settings)
        field.type("I saw teh ")
        #expect(field.visible == "I saw the ")
        field.key(Keysym.backSpace)
        #expect(field.visible == "I saw teh ")
        field.type("cat")
        #expect(field.visible == "I saw teh cat")
        #expect(field.session.corrections.flags.isEmpty, "an undone autocorrection keeps the word")
    }

    @Test func anAutocorrectionIsCommittedByTheNextWordAndDropsItsSpaceBeforePunctuation() {
        var settings = SessionSettings()
        settings.autocorrect = .always
        let field = FakeField(settings: settings)
        field.type("teh cat")
        #expect(field.text == "the ")
        field.type(" teh")
        field.press(.key(Keysym.space))
        field.press(.typing(","))
        #expect(field.text == "the cat the,")
    }

    @Test func veryLikelyModeLeavesDoubtfulWordsAlone() {
        var settings = SessionSettings()
        settings.autocorrect = .veryLikely
        let field = FakeField(settings: settings)
        field.type("I saw teh cat ")
        #expect(field.visible == "I saw the cat ")
        field.type("xhost ")
        #expect(field.visible.hasSuffix("xhost "))
    }
}

@Suite("Typo-tolerant completions")
struct TypoTolerantCompletionTests {
    @Test func aNeighbouringKeyGivesTheLikelyWordMarkedAsACorrection() throws {
        let field = FakeField()
        field.type("tge")
        let table = try #require(field.table)
        #expect(table.candidates.first == "the" + InputSession.correctionMark)
        field.key(Keysym.f1)
        #expect(field.text == "the", "the mark is never committed")
    }

    @Test func likelyPrefixesGetNoCorrections() throws {
        let field = FakeField()
        field.type("thi")
        #expect(try #require(field.table).candidates.allSatisfy { !$0.hasSuffix(InputSession.correctionMark) })
    }
}

@Suite("Surrounding-text echoes")
struct EchoTests {
    @Test func aLateEchoOfOurOwnCommitKeepsTheFlag() {
        let field = FakeField(reporting: .none)
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        _ = field.session.setSurroundingText(text: "", cursor: 0, anchor: 0)
        field.type("I saw teh cat")
        field.press(.typing("."))
        // The client echoes the commit of `cat` only after the engine already knows the period.
        let late = field.session.setSurroundingText(text: "I saw teh cat", cursor: 13, anchor: 13)
        #expect(late.effects.isEmpty && late.needsSuggestions == false)
        _ = field.session.setSurroundingText(text: "I saw teh cat.", cursor: 14, anchor: 14)
        #expect(field.session.corrections.flags.count == 1)
        #expect(field.session.knownContext == "I saw teh cat.")
    }

    @Test func aRealEditIsNotMistakenForALateEcho() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat ")
        field.edit("I saw teh")
        #expect(field.session.knownContext == "I saw teh")
        #expect(field.session.corrections.flags.isEmpty)
    }
}
