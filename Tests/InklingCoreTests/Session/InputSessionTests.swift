import InklingCore
import Testing

@Suite("Input session: typing and candidates")
struct TypingTests {
    @Test func lettersBuildAnUnderlinedPreedit() {
        let field = FakeField()
        #expect(field.press(.typing("h")))
        #expect(field.press(.typing("e")))
        #expect(field.preedit == Preedit(text: "he", cursor: 2, underlined: 2))
        #expect(field.text.isEmpty, "nothing reaches the application while composing")
    }

    @Test func completionsStartWithTheTypedPrefix() throws {
        let field = FakeField()
        field.type("hel")
        let table = try #require(field.table)
        #expect(!table.candidates.isEmpty)
        #expect(table.candidates.allSatisfy { $0.lowercased().hasPrefix("hel") && $0 != "hel" })
        #expect(table.labels.first == "F1")
        #expect(table.cursorVisible == false, "no highlight until the user moves it")
    }

    @Test func inDigitsModeTheLabelsAreTheDigits() throws {
        var settings = SessionSettings()
        settings.selectionKeys = .digits
        let field = FakeField(settings: settings)
        field.type("hel")
        let table = try #require(field.table)
        #expect(table.labels.first == "1", "the label names the key the user presses")
        let second = try #require(field.pageCandidates.dropFirst().first)
        field.type("2")
        #expect(field.text == second)
    }

    @Test func functionKeyCommitsThatCandidateWithAPendingSpace() throws {
        let field = FakeField()
        field.type("hel")
        let second = try #require(field.pageCandidates.dropFirst().first)
        field.key(Keysym.f1 + 1)
        #expect(field.text == second)
        #expect(field.preedit == Preedit(text: " ", cursor: 1, underlined: 0), "the space is pending")
        field.type("w")
        #expect(field.text == second + " ")
        #expect(field.preedit?.text == "w")
    }

    @Test func spaceCommitsWhatWasTypedPlusSpace() {
        let field = FakeField()
        field.type("helo ")
        #expect(field.text == "helo ")
        #expect(field.preedit == nil)
    }

    @Test func spaceCommitsTheHighlightedCandidateOnceTheUserMovedOntoIt() throws {
        let field = FakeField()
        field.type("hel")
        let candidates = try #require(field.table).candidates
        field.key(Keysym.tab)
        field.key(Keysym.tab)
        #expect(field.table?.cursor == 1)
        #expect(field.table?.cursorVisible == true)
        field.key(Keysym.space)
        #expect(field.text == candidates[1] + " ")
    }

    @Test func shiftTabAndUpMoveBack() throws {
        let field = FakeField()
        field.type("th")
        let count = try #require(field.table).candidates.count
        field.key(Keysym.down)
        field.key(Keysym.down)
        field.key(Keysym.up)
        #expect(field.table?.cursor == 0)
        field.key(Keysym.isoLeftTab)
        #expect(field.table?.cursor == count - 1, "moving back from the first wraps to the last")
    }

    @Test func returnCommitsTheWordAndReachesTheApplication() {
        let field = FakeField()
        field.type("hello")
        #expect(field.press(.key(Keysym.returnKey)) == false)
        #expect(field.text == "hello\n")
    }

    @Test func escapeHidesTheTableAndKeepsTheTypedText() {
        let field = FakeField()
        field.type("hel")
        #expect(field.table != nil)
        #expect(field.press(.key(Keysym.escape)))
        #expect(field.table == nil)
        #expect(field.preedit?.text == "hel")
        #expect(field.press(.key(Keysym.escape)) == false, "a second Escape belongs to the application")
        #expect(field.text == "hel")
    }

    @Test func backspaceEditsThePreeditByCharacter() {
        let field = FakeField()
        field.type("caf\u{E9}")
        field.key(Keysym.backSpace)
        #expect(field.preedit?.text == "caf")
        field.type("e\u{301}")  // e + combining acute: the combining mark is not a word letter
        #expect(field.text == "cafe\u{301}", "a combining mark commits the word and reaches the app")
    }

    @Test func backspaceOnEmptyPreeditReachesTheApplication() {
        let field = FakeField()
        field.type("ab ")
        #expect(field.press(.key(Keysym.backSpace)) == false)
        #expect(field.text == "ab")
    }

    @Test func punctuationAfterASelectedCandidateDropsThePendingSpace() throws {
        let field = FakeField()
        field.type("hel")
        let first = try #require(field.pageCandidates.first)
        field.key(Keysym.f1)
        #expect(field.press(.typing(",")), "committed by the engine, in one commit with what it follows")
        #expect(field.text == first + ",")
        field.type(" ok")
        #expect(field.visible == first + ", ok")
    }

    @Test func openingBracketKeepsThePendingSpace() throws {
        let field = FakeField()
        field.type("hel")
        let first = try #require(field.pageCandidates.first)
        field.key(Keysym.f1)
        field.press(.typing("("))
        #expect(field.text == first + " (")
    }

    @Test func explicitSpaceAfterSelectionIsNotDoubled() throws {
        let field = FakeField()
        field.type("hel")
        let first = try #require(field.pageCandidates.first)
        field.key(Keysym.f1)
        field.key(Keysym.space)
        #expect(field.text == first + " ")
        #expect(field.preedit == nil)
    }

    @Test func backspaceRemovesThePendingSpace() throws {
        let field = FakeField()
        field.type("hel")
        let first = try #require(field.pageCandidates.first)
        field.key(Keysym.f1)
        #expect(field.press(.key(Keysym.backSpace)))
        #expect(field.visible == first)
    }

    @Test func digitsAndShortcutsCommitThePreeditFirst() {
        let field = FakeField()
        field.type("abc")
        #expect(field.press(.typing("1")), "the digit is committed with the word, in order")
        #expect(field.text == "abc1")
        field.type("xy")
        #expect(field.press(.typing("s", modifiers: .control)) == false)
        #expect(field.text == "abc1xy")
        #expect(field.preedit == nil)
    }

    @Test func apostrophesAndHyphensStayInsideTheWord() {
        let field = FakeField()
        field.type("don't well-known")
        #expect(field.text == "don't ")
        #expect(field.preedit?.text == "well-known")
    }

    @Test func leadingHyphenIsPunctuation() {
        let field = FakeField()
        field.type("-x")
        #expect(field.text == "-")
        #expect(field.preedit?.text == "x")
    }

    @Test func cyrillicLettersCompose() {
        let field = FakeField()
        field.type("привет")
        #expect(field.preedit?.text == "привет")
        field.key(Keysym.space)
        #expect(field.text == "привет ")
    }

    @Test func nextWordPredictionsFollowASpace() throws {
        let field = FakeField()
        field.type("I would like to ")
        let table = try #require(field.table)
        #expect(table.candidates.contains("be") || table.candidates.contains("see"))
        #expect(field.preedit == nil, "no preedit for next-word predictions")
        field.key(Keysym.f1)
        #expect(field.text == "I would like to " + table.candidates[0])
    }

    /// A browser's mail body reports the lines before the cursor: the first word after `Hello,`
    /// and a blank line was completed as the word after `Hello,` within a line (`there`).
    @Test(
        "after a greeting line and Return, the next line's first word is completed as a sentence's",
        arguments: [FakeField.Reporting.codePoints, .utf16])
    func completionsAfterALineBreakStartASentence(reporting: FakeField.Reporting) throws {
        let field = FakeField(reporting: reporting)
        field.type("Hello,")
        field.key(Keysym.returnKey)
        field.key(Keysym.returnKey)
        field.type("Th")
        #expect(field.text == "Hello,\n\n" && field.preedit?.text == "Th")
        let atStart = FakeField(reporting: reporting)
        atStart.type("Th")
        // The same first words as at the start of the text (the order further down may differ:
        // the character model reads the line breaks); it was There, The, That, This, They, Then.
        let candidates = try #require(field.table).candidates
        let fromStart = try #require(atStart.table).candidates
        #expect(candidates.count >= 6 && candidates.prefix(6) == fromStart.prefix(6), "\(candidates) \(fromStart)")
    }

    @Test func nextWordPredictionsCanBeSwitchedOff() {
        var settings = SessionSettings()
        settings.nextWordPredictions = false
        let field = FakeField(settings: settings)
        field.type("I would like to ")
        #expect(field.table == nil)
    }

    @Test func pagingAndFunctionKeysOnTheSecondPage() throws {
        let field = FakeField()
        field.type("c")
        let table = try #require(field.table)
        try #require(table.candidates.count > table.pageSize + 1)
        #expect(field.press(.key(Keysym.pageDown)))
        #expect(field.table?.cursor == table.pageSize)
        field.key(Keysym.f1 + 1)
        #expect(field.text == table.candidates[table.pageSize + 1])
    }

    @Test func candidateClickSelects() throws {
        let field = FakeField()
        field.type("th")
        let candidates = try #require(field.table).candidates
        field.apply(field.session.candidateClicked(pageIndex: 2).effects)
        #expect(field.text == candidates[2])
    }

    @Test func functionKeysPassThroughWithoutATable() {
        let field = FakeField()
        #expect(field.press(.key(Keysym.f1 + 4)) == false)
    }

    @Test func modifierOnlyKeysAndReleasesPassThroughUntouched() {
        let field = FakeField()
        field.type("ab")
        let before = field.log.count
        #expect(field.session.processKey(.key(0xFFE1)).handled == false)  // Shift_L
        #expect(field.session.processKey(.key(0xFFE3)).handled == false)  // Control_L
        #expect(field.session.processKey(KeyEvent(keyval: 0x61, modifiers: .release, character: "a")).handled == false)
        #expect(field.log.count == before)
        #expect(field.preedit?.text == "ab")
    }

    @Test func pageSizeSettingIsFollowedLive() throws {
        let field = FakeField()
        field.type("t")
        #expect(try #require(field.table).pageSize == 5)
        var settings = field.session.settings
        settings.pageSize = 3
        field.session.apply(settings)
        field.type("h")
        #expect(try #require(field.table).pageSize == 3)
    }
}

@Suite("Input session: focus, reset and content types")
struct FocusTests {
    @Test func focusOutLeavesTheWordExactlyOnce() {
        let field = FakeField()
        field.type("hel")
        field.focusOut()
        #expect(field.text == "hel")
        #expect(!field.log.contains(.commitText("hel")), "the client commits the preedit, never the engine too")
    }

    @Test func resetNeverCommits() {
        let field = FakeField()
        field.type("hel")
        let effects = field.session.reset()
        #expect(!effects.contains { if case .commitText = $0 { return true } else { return false } })
        #expect(field.session.composingText.isEmpty)
    }

    @Test func afterFocusInTheContextIsUnknownUntilTheClientReportsIt() throws {
        let field = FakeField()
        field.apply(field.session.focusIn())
        field.type(" ")
        #expect(field.table == nil, "no guess at the start of a document that may not be empty")
        let result = field.session.setSurroundingText(text: "I would like to ", cursor: 16, anchor: 16)
        #expect(result.needsSuggestions)
        field.refresh()
        #expect(try #require(field.table).candidates.contains("be"))
    }

    @Test func resetForgetsTheContextSoAnotherWidgetDoesNotInheritIt() {
        let field = FakeField()
        field.type("I would like to ")
        _ = field.session.reset()
        #expect(field.session.knownContext.isEmpty)
        field.refresh()
        #expect(field.session.currentCandidates.isEmpty)
    }

    @Test func focusInStartsAFreshContext() {
        let field = FakeField()
        field.type("Clinton said ")
        field.apply(field.session.focusIn())
        #expect(field.session.knownContext.isEmpty)
        #expect(field.session.currentCandidates.isEmpty)
    }

    @Test(arguments: [ContentType.purposePassword, ContentType.purposePIN])
    func secretFieldsPassEveryKeyThrough(purpose: UInt32) {
        let field = FakeField(contentType: ContentType(purpose: purpose))
        for event in [
            KeyEvent.typing("a"), .typing("1"), .key(Keysym.space), .key(Keysym.backSpace), .key(Keysym.f1),
            .key(Keysym.escape),
        ] {
            #expect(field.session.processKey(event) == KeyResult(handled: false, effects: [], needsSuggestions: false))
        }
        #expect(field.session.refreshSuggestions().isEmpty)
        #expect(field.session.knownContext.isEmpty, "nothing remembered")
        #expect(field.session.setSurroundingText(SurroundingText(text: "secret", cursor: 6, anchor: 6)).effects.isEmpty)
        #expect(field.session.knownContext.isEmpty)
    }

    @Test func switchingToAPasswordFieldDropsTheComposition() {
        let field = FakeField()
        field.type("hel")
        let effects = field.session.setContentType(ContentType(purpose: ContentType.purposePassword))
        #expect(effects.contains(.hidePreedit))
        #expect(field.session.composingText.isEmpty)
    }

    @Test func privateFieldsStillGetSuggestions() {
        let field = FakeField(contentType: ContentType(hints: ContentType.hintPrivate))
        field.type("hel")
        #expect(field.table != nil)
    }

    @Test func withoutPreeditCapabilityTheEngineStaysOutOfTheWay() {
        let field = FakeField()
        field.session.setCapabilities([.lookupTable, .focus])
        #expect(field.press(.typing("a")) == false)
        #expect(field.text == "a")
    }
}

@Suite("Input session: surrounding text")
struct SurroundingTests {
    @Test func theEchoOfOurOwnCommitDoesNotPredictAgain() {
        let field = FakeField()
        field.type("I would like to ")
        let predictions = field.predictions
        let echo = field.echoSurroundingText()
        #expect(echo.effects.isEmpty && echo.needsSuggestions == false)
        field.refresh()
        #expect(field.predictions == predictions)
    }

    @Test func textChangedByTheUserElsewhereGivesNewPredictions() throws {
        let field = FakeField()
        let (text, cursor) = marked("The president of the United |")
        let result = field.session.setSurroundingText(SurroundingText(text: text, cursor: cursor, anchor: cursor))
        #expect(result.needsSuggestions)
        field.refresh()
        #expect(try #require(field.table).candidates.first == "States")
    }

    @Test(arguments: [
        "😀 I would like to |", "👍🏽 I would like to |", "👨‍👩‍👧 I would like to |", "🇩🇪 I would like to |",
        "e\u{301}t\u{E9} I would like to |", "中文 I would like to |", "привет I would like to |",
    ])
    func contextAfterWideCharactersStillPredicts(source: String) throws {
        let field = FakeField()
        let (text, cursor) = marked(source)
        _ = field.session.setSurroundingText(SurroundingText(text: text, cursor: cursor, anchor: cursor))
        field.refresh()
        #expect(try #require(field.table).candidates.contains("be"))
        #expect(field.session.knownContext == String(text.unicodeScalars.prefix(cursor)))
    }

    @Test func cursorInTheMiddleUsesOnlyTheTextBeforeIt() {
        let (text, cursor) = marked("I would like to |😀 see")
        let surrounding = SurroundingText(text: text, cursor: cursor, anchor: cursor)
        #expect(surrounding?.before == "I would like to ")
        #expect(surrounding?.after == "😀 see")
    }

    @Test func qtUTF16OffsetsStillGivePredictionContext() throws {
        let field = FakeField()
        let text = "😀 I would like to "
        let utf16Cursor = text.utf16.count
        let result = field.session.setSurroundingText(text: text, cursor: utf16Cursor, anchor: utf16Cursor)
        #expect(result.needsSuggestions)
        field.refresh()
        #expect(try #require(field.table).candidates.contains("be"))
    }

    @Test func offsetsInAnotherUnitAreRejected() {
        // Qt counts UTF-16: "x😀" has 2 code points but Qt reports the cursor at 3.
        #expect(SurroundingText(text: "x😀", cursor: 3, anchor: 3) == nil)
        #expect(SurroundingText(text: "x😀", cursor: -1, anchor: 0) == nil)
        #expect(SurroundingText(text: "x😀", cursor: 2, anchor: 2) != nil)
    }

    @Test func withoutSurroundingTextTheEngineUsesWhatItCommitted() throws {
        let field = FakeField()
        field.type("I would like to ")
        #expect(field.session.knownContext == "I would like to ")
        #expect(try #require(field.table).candidates.contains("be"))
    }

    @Test func cursorMovementForgetsTheContextUntilTheClientSaysMore() {
        let field = FakeField()
        field.type("I would like to ")
        field.key(Keysym.left)
        #expect(field.session.knownContext.isEmpty)
        field.type(" ")
        #expect(field.table == nil, "no next-word guess from an unknown position")
    }
}

@Suite("Input session: settings")
struct SessionSettingsTests {
    @Test func digitsSelectWhenThatSettingIsOnAndOtherwiseReachTheApplication() throws {
        var settings = SessionSettings()
        settings.selectionKeys = .digits
        let field = FakeField(settings: settings)
        field.type("hel")
        let second = try #require(field.pageCandidates.dropFirst().first)
        #expect(field.press(.typing("2")))
        #expect(field.text == second)
        let plain = FakeField()
        plain.type("hel")
        #expect(plain.press(.typing("2")), "typed with the word, not a selection")
        #expect(plain.text == "hel2")
    }

    @Test func aNoticeFromTheGlueShowsUntilTheNextKey() {
        let field = FakeField()
        field.apply(field.session.showNotice("the German pack was refused: SHA-256 mismatch"))
        #expect(field.auxiliary == "the German pack was refused: SHA-256 mismatch")
        field.type("a")
        #expect(field.auxiliary == nil)
    }
}
