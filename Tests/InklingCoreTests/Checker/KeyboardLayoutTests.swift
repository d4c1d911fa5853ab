import InklingCore
import Testing

@Suite("Keyboard layouts")
struct KeyboardLayoutTests {
    @Test func qwertyNeighboursIncludeDiagonalsOnly() {
        let layout = KeyboardLayout.qwerty
        #expect(layout.areAdjacent("g", "h"))
        #expect(layout.areAdjacent("g", "t") && layout.areAdjacent("g", "b"))
        #expect(!layout.areAdjacent("a", "l"))
        #expect(!layout.areAdjacent("q", "p"))
        #expect(!layout.areAdjacent("g", "g"))
        #expect(layout.neighbours(of: "s") == ["a", "d", "e", "w", "x", "z"])
    }

    @Test func eachLayoutPutsItsOwnKeysSideBySide() {
        #expect(KeyboardLayout.qwertz.areAdjacent("z", "t"), "QWERTZ: z sits where y is on QWERTY")
        #expect(!KeyboardLayout.qwerty.areAdjacent("z", "t"))
        #expect(KeyboardLayout.azerty.areAdjacent("a", "z"))
        #expect(KeyboardLayout.azerty.areAdjacent("q", "s"))
        #expect(KeyboardLayout.jcuken.areAdjacent("й", "ц"))
        #expect(KeyboardLayout.jcuken.areAdjacent("к", "а"))
        #expect(!KeyboardLayout.jcuken.areAdjacent("й", "ъ"))
    }

    @Test func layoutsAreChosenByNameAndLanguage() {
        #expect(KeyboardLayout.named("azerty").name == "azerty")
        #expect(KeyboardLayout.named("dvorak-unknown").name == "qwerty")
        #expect(KeyboardLayout.forLanguage("de").name == "qwertz")
        #expect(KeyboardLayout.forLanguage("fr").name == "azerty")
        #expect(KeyboardLayout.forLanguage("uk").name == "jcuken")
        #expect(KeyboardLayout.forLanguage("pl").name == "qwerty")
    }

    @Test func theLayoutSettingOutranksTheLanguageUnlessItIsAutoOrUnknown() {
        #expect(KeyboardLayout.chosen("azerty", language: "de").name == "azerty")
        #expect(KeyboardLayout.chosen(KeyboardLayout.automatic, language: "de").name == "qwertz")
        #expect(KeyboardLayout.chosen("dvorak", language: "fr").name == "azerty")
        #expect(KeyboardLayout.isSetting("auto") && KeyboardLayout.isSetting("jcuken"))
        #expect(!KeyboardLayout.isSetting("dvorak") && !KeyboardLayout.isSetting(""))
    }
}
