import InklingCore
import Testing

@Suite("The input-source menu")
struct PropertyMenuTests {
    private let names = ["en": "English", "de": "Deutsch", "fr": "Français", "uk": "Українська"]

    @Test func englishComesFirstThenInstalledLanguagesByName() {
        let menu = PropertyMenu(installed: ["uk", "fr", "de"], displayNames: names, chosen: "fr", offTheRecord: false)
        #expect(menu.languages.map(\.language) == ["en", "de", "fr", "uk"])
        #expect(menu.languages.map(\.label) == ["English", "Deutsch", "Français", "Українська"])
        #expect(menu.languages.filter(\.isChosen).map(\.language) == ["fr"])
        #expect(menu.languageTitle == "Language: Français")
        #expect(menu.languageSymbol == "FR")
    }

    @Test func aChosenLanguageWithoutAPackIsStillShownSoTheChoiceIsVisible() {
        let menu = PropertyMenu(installed: [], displayNames: ["en": "English"], chosen: "pl", offTheRecord: true)
        #expect(menu.languages.map(\.language) == ["en", "pl"])
        #expect(menu.languages.last?.label == "pl", "no manifest name: the code")
        #expect(menu.offTheRecord)
    }

    @Test func activationsBecomeActions() {
        let menu = PropertyMenu(installed: ["de"], displayNames: names, chosen: "en", offTheRecord: false)
        #expect(menu.action(forProperty: "inkling.language.de", state: .checked) == .languageChosen("de"))
        #expect(
            menu.action(forProperty: "inkling.language.de", state: .unchecked) == nil, "the radio item losing its check"
        )
        #expect(menu.action(forProperty: "inkling.language.xx", state: .checked) == nil, "not in the menu")
        #expect(menu.action(forProperty: PropertyMenu.offTheRecordKey, state: .checked) == .offTheRecordChanged(true))
        #expect(
            menu.action(forProperty: PropertyMenu.offTheRecordKey, state: .unchecked) == .offTheRecordChanged(false))
        #expect(menu.action(forProperty: "InputMode", state: .checked) == nil)
    }

    @Test func choosingMovesTheLanguageToTheFrontAndKeepsTheRest() {
        #expect(PropertyMenu.languages(["en"], choosing: "de") == ["de", "en"])
        #expect(PropertyMenu.languages(["de", "en", "fr"], choosing: "fr") == ["fr", "de", "en"])
        #expect(PropertyMenu.languages(["de", "en"], choosing: "de") == ["de", "en"])
    }
}
