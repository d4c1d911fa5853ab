import FoundationEssentials
import InklingCore
import Testing

@Suite("Session settings: the page size and the layout decided once")
struct SessionSettingsRulesTests {
    @Test func thePageSizeSettingIsBroughtIntoRangeWithTwoPagesOfCandidates() {
        var settings = SessionSettings()
        settings.setPageSize(3)
        #expect(settings.pageSize == 3 && settings.candidateCount == 10, "never fewer than the default")
        settings.setPageSize(7)
        #expect(settings.pageSize == 7 && settings.candidateCount == 14)
        settings.setPageSize(0)
        #expect(settings.pageSize == 1)
        settings.setPageSize(Int.max)
        #expect(settings.pageSize == 9 && settings.candidateCount == 18)
        #expect(SessionSettings.pageSize(forSetting: -5) == SessionSettings.pageSizes.lowerBound)
    }

    @Test func theSessionPagesByTheSameRule() throws {
        var settings = SessionSettings()
        settings.pageSize = 40  // set directly, past the setting's range
        settings.candidateCount = 40
        let field = FakeField(settings: settings)
        field.type("th")
        #expect(try #require(field.table).pageSize == 9)
    }

    @Test func theLayoutFollowsTheLanguageUnlessOneIsChosen() {
        var settings = SessionSettings()
        #expect(settings.keyboardLayout == "qwerty")
        settings.language = "de"
        #expect(settings.keyboardLayout == "qwertz")
        settings.layoutChoice = "azerty"
        #expect(settings.keyboardLayout == "azerty")
        settings.layoutChoice = "dvorak"  // unknown: the language's
        #expect(settings.keyboardLayout == "qwertz")
    }

    /// The predictor weighs typos by the same layout as the checker: before, it kept QWERTY
    /// for a session that started in German, and the language's layout over a chosen one.
    @Test func thePredictorUsesTheSessionsLayout() {
        var settings = SessionSettings()
        settings.language = "de"
        let predictor = Predictor(pack: SessionFuzzTests.secondPack)
        let session = InputSession(predictor: predictor, settings: settings)
        #expect(predictor.options.keyboardLayout == "qwertz")
        settings.layoutChoice = "azerty"
        session.apply(settings)
        #expect(predictor.options.keyboardLayout == "azerty")

        let english = Predictor(pack: RealPack.pack)
        _ = session.switchPredictor(to: english)
        #expect(english.options.keyboardLayout == "azerty", "the chosen layout outranks the language's")
        settings.language = "en"
        settings.layoutChoice = KeyboardLayout.automatic
        session.apply(settings)
        #expect(english.options.keyboardLayout == "qwerty")
    }
}
