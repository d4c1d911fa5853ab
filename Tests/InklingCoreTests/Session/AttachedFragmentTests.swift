import Testing

@testable import InklingCore

private let applyFix = KeyEvent.key(Keysym.returnKey, modifiers: [.control, .alt])

/// A word whose start is already in the application's text when the engine composes the rest:
/// letters passed on behind a BackSpace (`PassedKeyOrdering`), or the cursor put at the end of a
/// word. Found typing into a GTK 4 entry after clearing it (`ctrl+a BackSpace`, then `ada`):
/// the table offered completions of the whole word, and a candidate was committed whole after
/// the letters already there (`rrecommend`, 2026-12-03).
@Suite("A word begun before the composition")
struct AttachedFragmentTests {
    @Test func aCandidateAfterABackSpaceCompletesTheWordWithoutRepeatingItsStart() throws {
        let field = FakeField(reporting: .codePoints)
        field.key(Keysym.backSpace)
        field.type("recomm")
        #expect(field.text == "r", "the first letter is passed on behind the BackSpace")
        #expect(field.visible == "recomm")
        let index = try #require(field.pageCandidates.firstIndex(of: "recommend"), "\(field.pageCandidates)")
        field.key(Keysym.f1 + UInt32(index))
        #expect(field.text == "recommend")
    }

    @Test func everyCandidateShownKeepsTheLettersAlreadyInTheText() {
        let field = FakeField(reporting: .codePoints, text: "I will recomm")
        field.type("e")
        #expect(!field.pageCandidates.isEmpty)
        for candidate in field.pageCandidates {
            #expect(candidate.hasPrefix("recomme"), "\(candidate) would rewrite letters already typed")
        }
        let first = field.pageCandidates.first ?? ""
        field.key(Keysym.f1)
        #expect(field.text == "I will " + first)
    }

    @Test func aHighlightedCandidateTakenWithSpaceCompletesTheWord() {
        let field = FakeField(reporting: .codePoints)
        field.key(Keysym.backSpace)
        field.type("recomm")
        let first = field.pageCandidates.first ?? ""
        #expect(first.hasPrefix("recomm"))
        field.key(Keysym.down)  // highlights the first candidate
        field.key(Keysym.space)
        #expect(field.text == first + " ")
    }

    @Test func theFinishedWordIsCheckedWholeAndItsFixReplacesAllOfIt() {
        let field = FakeField(reporting: .codePoints, text: "I saw ")
        field.key(Keysym.backSpace)
        field.type(" teh cat ")
        #expect(field.text == "I saw teh cat ")
        #expect(field.auxiliary == "teh → the", "the check saw the word, not the letters after the first")
        field.press(applyFix)
        #expect(field.text == "I saw the cat ")
    }

    @Test func theWordsStartInTheTextIsFoundAcrossAJoiner() {
        #expect(InputSession.attachedFragment(before: "I don'", typed: "t") == "don'")
        #expect(InputSession.attachedFragment(before: "I do", typed: "n") == "do")
        #expect(InputSession.attachedFragment(before: "I ", typed: "do") == "")
        #expect(InputSession.attachedFragment(before: "", typed: "do") == "")
        // What the quick answer after a space or a punctuation mark must agree with.
        #expect(InputSession.attachedFragment(before: "I don' ", typed: "t") == "")
        #expect(InputSession.attachedFragment(before: "well-", typed: "known") == "well-")
        #expect(InputSession.attachedFragment(before: "x -", typed: "y") == "")
        #expect(InputSession.attachedFragment(before: "it’", typed: "s") == "it’")
        #expect(InputSession.attachedFragment(before: "(", typed: "so") == "")
        #expect(InputSession.attachedFragment(before: "café", typed: "s") == "café")
        let long = String(repeating: "ab", count: 100)
        #expect(InputSession.attachedFragment(before: "x " + long, typed: "c") == long, "longer than the end looked at")
        #expect(
            InputSession.attachedFragment(before: String(repeating: "x", count: 62) + "-", typed: "c")
                == String(repeating: "x", count: 62) + "-")
        #expect(InputSession.completion(of: "recommend", after: "r") == "ecommend")
        #expect(InputSession.completion(of: "Recommend", after: "r") == nil, "it would change a letter")
        #expect(InputSession.completion(of: "r", after: "r") == nil)
        #expect(InputSession.completion(of: "word", after: "") == "word")
    }
}

@Suite("Typing inside a word")
struct TypingInsideAWordTests {
    @Test func aLetterInsertedInsideAWordGetsNoCompletionsAndReachesTheTextAsTyped() {
        // `cts` fixed to `cats` with the cursor after `c`: a completion of `ca` (`can`) would
        // have made `cants`.
        let field = FakeField(reporting: .codePoints, text: "I like cts a lot")
        field.edit("I like cts a lot", cursorAt: 8)
        field.type("a")
        #expect(field.table == nil, "\(field.pageCandidates)")
        #expect(field.visible == "I like cats a lot")
        field.key(Keysym.f1)
        #expect(field.text == "I like cats a lot")
    }

    @Test func completionsReturnOnceTheCursorIsAtAWordsEnd() {
        let field = FakeField(reporting: .codePoints, text: "I like cts a lot")
        field.edit("I like cts a lot", cursorAt: 8)
        field.type("a")
        field.focusOut()
        _ = field.session.focusIn()
        field.edit("I like cats a lot. I recomm", cursorAt: 27)
        field.type("e")
        #expect(field.pageCandidates.contains("recommend"), "\(field.pageCandidates)")
    }

    @Test func wordsTypedBeforeAWordAreCompletedAndChecked() {
        let field = FakeField(reporting: .codePoints)
        field.edit("tail", cursorAt: 0)
        field.type("I saw teh cat ")
        #expect(field.auxiliary == "teh → the")
        field.type("recomm")
        #expect(field.pageCandidates.contains("recommend"), "\(field.pageCandidates)")
    }

    @Test func aQtReportInUTF16UnitsAlsoTellsAWordAfterTheCursor() {
        // KWrite: emoji before the cursor count two UTF-16 units each, and here the cursor's
        // offset is past the text's last code point: only the UTF-16 reading fits (a guess).
        let field = FakeField(reporting: .utf16)
        field.edit("😀😀😀😀😀😀 cts", cursorAt: 8)
        field.type("a")
        #expect(field.table == nil, "\(field.pageCandidates)")
        field.key(Keysym.f1)
        #expect(field.text == "😀😀😀😀😀😀 cats")
    }
}
