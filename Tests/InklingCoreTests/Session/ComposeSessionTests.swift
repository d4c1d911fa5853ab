import InklingCore
import Testing

/// Keysyms of the dead keys and Compose key used below (X11 keysymdef.h).
private enum Dead {
    static let acute: UInt32 = 0xFE51
    static let diaeresis: UInt32 = 0xFE57
    static let tilde: UInt32 = 0xFE53
    static let multiKey: UInt32 = 0xFF20
    static let isoLevel3Shift: UInt32 = 0xFE03
    static let shiftL: UInt32 = 0xFFE1
}

/// A table-driven stand-in for libxkbcommon's Compose state machine (same transitions).
private final class TableComposer: KeysymComposer {
    let sequences: [[UInt32]: String]
    private var pending: [UInt32] = []
    private(set) var fed: [UInt32] = []

    init(_ sequences: [[UInt32]: String]) { self.sequences = sequences }

    func feed(_ keysym: UInt32) -> ComposeStep {
        fed.append(keysym)
        let candidate = pending + [keysym]
        if let text = sequences[candidate] {
            pending = []
            return .composed(text)
        }
        if sequences.keys.contains(where: {
            $0.count > candidate.count && Array($0.prefix(candidate.count)) == candidate
        }) {
            pending = candidate
            return .composing
        }
        let wasComposing = !pending.isEmpty
        pending = []
        return wasComposing ? .cancelled : .none
    }

    func reset() { pending = [] }
}

private let latin: [[UInt32]: String] = [
    [Dead.acute, 0x65]: "é", [Dead.acute, 0x45]: "É", [Dead.acute, 0x20]: "'",
    [Dead.diaeresis, 0x69]: "ï", [Dead.tilde, 0x6E]: "ñ",
    [Dead.multiKey, 0x73, 0x73]: "ß", [Dead.multiKey, 0x3F, 0x3F]: "¿",
]

/// A field whose keys go through a `ComposeFilter`, as the engine sends them.
private final class ComposingField {
    let field: FakeField
    let filter: ComposeFilter
    let composer: TableComposer
    /// Whether each release was consumed, in order.
    private(set) var releasesHandled: [Bool] = []

    init(contentType: ContentType = ContentType(), text: String = "") {
        field = FakeField(contentType: contentType, text: text)
        composer = TableComposer(latin)
        filter = ComposeFilter(session: field.session, composer: composer)
    }

    /// Presses and releases a key; an unhandled press reaches the field like an application's key.
    @discardableResult
    func press(_ keyval: UInt32, modifiers: KeyModifiers = [], character: Unicode.Scalar? = nil, keycode: UInt32 = 0)
        -> Bool
    {
        let event = KeyEvent(keyval: keyval, keycode: keycode, modifiers: modifiers, character: character)
        let result = filter.processKey(event)
        field.apply(result.effects)
        if !result.handled, !event.isShortcut, let character, character.value >= 0x20 {
            field.apply([.commitText(String(character))])
        }
        if result.needsSuggestions { field.refresh() }
        var release = event
        release.modifiers.insert(.release)
        releasesHandled.append(filter.processKey(release).handled)
        return result.handled
    }

    func type(_ text: String) {
        for scalar in text.unicodeScalars {
            let event = KeyEvent.typing(scalar)
            press(event.keyval, character: scalar)
        }
    }

    func dead(_ keyval: UInt32) { press(keyval) }
}

@Suite("Compose: dead keys and Compose sequences join the current word")
struct ComposeSessionTests {
    @Test func deadAcuteThenEComposesInsideTheWord() throws {
        let input = ComposingField()
        input.type("caf")
        #expect(input.press(Dead.acute), "the dead key is consumed")
        #expect(input.field.text.isEmpty, "nothing is committed while the accent is pending")
        #expect(
            input.field.preedit?.text == "caf",
            "the pending accent is not shown: the client would commit it on focus-out")
        #expect(input.press(0x65, character: "e"))
        #expect(input.field.preedit == Preedit(text: "café", cursor: 4, underlined: 4))
        #expect(input.field.session.composingText == "café")
        #expect(input.field.text.isEmpty, "the word is not split")
        let table = try #require(input.field.table, "candidates follow the composed word")
        #expect(table.candidates.allSatisfy { $0.lowercased().hasPrefix("caf") })
        input.type(" ")
        #expect(input.field.text == "café ")
    }

    @Test func theWordsOfTheIssueCompose() {
        let input = ComposingField()
        input.type("na")
        input.dead(Dead.diaeresis)
        input.type("ive se")
        input.dead(Dead.tilde)
        input.type("nor Stra")
        input.dead(Dead.multiKey)
        input.type("s")
        #expect(input.filter.isComposing)
        input.type("se r")
        input.dead(Dead.acute)
        input.type("esum")
        input.dead(Dead.acute)
        input.type("e ")
        #expect(input.field.text == "naïve señor Straße résumé ")
    }

    @Test func shiftBetweenTheDeadKeyAndTheLetterGivesTheCapital() {
        let input = ComposingField()
        input.dead(Dead.acute)
        #expect(input.press(Dead.shiftL, modifiers: .shift) == false, "Shift itself still reaches the application")
        #expect(input.filter.isComposing, "a modifier does not end the sequence")
        input.press(0x45, modifiers: .shift, character: "E")
        #expect(input.field.preedit?.text == "É")
    }

    @Test func releasesOfConsumedKeysAreConsumed() {
        let input = ComposingField()
        input.type("caf")
        input.press(Dead.acute, keycode: 48)
        input.press(0x65, character: "e", keycode: 26)
        #expect(input.releasesHandled.suffix(2) == [true, true], "the dead key's and the final key's releases")
        #expect(input.releasesHandled.prefix(3).allSatisfy { !$0 }, "ordinary letters' releases reach the application")
    }

    @Test func anInvalidSequenceIsDroppedAndTheWordKept() {
        let input = ComposingField()
        input.type("caf")
        input.dead(Dead.acute)
        #expect(input.press(0x71, character: "q"), "dead_acute q: both dropped, like GTK's simple input method")
        #expect(!input.filter.isComposing)
        #expect(input.field.preedit?.text == "caf")
        input.type("e ")
        #expect(input.field.text == "cafe ")
    }

    @Test func escapeAndBackSpaceCancelOnlyThePendingAccent() {
        let input = ComposingField()
        input.type("caf")
        input.dead(Dead.acute)
        #expect(input.press(Keysym.escape))
        #expect(input.field.preedit?.text == "caf")
        input.dead(Dead.acute)
        #expect(input.press(Keysym.backSpace))
        #expect(input.field.preedit?.text == "caf", "BackSpace took the accent, not the f")
        input.type("e")
        #expect(input.field.preedit?.text == "cafe")
    }

    @Test func keysThatTypeNothingDropTheAccentAndStillWork() throws {
        let input = ComposingField()
        input.type("caf")
        let first = try #require(input.field.table?.candidates.first)
        input.dead(Dead.acute)
        #expect(input.press(Keysym.f1), "F1 still selects")
        #expect(!input.filter.isComposing)
        #expect(input.field.text == first)
        input.dead(Dead.acute)
        #expect(input.press(Keysym.returnKey, character: "\r") == false, "Return reaches the application")
        #expect(input.field.preedit == nil, "the pending space was settled by Return, not kept for the accent")
        #expect(input.releasesHandled.last == false, "a key given to the session keeps its release")
    }

    @Test func aSecondDeadKeyReplacesTheFirst() {
        let input = ComposingField()
        input.type("se")
        input.dead(Dead.acute)
        #expect(input.press(Dead.tilde), "the second dead key is consumed, not sent to the application")
        #expect(input.filter.isComposing)
        input.type("n")
        #expect(input.field.preedit?.text == "señ")
    }

    @Test func aChordAbandonsTheSequence() {
        let input = ComposingField()
        input.dead(Dead.acute)
        #expect(input.press(0x63, modifiers: .control, character: "c") == false, "Ctrl+C is the application's")
        #expect(!input.filter.isComposing)
        input.type("e")
        #expect(input.field.preedit?.text == "e")
    }

    @Test func composedPunctuationIsCommittedNotTheLastKey() {
        let input = ComposingField()
        input.type("que")
        input.dead(Dead.multiKey)
        input.type("?")
        #expect(input.press(0x3F, character: "?"))
        #expect(input.field.text == "que¿", "the application never sees the `?` key")
        #expect(input.field.preedit == nil)
    }

    @Test func composedSpaceAfterADeadKeyIsTheSpacingAccent() {
        let input = ComposingField()
        input.type("don")
        input.dead(Dead.acute)
        input.type(" ")
        input.type("t")
        #expect(input.field.session.composingText == "don't", "an apostrophe joins the word")
    }

    @Test func passwordFieldsGetEveryKeyUntouched() {
        let input = ComposingField(contentType: ContentType(purpose: ContentType.purposePassword))
        #expect(input.press(Dead.acute) == false, "the application composes in a password field")
        #expect(input.press(0x65, character: "e") == false)
        #expect(input.composer.fed.isEmpty, "no key of a password field is looked at")
        #expect(input.releasesHandled.allSatisfy { !$0 })
    }

    @Test func aFieldTurningSecretMidSequenceDropsIt() {
        let input = ComposingField()
        input.dead(Dead.acute)
        _ = input.field.session.setContentType(ContentType(purpose: ContentType.purposePIN))
        #expect(input.press(0x65, character: "e") == false)
        #expect(!input.filter.isComposing)
    }

    @Test func cancelDropsThePendingSequence() {
        let input = ComposingField()
        input.dead(Dead.acute)
        input.filter.cancel()
        #expect(!input.filter.isComposing)
        input.type("e")
        #expect(input.field.preedit?.text == "e")
    }

    @Test func withoutATableKeysGoStraightToTheSession() {
        let field = FakeField()
        let filter = ComposeFilter(session: field.session, composer: nil)
        let result = filter.processKey(KeyEvent(keyval: Dead.acute))
        #expect(result.handled == false, "no Compose table: the dead key reaches the application as before")
    }
}

@Suite("Key classification: level shifts type characters, they are not chords")
struct LevelShiftTests {
    @Test func altGrCharactersOfAPolishLayoutJoinTheWord() {
        let field = FakeField()
        // Łódź: Shift+AltGr+l, AltGr+o, d, AltGr+x (Mod5 held, as X reports ISO_Level3_Shift).
        #expect(field.press(KeyEvent(keyval: 0x1A3, modifiers: [.shift, .levelThree], character: "Ł")))
        #expect(field.press(KeyEvent(keyval: 0xF3, modifiers: .levelThree, character: "ó")))
        #expect(field.press(.typing("d")))
        #expect(field.press(KeyEvent(keyval: 0x1BC, modifiers: .levelThree, character: "ź")))
        #expect(field.preedit?.text == "Łódź")
        #expect(field.text.isEmpty)
    }

    @Test func levelFiveAndNumLockAreNotShortcuts() {
        for modifiers: KeyModifiers in [.levelThree, .levelFive, .numLock, [.levelThree, .shift]] {
            #expect(!KeyEvent(keyval: 0x61, modifiers: modifiers, character: "a").isShortcut)
        }
        for modifiers: KeyModifiers in [.control, .alt, .mod4, [.control, .levelThree], .superKey, .meta] {
            #expect(KeyEvent(keyval: 0x61, modifiers: modifiers, character: "a").isShortcut)
        }
        let field = FakeField()
        #expect(field.press(KeyEvent(keyval: 0x3C9, modifiers: .levelFive, character: "ω")))
        #expect(field.preedit?.text == "ω")
    }

    @Test func altGrDeadKeysCompose() {
        let input = ComposingField()
        input.type("caf")
        #expect(input.press(Dead.isoLevel3Shift, modifiers: .levelThree) == false)
        input.press(Dead.acute, modifiers: .levelThree)
        input.press(0x65, character: "e")
        #expect(input.field.preedit?.text == "café")
    }
}

@Suite("Compose locale: the user's, as UTF-8")
struct ComposeLocaleTests {
    @Test func localeFollowsLcAllThenLcCtypeThenLang() {
        #expect(
            ComposeLocale.candidates(environment: [
                "LC_ALL": "fr_FR.UTF-8", "LC_CTYPE": "de_DE.UTF-8", "LANG": "pl_PL.UTF-8",
            ]) == ["fr_FR.UTF-8", "C.UTF-8"])
        #expect(
            ComposeLocale.candidates(environment: ["LC_ALL": "", "LC_CTYPE": "de_DE.utf8", "LANG": "pl_PL.UTF-8"]) == [
                "de_DE.utf8", "C.UTF-8",
            ])
        #expect(ComposeLocale.candidates(environment: ["LANG": "pl_PL.UTF-8"]) == ["pl_PL.UTF-8", "C.UTF-8"])
    }

    @Test func cPosixAndNothingUseTheUtf8Table() {
        #expect(ComposeLocale.candidates(environment: [:]) == ["C.UTF-8"])
        #expect(ComposeLocale.candidates(environment: ["LANG": "C"]) == ["C.UTF-8"])
        #expect(ComposeLocale.candidates(environment: ["LC_ALL": "POSIX"]) == ["C.UTF-8"])
        #expect(ComposeLocale.candidates(environment: ["LC_ALL": "C.UTF-8"]) == ["C.UTF-8"])
    }

    @Test func legacyCodesetsUseTheirUtf8Sibling() {
        #expect(ComposeLocale.candidates(environment: ["LANG": "pl_PL"]) == ["pl_PL.UTF-8", "C.UTF-8"])
        #expect(ComposeLocale.candidates(environment: ["LANG": "de_DE.ISO-8859-1@euro"]) == ["de_DE.UTF-8", "C.UTF-8"])
    }
}
