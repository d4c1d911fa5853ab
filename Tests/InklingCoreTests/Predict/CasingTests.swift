import Testing

@testable import InklingCore

@Suite("Casing")
struct CasingTests {
    @Test(
        "Casing.apply",
        arguments: [
            // display, typed, sentence start, expected
            ("the", "", true, "The"),
            ("the", "", false, "the"),
            ("the", "t", true, "the"),  // the user typed lower case at a sentence start: keep it
            ("the", "Th", false, "The"),
            ("the", "T", false, "The"),
            ("the", "TH", false, "THE"),
            ("the", "tH", false, "tHe"),
            ("they're", "THEY'", false, "THEY'RE"),
            ("Obama", "oba", false, "Obama"),
            ("Obama", "", false, "Obama"),
            ("Obama", "OB", false, "OBAMA"),
            ("I", "", false, "I"),
            ("I'm", "i", false, "I'm"),
            ("don't", "don\u{2019}", false, "don\u{2019}t"),
            ("rock'n'roll", "rock\u{2019}", false, "rock\u{2019}n\u{2019}roll"),
            ("don't", "don'", false, "don't"),
            ("well-known", "well-", false, "well-known"),
            ("well-known", "", true, "Well-known"),
            ("привет", "", true, "Привет"),
            ("привет", "При", false, "Привет"),
            ("привет", "ПРИ", false, "ПРИВЕТ"),
            ("caf\u{E9}", "CA", false, "CAF\u{C9}"),
            ("\u{E9}t\u{E9}", "", true, "\u{C9}t\u{E9}"),
            ("a", "abc", false, "a"),  // typed longer than the word: nothing to copy, no crash
        ])
    func apply(display: String, typed: String, sentenceStart: Bool, expected: String) {
        #expect(Casing.apply(display: display, typed: Substring(typed), sentenceStart: sentenceStart) == expected)
    }

    @Test("ALL CAPS typing keeps a typed typographic apostrophe")
    func allCapsWithTypographicApostrophe() {
        #expect(Casing.apply(display: "don't", typed: "DON\u{2019}", sentenceStart: false) == "DON\u{2019}T")
    }

    @Test("the result always keeps the typed letters' case where the user typed them")
    func typedCaseIsKept() {
        let typed: Substring = "WeL"
        let text = Casing.apply(display: "welcome", typed: typed, sentenceStart: false)
        #expect(text == "WeLcome")
        #expect(text.hasPrefix(typed))
    }
}
