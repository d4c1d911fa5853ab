import FoundationEssentials
import InklingCore
import Testing

/// Inputs that used to trap on the key path: every one must be answered, never crash the engine.
@Suite("Input session: total on hostile and odd inputs")
struct SessionTotalityTests {
    @Test func anEchoAfterAUTF16OnlyReportWithAnEmptyContextDoesNotTrap() {
        let field = FakeField()
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        field.type("a ")  // committed: two scalars the client has not echoed yet
        // Offsets that fit only as UTF-16 (the anchor lies past the emoji): the engine now knows
        // an empty text before the cursor while it still awaits its two scalars.
        _ = field.session.setSurroundingText(text: "😀", cursor: 0, anchor: 2)
        #expect(field.session.knownContext.isEmpty)
        let result = field.session.setSurroundingText(text: "ab", cursor: 2, anchor: 2)
        #expect(field.session.knownContext == "ab", "a real change, adopted")
        #expect(result.needsSuggestions)
    }

    @Test func anEchoAfterBackspacesEmptiedTheContextDoesNotTrap() {
        let field = FakeField()
        field.session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        field.type("a ")
        field.key(Keysym.backSpace)
        field.key(Keysym.backSpace)
        #expect(field.session.knownContext.isEmpty)
        _ = field.session.setSurroundingText(text: "xy", cursor: 2, anchor: 2)
        #expect(field.session.knownContext == "xy")
    }

    @Test func aNegativeClockStillLearnsInsteadOfTrapping() {
        let field = FakeField()
        field.session.clock = ProductClock { -5_000 }
        field.type("I met Zorblax today ")
        field.refresh()
        #expect(field.session.predictor.userModel.knows("zorblax"))
        #expect(
            field.session.predictor.userModel.word("zorblax")?.lastUsed == 0,
            "a time before the origin counts as the origin")
    }

    @Test func aNegativeClockStillAppliesAFix() {
        let field = FakeField(reporting: .codePoints)
        field.session.clock = ProductClock { -1 }
        field.type("I saw teh cat. ")
        field.press(.key(Keysym.returnKey, modifiers: [.control, .alt]))
        #expect(field.text == "I saw the cat. ")
    }

    @Test(arguments: [Int64.max - 10, Int64.min + 10])
    func aClockAtTheEndsOfItsRangeDoesNotOverflowTheCloudTimer(now: Int64) {
        var settings = SessionSettings()
        settings.cloudCheck = true
        let field = FakeField(settings: settings, reporting: .codePoints)
        field.session.clock = ProductClock { now }
        field.type("I saw teh cat.")
        #expect(field.session.cloudDeadline != nil)
        _ = field.session.cloudTimerFired()
        _ = field.session.cloudRequestTimedOut
    }

    @Test func elapsedMillisecondsAreNeverNegative() {
        let origin = ContinuousClock.now
        let later = origin.advanced(by: .milliseconds(1500))
        #expect(MonotonicTime.milliseconds(from: origin, to: later) == 1500)
        #expect(MonotonicTime.milliseconds(from: later, to: origin) == 0, "a clock read before its origin")
        #expect(MonotonicTime.milliseconds() >= 0)
    }

    @Test(arguments: [0xD800, 0xDFFF, 0x10FFFF, Int.max])
    func anyCandidateCountIsAnswered(count: Int) {
        var settings = SessionSettings()
        settings.candidateCount = count
        settings.pageSize = count
        let field = FakeField(settings: settings)
        field.type("hel")
        #expect(field.table != nil)
        field.key(Keysym.pageDown)
        field.key(Keysym.isoLeftTab)
        field.key(Keysym.pageUp)
        #expect(field.table != nil)
        _ = field.session.candidateClicked(pageIndex: Int.max)
        _ = field.session.candidateClicked(pageIndex: -1)
        #expect(field.preedit?.text == "hel")
    }
}

/// Bugs the session fuzzer found, each as a small deterministic case.
@Suite("Input session: what the fuzzer found")
struct SessionFuzzFindingsTests {
    @Test func aLanguageSwitchKeepsTheWordBeingTyped() {
        let field = FakeField()
        field.type("I like hel")
        field.apply(field.session.switchPredictor(to: Predictor(pack: SessionFuzzTests.secondPack)))
        #expect(field.visible == "I like hel")
        #expect(field.text == "I like hel", "committed, since the preedit is gone")
        #expect(field.preedit == nil)
    }

    @Test func aLanguageSwitchKeepsAPendingSpace() throws {
        let field = FakeField()
        field.type("hel")
        let first = try #require(field.pageCandidates.first)
        field.key(Keysym.f1)
        field.apply(field.session.switchPredictor(to: Predictor(pack: SessionFuzzTests.secondPack)))
        #expect(field.text == first + " ")
    }

    @Test func aFieldTurningIntoAPasswordFieldKeepsTheWordBeingTyped() {
        let field = FakeField()
        field.type("hunter")
        field.apply(field.session.setContentType(ContentType(purpose: ContentType.purposePassword)))
        #expect(field.text == "hunter")
        #expect(field.preedit == nil)
        #expect(!field.session.predictor.userModel.knows("hunter"), "kept, not learned")
    }

    @Test func textOfAFieldThatWasPrivateIsNotLearnedAfterItTurnsFreeForm() {
        let field = FakeField(contentType: ContentType(hints: ContentType.hintPrivate))
        field.type("Zorblax")
        _ = field.session.setContentType(ContentType())
        field.type("quuxly and more words ")
        field.refresh()
        let model = field.session.predictor.userModel
        #expect(!model.knows("zorblaxquuxly") && !model.knows("zorblax"))
        #expect(model.entryCount == 0, "nothing from the field that held private text")
        field.apply(field.session.focusIn())  // another field: learning again
        field.type("Quuxly said ")
        field.refresh()
        #expect(field.session.predictor.userModel.knows("quuxly"))
    }

    /// ibus-daemon sends the new field's content type after focus-in (seen with 1.5.27: focus-in,
    /// then set-content-type 0/0), so at focus-in the type is still the previous field's.
    @Test func aFieldFocusedAfterAPrivateOneLearnsOnceItsTypeArrives() {
        let field = FakeField(contentType: ContentType(hints: ContentType.hintPrivate))
        field.type("Zorblax ")
        field.apply(field.session.focusOut())
        field.apply(field.session.focusIn())  // another field, its type not yet sent
        field.apply(field.session.setContentType(ContentType()))
        field.type("Quuxly said ")
        field.refresh()
        #expect(field.session.predictor.userModel.knows("quuxly"))
        #expect(!field.session.predictor.userModel.knows("zorblax"))
    }

    @Test func aShownPasswordIsNotLearnedAsContext() {
        let field = FakeField(contentType: ContentType(purpose: ContentType.purposePassword), reporting: .codePoints)
        field.type("Zorblax ")  // the application inserts it; the engine keeps nothing
        _ = field.session.setContentType(ContentType())  // "show password"
        field.report()
        field.type("Quuxly said ")
        field.refresh()
        #expect(field.session.predictor.userModel.entryCount == 0)
    }
}

@Suite("Input session: selection keys mean the rows the user sees")
struct SelectionRowTests {
    @Test func aSelectionKeyBeyondThePageSelectsNothing() throws {
        let field = FakeField()
        field.type("th")
        let table = try #require(field.table)
        try #require(table.candidates.count > 6 && table.pageSize == 5)
        field.key(Keysym.f1 + 6)  // F7: no such row on a page of five
        #expect(field.text == "th", "the typed word is committed as it is, no hidden candidate")
    }

    @Test func aPageSizeChangedWhileATableShowsKeepsTheShownRows() throws {
        let field = FakeField()
        field.type("th")
        let candidates = try #require(field.table).candidates
        field.key(Keysym.tab)
        field.key(Keysym.tab)  // highlight on the second candidate, first page of five
        var settings = field.session.settings
        settings.pageSize = 1  // takes effect at the next redraw
        field.session.apply(settings)
        field.key(Keysym.f1 + 2)  // F3 as labelled on the page the user sees
        #expect(field.text == candidates[2])
    }
}

@Suite("Input session: UTF-16 offsets that also fit as code points")
struct AmbiguousOffsetTests {
    @Test func aQtStyleReportWithAnEmojiBeforeAndTextAfterTheCursorNeverMisplacesAFix() {
        // Qt counts the emoji as two units: its cursor lands one scalar too far as code points,
        // which still fits because text follows the cursor.
        let field = FakeField(reporting: .utf16)
        field.edit("😀 tail", cursorAt: 2)
        field.type("I saw teh cat ")
        field.press(.key(Keysym.returnKey, modifiers: [.control, .alt]))
        #expect(field.text == "😀 I saw teh cat tail" || field.text == "😀 I saw the cat tail", "never a wrong deletion")
    }

    @Test func aCodePointReportWithAnEmojiBeforeTheCursorStillGetsItsFix() {
        let field = FakeField(reporting: .codePoints)
        field.edit("😀 tail", cursorAt: 2)
        field.type("I saw teh cat ")
        field.press(.key(Keysym.returnKey, modifiers: [.control, .alt]))
        #expect(field.text == "😀 I saw the cat tail")
    }
}

extension AmbiguousOffsetTests {
    @Test func aCloudFixOnAQtStyleReportWithAnEmojiBeforeTheCursorNeverDeletesTheWrongText() throws {
        let clock = ManualClock()
        var settings = SessionSettings()
        settings.cloudCheck = true
        let field = FakeField(settings: settings, reporting: .utf16)
        field.session.clock = ProductClock { clock.now }
        field.edit("😀 tail", cursorAt: 2)
        field.type("I saw teh cat.")
        clock.now += 400
        let action = field.session.cloudTimerFired()
        field.apply(action.effects)
        guard case .check(let request) = try #require(action.messages.last) else {
            Issue.record("the last message is not a check")
            return
        }
        let scalars = Array(request.sentence.unicodeScalars)
        let start = try #require(
            (0..<scalars.count).first { String(String.UnicodeScalarView(scalars[$0...])).hasPrefix("teh") })
        let reply = CloudReply(
            type: "result", id: request.id,
            fixes: [CloudFix(start: start, end: start + 3, original: "teh", replacement: "the")])
        field.apply(field.session.cloudReplyReceived(reply))
        field.press(.key(Keysym.returnKey, modifiers: [.control, .alt]))
        #expect(field.text == "😀 I saw teh cat.tail" || field.text == "😀 I saw the cat.tail", "never a wrong deletion")
    }
}

extension SelectionRowTests {
    @Test func aDigitThatClosesTheCorrectionPanelSelectsNoHiddenCandidate() throws {
        var settings = SessionSettings()
        settings.selectionKeys = .digits
        let field = FakeField(settings: settings, reporting: .codePoints)
        field.type("I saw teh cat. th")
        try #require(field.table != nil && !field.session.corrections.flags.isEmpty)
        field.press(.key(Keysym.space, modifiers: [.control, .alt]))  // the panel replaces the candidates
        try #require(field.session.correctionPanelIsOpen)
        field.press(.typing("1"))
        #expect(field.text == "I saw teh cat. th1", "the panel closes and the digit is typed")
    }

    /// Found by the long fuzz run (seed 3561538019467069579, event 2,520,537).
    @Test func aShortcutWithAPanelKeyClosesThePanelWithoutApplyingAFix() throws {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat. ")
        try #require(!field.session.corrections.flags.isEmpty)
        field.press(.key(Keysym.space, modifiers: [.control, .alt]))
        try #require(field.session.correctionPanelIsOpen)
        for shortcut in [Keysym.f1, Keysym.returnKey, Keysym.space] {
            field.press(.key(shortcut, modifiers: [.control]))
            #expect(field.text.hasPrefix("I saw teh cat."), "Ctrl+\(shortcut) applied a fix from the panel")
            #expect(!field.session.correctionPanelIsOpen)
            field.press(.key(Keysym.space, modifiers: [.control, .alt]))
        }
    }
}
