import InklingCore
import Testing

@Suite("Corrections: checks, autocorrection, the panel and the auxiliary text")
struct CorrectionsTests {
    private let checker = SpellChecker(pack: RealPack.pack)

    /// Corrections with `teh` and then `adn` flagged in "I saw teh cat adn dog ".
    private func twoFlags() -> Corrections {
        var corrections = Corrections()
        corrections.queueCheck(word: "teh", before: "I saw ")
        let answer1 = corrections.runPendingCheck(before: "I saw teh ", checker: checker)
        #expect(answer1)
        corrections.queueCheck(word: "adn", before: "I saw teh cat ")
        let answer2 = corrections.runPendingCheck(before: "I saw teh cat adn ", checker: checker)
        #expect(answer2)
        return corrections
    }

    @Test func aFinishedWordIsCheckedWhereItStillIs() throws {
        var corrections = Corrections()
        corrections.queueCheck(word: "teh", before: "I saw ")
        #expect(corrections.pendingCheck == .init(word: "teh", before: "I saw "))
        let answer3 = corrections.runPendingCheck(before: "I saw teh cat", checker: checker)
        #expect(answer3)
        #expect(corrections.pendingCheck == nil, "checked once")
        let flag = try #require(corrections.flags.first)
        #expect(flag.chip == "teh → the")
        #expect(flag.tail == " cat")
    }

    @Test func aWordNoLongerBeforeTheCursorIsNotChecked() {
        var corrections = Corrections()
        corrections.queueCheck(word: "teh", before: "I saw ")
        let answer4 = corrections.runPendingCheck(before: "I saw the ", checker: checker)
        #expect(!answer4)
        #expect(corrections.pendingCheck == nil && corrections.flags.isEmpty)
        corrections.queueCheck(word: "teh", before: "I saw ")
        let answer5 = corrections.runPendingCheck(before: nil, checker: checker)
        #expect(!answer5, "unknown text, or checking off")
        corrections.queueCheck(word: "teh", before: "I saw ")
        corrections.dropPendingCheck()
        let answer6 = corrections.runPendingCheck(before: "I saw teh ", checker: checker)
        #expect(!answer6)
        #expect(corrections.flags.isEmpty)
    }

    @Test("a check whose search runs in slices flags the word once it is over, where the word still is")
    func aCheckInSlices() throws {
        var corrections = Corrections()
        corrections.queueCheck(word: "recieve", before: "I will ")
        var step = corrections.advanceChecks(before: "I will recieve ", checker: checker, work: 1)
        #expect(!step.done && !step.flagged && corrections.runningCheck != nil, "one unit of work is not the search")
        #expect(corrections.pendingCheck == nil)
        // More text typed while the check runs: the flag's tail is the text after the word now.
        var slices = 1
        while !step.done {
            step = corrections.advanceChecks(before: "I will recieve it", checker: checker, work: 50)
            slices += 1
        }
        #expect(step.flagged && slices > 2)
        let flag = try #require(corrections.flags.first)
        #expect(flag.chip == "recieve → receive")
        #expect(flag.tail == " it")
    }

    @Test("a check under way is dropped when its word is gone, or with the pending check")
    func aCheckInSlicesIsDropped() {
        var corrections = Corrections()
        corrections.queueCheck(word: "recieve", before: "I will ")
        _ = corrections.advanceChecks(before: "I will recieve ", checker: checker, work: 1)
        #expect(corrections.runningCheck != nil)
        var step = (flagged: false, done: false)
        while !step.done { step = corrections.advanceChecks(before: "I will ", checker: checker, work: 50) }
        #expect(!step.flagged && corrections.flags.isEmpty, "the word was deleted while the search ran")
        corrections.queueCheck(word: "recieve", before: "I will ")
        _ = corrections.advanceChecks(before: "I will recieve ", checker: checker, work: 1)
        corrections.dropPendingCheck()
        #expect(corrections.runningCheck == nil)
        corrections.queueCheck(word: "recieve", before: "I will ")
        _ = corrections.advanceChecks(before: "I will recieve ", checker: checker, work: 1)
        step = corrections.advanceChecks(before: nil, checker: checker, work: 50)
        #expect(step.done && !step.flagged && corrections.runningCheck == nil, "checking turned off meanwhile")
        // A second word finished while the first is searched: both are checked, in order.
        corrections.queueCheck(word: "recieve", before: "I will ")
        _ = corrections.advanceChecks(before: "I will recieve ", checker: checker, work: 1)
        corrections.queueCheck(word: "teh", before: "I will recieve ")
        step = corrections.advanceChecks(before: "I will recieve teh ", checker: checker, work: .max)
        #expect(step.done && step.flagged)
        #expect(corrections.flags.map(\.chip) == ["teh → the", "recieve → receive"])
    }

    @Test func aKeptWordIsNeverFlaggedAgain() {
        var corrections = Corrections()
        corrections.queueCheck(word: "teh", before: "I saw ")
        let answer7 = corrections.runPendingCheck(before: "I saw teh ", checker: checker)
        #expect(answer7)
        corrections.openPanel()
        let keep = KeyBinding(accelerator: "<Control><Alt>k")
        let answer8 = corrections.panelKey(.typing("k", modifiers: [.control, .alt]), keepWordKey: keep)
        #expect(answer8 == .close)
        corrections.queueCheck(word: "teh", before: "I saw ")
        let answer9 = corrections.runPendingCheck(before: "I saw teh ", checker: checker)
        #expect(!answer9)
        #expect(corrections.exemptWords(before: "Zorblax said").isSuperset(of: ["teh", "zorblax", "said"]))
    }

    @Test func autocorrectionFollowsItsMode() {
        let corrections = Corrections()
        #expect(corrections.autocorrection(for: "teh", before: "I saw ", mode: .always, checker: checker) == "the")
        #expect(corrections.autocorrection(for: "teh", before: "I saw ", mode: .off, checker: checker) == nil)
        #expect(corrections.autocorrection(for: "the", before: "I saw ", mode: .always, checker: checker) == nil)
        // A word the user typed earlier in the text is theirs.
        #expect(corrections.autocorrection(for: "teh", before: "teh said ", mode: .always, checker: checker) == nil)
    }

    @Test func thePanelOpensOnlyOnFlagsAndMovesItsHighlight() throws {
        var empty = Corrections()
        empty.openPanel()
        #expect(!empty.panelIsOpen)
        let answer10 = empty.panelKey(.key(Keysym.down), keepWordKey: nil)
        #expect(answer10 == nil, "nothing to show: not a panel key")

        var corrections = twoFlags()
        corrections.openPanel()
        #expect(corrections.panelIsOpen)
        #expect(corrections.highlightedFlag?.chip == "adn → and", "the newest first")
        let answer11 = corrections.panelKey(.key(Keysym.down), keepWordKey: nil)
        #expect(answer11 == .redraw)
        #expect(corrections.highlightedFlag?.chip == "teh → the")
        let answer12 = corrections.panelKey(.key(Keysym.down), keepWordKey: nil)
        #expect(answer12 == .redraw)
        #expect(corrections.highlightedFlag?.chip == "adn → and", "wraps around")
        let table = corrections.panelTable(pageSize: 5)
        #expect(table.candidates.count == 2 && table.cursorVisible)
        #expect(table.labels.first == "F1", "digits type in the panel")
    }

    @Test func panelKeysApplyCloseOrPassOn() throws {
        var corrections = twoFlags()
        let ids = corrections.flags.map(\.id)
        corrections.openPanel()
        let answer13 = corrections.panelKey(.key(Keysym.returnKey), keepWordKey: nil)
        #expect(answer13 == .applyFix(id: ids[0]))
        #expect(!corrections.panelIsOpen)

        corrections.openPanel()
        _ = corrections.panelTable(pageSize: 5)
        let answer14 = corrections.panelKey(.key(Keysym.f1 + 1), keepWordKey: nil)
        #expect(answer14 == .applyFix(id: ids[1]))
        corrections.openPanel()
        _ = corrections.panelTable(pageSize: 5)
        let answer15 = corrections.panelKey(.key(Keysym.f1 + 5), keepWordKey: nil)
        #expect(answer15 == .redraw, "no such row")
        let answer16 = corrections.panelKey(.key(Keysym.escape), keepWordKey: nil)
        #expect(answer16 == .close)
        #expect(!corrections.panelIsOpen)

        corrections.openPanel()
        let answer17 = corrections.panelKey(.typing("a"), keepWordKey: nil)
        #expect(answer17 == .passOn)
        #expect(!corrections.panelIsOpen)
        corrections.openPanel()
        let answer18 = corrections.panelKey(.key(Keysym.f1, modifiers: .control), keepWordKey: nil)
        #expect(answer18 == .passOn, "a shortcut")
    }

    @Test func theKeepKeyDismissesTheHighlightedFlag() {
        let keep = KeyBinding(accelerator: "<Control><Alt>k")
        var corrections = twoFlags()
        corrections.openPanel()
        let event = KeyEvent.typing("k", modifiers: [.control, .alt])
        let answer19 = corrections.panelKey(event, keepWordKey: keep)
        #expect(answer19 == .redraw)
        #expect(corrections.flags.map(\.chip) == ["teh → the"])
        let answer20 = corrections.panelKey(event, keepWordKey: keep)
        #expect(answer20 == .close)
        #expect(corrections.flags.isEmpty && !corrections.panelIsOpen)
        #expect(corrections.tracker.keptWords.isSuperset(of: ["teh", "adn"]))
    }

    @Test func aClickedRowNamesItsFlagOnlyOnTheShownPage() {
        var corrections = twoFlags()
        corrections.openPanel()
        _ = corrections.panelTable(pageSize: 1)
        #expect(corrections.panelFlagID(clickedRow: 0) == corrections.flags[0].id)
        #expect(corrections.panelFlagID(clickedRow: 1) == nil, "one row a page")
        #expect(corrections.panelFlagID(clickedRow: -1) == nil)
        corrections.panelRequest(.pageDown, pageSize: 1)
        _ = corrections.panelTable(pageSize: 1)
        #expect(corrections.panelFlagID(clickedRow: 0) == corrections.flags[1].id)
    }

    @Test func theAuxiliaryTextShowsTheMostUrgentThing() {
        var corrections = twoFlags()
        let hint = "   ☁"
        #expect(corrections.auxiliaryText(notice: nil, dictationStatus: nil, cloudHint: nil) == "adn → and   teh → the")
        #expect(
            corrections.auxiliaryText(notice: nil, dictationStatus: nil, cloudHint: hint) == "adn → and   teh → the   ☁"
        )
        #expect(corrections.auxiliaryText(notice: "note", dictationStatus: "🎙", cloudHint: hint) == "note")
        #expect(corrections.auxiliaryText(notice: nil, dictationStatus: "🎙", cloudHint: hint) == "🎙")
        corrections.openPanel()
        let explained = corrections.auxiliaryText(notice: nil, dictationStatus: nil, cloudHint: nil)
        #expect(explained?.hasPrefix("adn → and: ") == true)
        #expect(Corrections().auxiliaryText(notice: nil, dictationStatus: nil, cloudHint: hint) == "☁")
        #expect(Corrections().auxiliaryText(notice: nil, dictationStatus: nil, cloudHint: nil) == nil)
    }

    @Test func moreThanThreeFlagsShowACount() throws {
        var corrections = Corrections()
        var before = "I "
        for word in ["teh", "adn", "recieve", "becuase", "wierd"] {
            corrections.queueCheck(word: word, before: before)
            before += word + " "
            _ = corrections.runPendingCheck(before: before, checker: checker)
        }
        let flags = corrections.flags
        try #require(flags.count > 3)
        let text = corrections.auxiliaryText(notice: nil, dictationStatus: nil, cloudHint: nil)
        #expect(text == flags.prefix(3).map(\.chip).joined(separator: "   ") + "   +\(flags.count - 3)")
        #expect(flags.first?.flag.word == "wierd" || flags.first?.flag.word == "becuase", "newest first")
    }
}
