import InklingCore
import Testing

@Suite("Surrounding text: offsets normalised to code points")
struct SurroundingTextTests {
    @Test func codePointOffsetsSplitTheText() throws {
        let text = try #require(SurroundingText(text: "😀 ab", cursor: 3, anchor: 3))
        #expect(text.before == "😀 a")
        #expect(text.after == "b")
        #expect(!text.hasSelection)
    }

    @Test func offsetsBeyondTheTextAreRejected() {
        #expect(SurroundingText(text: "ab", cursor: 3, anchor: 3) == nil)
        #expect(SurroundingText(text: "ab", cursor: 1, anchor: -1) == nil)
    }

    @Test func utf16OffsetsAreReadOnScalarBoundariesOnly() throws {
        // "😀" is two UTF-16 units: offset 3 is after "😀 ".
        let text = try #require(SurroundingText.interpretingUTF16(text: "😀 ab", cursor: 3, anchor: 3))
        #expect(text.before == "😀 ")
        #expect(SurroundingText.interpretingUTF16(text: "😀 ab", cursor: 1, anchor: 1) == nil, "inside the emoji")
        #expect(SurroundingText.interpretingUTF16(text: "ab", cursor: 5, anchor: 5) == nil)
    }

    @Test func aSelectionIsAnAnchorAwayFromTheCursor() throws {
        let text = try #require(SurroundingText(text: "abc", cursor: 1, anchor: 3))
        #expect(text.hasSelection)
        #expect(text.before == "a")
    }
}
