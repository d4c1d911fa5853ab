import InklingCore
import Testing

private let applyFix = KeyEvent.key(Keysym.returnKey, modifiers: [.control, .alt])

@Suite("Edit batches: one commit per answer (Wayland text-input-v3)")
struct EditBatchTests {
    @Test func aCommitThatTheDeletionRemovesAgainIsFoldedIntoIt() {
        let effects: [SessionEffect] = [
            .commitText("cat"), .hidePreedit, .hideLookupTable, .deleteSurroundingText(offset: -7, count: 7),
            .commitText("the cat"),
        ]
        #expect(
            EditBatch.coalesced(effects) == [
                .hidePreedit, .hideLookupTable, .deleteSurroundingText(offset: -4, count: 4), .commitText("the cat"),
            ])
    }

    @Test func severalCommitsAndAPartialOneFold() {
        #expect(
            EditBatch.coalesced([.commitText("ab"), .commitText("c"), .deleteSurroundingText(offset: -2, count: 2)])
                == [.commitText("a")])
        #expect(
            EditBatch.coalesced([.commitText("x"), .deleteSurroundingText(offset: -1, count: 1), .commitText("y")]) == [
                .commitText("y")
            ])
        // Counted in code points, like the deletion.
        #expect(
            EditBatch.coalesced([.commitText("👨‍👩‍👧"), .deleteSurroundingText(offset: -6, count: 6)]) == [
                .deleteSurroundingText(offset: -1, count: 1)
            ])
    }

    @Test func whatIsNotACommitThenABackwardDeletionIsLeftAlone() {
        let forward: [SessionEffect] = [.commitText("a"), .deleteSurroundingText(offset: 0, count: 1)]
        #expect(EditBatch.coalesced(forward) == forward)
        let separated: [SessionEffect] = [
            .commitText("a"), .deleteSurroundingText(offset: -2, count: 2),
            .deleteSurroundingText(offset: -1, count: 1),
        ]
        #expect(
            EditBatch.coalesced(separated) == [
                .deleteSurroundingText(offset: -1, count: 1), .deleteSurroundingText(offset: -1, count: 1),
            ])
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

    /// Firefox on GNOME Shell shows the preedit in the text it reports (as LibreOffice does), and
    /// the engine then sent the fix uncoalesced, for LibreOffice's order: `I sthe cat` (suite runs
    /// 2 and 4 of 2026-12-02, fifth session; the engine's trace: commit 3, delete 7, commit 7).
    @Test func aFixIsExactInGnomeShellWhenTheApplicationEchoesThePreedit() {
        let field = FakeField(reporting: .codePoints)
        field.batchesLikeTextInputV3 = true
        field.reportsPreedit = true
        field.session.setFocusClient(
            FocusClient(contextPath: "/org/freedesktop/IBus/InputContext_3", name: "gnome-shell"))
        field.type("I saw teh cat")
        #expect(field.session.clientEchoesPreedit)
        #expect(field.auxiliary == "teh → the")
        field.press(applyFix)
        #expect(field.visible == "I saw the cat")
    }

    @Test func theSameFixIsExactInAClientThatAppliesEachEdit() {
        let field = FakeField(reporting: .codePoints)
        field.type("I saw teh cat")
        field.press(applyFix)
        #expect(field.text == "I saw the cat")
    }
}

@Suite("Edit batches: every answer is exact in a batching client")
struct BatchingClientDifferentialTests {
    enum Step {
        case type(String)
        case key(UInt32)
        case fix
    }

    static let scripts: [(String, [Step])] = [
        ("completion", [.type("I would like to recomm"), .key(Keysym.f1), .type(" it.")]),
        ("punctuation after a word", [.type("Hello, world. Yes; no! (maybe) ok?")]),
        (
            "backspace inside and after words",
            [.type("teh cat"), .key(Keysym.backSpace), .key(Keysym.backSpace), .type("ar ")]
        ),
        ("fix after space", [.type("I saw teh cat "), .fix, .type("and left.")]),
        ("fix while composing", [.type("I saw teh dgo"), .fix, .type(" ran")]),
        ("escape and return", [.type("recomm"), .key(Keysym.escape), .key(Keysym.returnKey), .type("x")]),
        (
            "tab highlight then space",
            [.type("I would like to recomm"), .key(Keysym.tab), .key(Keysym.space), .type("it")]
        ),
        ("emoji and ZWJ before a fix", [.type("👨‍👩‍👧 I saw teh 👍🏽 cat"), .fix]),
    ]

    func run(_ steps: [Step], batching: Bool, autocorrect: AutocorrectMode) -> String {
        var settings = SessionSettings()
        settings.autocorrect = autocorrect
        let field = FakeField(settings: settings, reporting: .codePoints)
        field.batchesLikeTextInputV3 = batching
        for step in steps {
            switch step {
            case .type(let text): field.type(text)
            case .key(let keyval): field.key(keyval)
            case .fix: field.press(applyFix)
            }
        }
        return field.visible
    }

    /// Whatever the engine answers to one key must come out the same in a client that applies
    /// each edit and in one that applies an answer as one text-input-v3 batch.
    @Test(arguments: scripts.indices, [AutocorrectMode.off, .always])
    func aBatchingClientEndsWithTheSameText(index: Int, autocorrect: AutocorrectMode) {
        let (name, steps) = Self.scripts[index]
        #expect(
            run(steps, batching: true, autocorrect: autocorrect)
                == run(steps, batching: false, autocorrect: autocorrect), "\(name)")
    }
}

@Suite("GNOME Shell 43: surrounding text with UTF-8 byte offsets")
struct ByteOffsetReadingTests {
    @Test func offsetsThatOnlyFitAsBytesReadAsBytes() {
        let text = "👍🏽 I saw teh"
        let reading = SurroundingText.byteOffsetReading(
            text: text, cursor: text.utf8.count, anchor: text.utf8.count, known: nil)
        #expect(reading?.before == Substring(text))
        #expect(
            SurroundingText.byteOffsetReading(text: "abc", cursor: 3, anchor: 3, known: nil) == nil,
            "ASCII reads the same")
        #expect(SurroundingText.interpretingUTF8(text: "é", cursor: 1, anchor: 1) == nil, "inside a character")
    }

    @Test func withTextAfterTheCursorTheReadingThatEndsWithTheKnownTextWins() {
        let text = "é I saw teh more"
        let bytes = "é I saw teh".utf8.count  // 12; as code points that is one character further
        let reading = SurroundingText.byteOffsetReading(text: text, cursor: bytes, anchor: bytes, known: "I saw teh")
        #expect(reading?.before == "é I saw teh")
        #expect(
            SurroundingText.byteOffsetReading(text: text, cursor: bytes, anchor: bytes, known: nil) == nil,
            "no evidence, no byte reading")
    }

    /// GNOME Shell 43, GTK 4: with an emoji and a ZWJ family before the text, every report was
    /// rejected (cursor 41 of 22 code points) and the fix refused; failed before (checked:
    /// "fix not applied: this application counts text positions differently").
    @Test(arguments: ["👨‍👩‍👧 👍🏽 ", "café ", "Привет, ", "中文 "])
    func aFixIsExactAfterNonASCIITextWithByteOffsets(prefix: String) {
        let field = FakeField(reporting: .utf8Bytes, text: prefix)
        field.batchesLikeTextInputV3 = true
        field.type("I saw teh cat")
        field.press(applyFix)
        #expect(field.visible == prefix + "I saw the cat")
    }

    @Test func predictionsUseTheTextBeforeAByteCursor() {
        let field = FakeField(reporting: .utf8Bytes, text: "👍🏽 I would like to ")
        field.type("recomm")
        #expect(field.pageCandidates.first == "recommend")
        #expect(field.session.correctionPanelIsOpen == false)
    }
}

@Suite("Edit batches: LibreOffice keeps the proven order")
struct EditBatchLibreOfficeTests {
    /// LibreOffice Writer (preedit in its reports) cut the space before the typo (`I sawthe
    /// cat `) when the composing word's preedit was hidden before the deletion instead of being
    /// committed first. Failed before (checked: no commit of `cat` before the deletion).
    @Test func aClientThatEchoesThePreeditGetsTheWordCommittedBeforeTheDeletion() throws {
        let field = FakeField(reporting: .codePoints)
        field.reportsPreedit = true
        field.skipsUnchangedReports = true
        field.type("I saw teh cat")
        #expect(field.session.clientEchoesPreedit)
        let before = field.log.count
        field.press(applyFix)
        let answer = Array(field.log[before...])
        let commitOfWord = try #require(answer.firstIndex(of: .commitText("cat")))
        let deletion = try #require(answer.firstIndex { if case .deleteSurroundingText = $0 { true } else { false } })
        #expect(commitOfWord < deletion)
        #expect(field.text == "I saw the cat")
    }
}
