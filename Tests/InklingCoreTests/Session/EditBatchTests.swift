import InklingCore
import Testing

private let applyFix = KeyEvent.key(Keysym.returnKey, modifiers: [.control, .alt])

@Suite("Edit batches: one commit per answer (Wayland text-input-v3)")
struct EditBatchTests {
    @Test func aCommitThatTheDeletionRemovesAgainIsFoldedIntoIt() {
        let effects: [SessionEffect] = [
            .commitText("cat"), .hidePreedit, .hideLookupTable, .deleteSurroundingText(offset: -7, count: 7), .commitText("the cat"),
        ]
        #expect(EditBatch.coalesced(effects) == [.hidePreedit, .hideLookupTable, .deleteSurroundingText(offset: -4, count: 4), .commitText("the cat")])
    }

    @Test func severalCommitsAndAPartialOneFold() {
        #expect(EditBatch.coalesced([.commitText("ab"), .commitText("c"), .deleteSurroundingText(offset: -2, count: 2)]) == [.commitText("a")])
        #expect(EditBatch.coalesced([.commitText("x"), .deleteSurroundingText(offset: -1, count: 1), .commitText("y")]) == [.commitText("y")])
        // Counted in code points, like the deletion.
        #expect(EditBatch.coalesced([.commitText("👨‍👩‍👧"), .deleteSurroundingText(offset: -6, count: 6)]) == [.deleteSurroundingText(offset: -1, count: 1)])
    }

    @Test func whatIsNotACommitThenABackwardDeletionIsLeftAlone() {
        let forward: [SessionEffect] = [.commitText("a"), .deleteSurroundingText(offset: 0, count: 1)]
        #expect(EditBatch.coalesced(forward) == forward)
        let separated: [SessionEffect] = [.commitText("a"), .deleteSurroundingText(offset: -2, count: 2), .deleteSurroundingText(offset: -1, count: 1)]
        #expect(EditBatch.coalesced(separated) == [.deleteSurroundingText(offset: -1, count: 1), .deleteSurroundingText(offset: -1, count: 1)])
        let plain: [SessionEffect] = [.commitText("a"), .hidePreedit, .commitText("b")]
        #expect(EditBatch.coalesced(plain) == plain)
    }

    /// GNOME Shell on Wayland, GTK 4: `I saw teh cat` + the fix key gave `I sthe cat` (the word
    /// composing was committed, then deleted with the typo in the same batch, and mutter kept
    /// only the fix's commit). Failed before EditBatch (checked: "I sthe cat").
    @Test(arguments: ["I saw teh cat", "I saw teh cat. ", "I saw teh cat, and", "I saw teh ca"])
    func aFixIsExactInAClientThatBatchesEdits(typed: String) {
        let field = FakeField(reporting: .codePoints)
        field.batchesLikeTextInputV3 = true
        field.type(typed)
        #expect(field.auxiliary == "teh → the")
        field.press(applyFix)
        #expect(field.visible == "I saw the" + typed.dropFirst("I saw teh".count))
        #expect(field.preedit == nil)
    }

    @Test func theSameFixIsExactInAClientThatAppliesEachEdit() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat")
        field.press(applyFix)
        #expect(field.text == "I saw the cat")
    }
}
