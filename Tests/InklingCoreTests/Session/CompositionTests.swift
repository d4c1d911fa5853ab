import InklingCore
import Testing

@Suite("Composition: the typed word, pending space and autocorrection")
struct CompositionTests {
    @Test func theTypedWordIsUnderlined() {
        var composition = Composition()
        #expect(composition.preedit == nil && composition.isEmpty)
        composition.typed = "héllo"
        #expect(composition.preedit == Preedit(text: "héllo", cursor: 5, underlined: 5))
        #expect(composition.shownText == "héllo")
    }

    @Test func aPendingSpaceIsShownButNotUnderlined() {
        var composition = Composition()
        composition.pendingSpace = true
        #expect(composition.preedit == Preedit(text: " ", cursor: 1, underlined: 0))
        #expect(composition.shownText == " ")
        #expect(!composition.isEmpty && composition.hasWordOrSpace)
    }

    @Test func anAutocorrectionShowsTheFixAndASpace() {
        var composition = Composition()
        composition.pendingAutocorrection = .init(replacement: "the", typed: "teh")
        composition.pendingSpace = true
        #expect(composition.preedit == Preedit(text: "the ", cursor: 4, underlined: 3))
        #expect(composition.shownText == "the ")
        composition.dropPending()
        #expect(composition.isEmpty)
    }

    @Test func takingTheWordLeavesNothingTyped() {
        var composition = Composition()
        composition.typed = "cat"
        #expect(composition.takeWord() == "cat")
        #expect(composition.typed.isEmpty && composition.isEmpty)
    }
}
