import InklingCore
import Testing

@Suite("Settings flow one way: the session asks, the settings reader applies")
struct SessionIntentTests {
    private static let offTheRecordKey = KeyEvent.typing("o", modifiers: [.control, .alt])

    @Test func theOffTheRecordKeyAsksAndLeavesTheSettingsToTheirReader() {
        let session = InputSession(predictor: Predictor(pack: RealPack.pack))
        let result = session.processKey(Self.offTheRecordKey)
        #expect(result.handled)
        #expect(result.intents == [.offTheRecordChanged(true)])
        #expect(!session.settings.offTheRecord, "only the settings reader writes the settings")
        #expect(result.effects.contains(.updateAuxiliaryText("off the record: nothing is learned or sent")))

        session.apply(session.settings.applying(result.intents))
        #expect(session.settings.offTheRecord)
        #expect(!session.learningAllowed)
        #expect(session.processKey(Self.offTheRecordKey).intents == [.offTheRecordChanged(false)])
    }

    @Test func otherKeysAskForNothing() {
        let session = InputSession(predictor: Predictor(pack: RealPack.pack))
        for event in [KeyEvent.typing("a"), .key(Keysym.space), .key(Keysym.returnKey), .key(Keysym.escape)] {
            #expect(session.processKey(event).intents.isEmpty)
        }
    }

    @Test func applyingAnIntentChangesOnlyWhatItNames() {
        var settings = SessionSettings()
        settings.cloudCheck = true
        let offTheRecord = settings.applying(.offTheRecordChanged(true))
        var expected = settings
        expected.offTheRecord = true
        #expect(offTheRecord == expected)
        #expect(offTheRecord.applying(.offTheRecordChanged(false)) == settings)
        // The language becomes the session's once its pack is loaded, not when it is chosen.
        #expect(settings.applying(.languageChosen("de")) == settings)
        #expect(settings.applying([.offTheRecordChanged(true), .offTheRecordChanged(false)]) == settings)
    }

    @Test func theMenuReportsTheSameIntents() {
        let menu = PropertyMenu(installed: ["de"], displayNames: [:], chosen: "en", offTheRecord: false)
        #expect(menu.action(forProperty: PropertyMenu.offTheRecordKey, state: .checked) == .offTheRecordChanged(true))
        #expect(menu.action(forProperty: "inkling.language.de", state: .checked) == .languageChosen("de"))
    }

    /// The key that turns the cloud check off (off the record) restarts no cloud timer, and the
    /// one that turns it back on does, as when the session set the setting itself.
    @Test func theCloudTimerFollowsTheSettingsTheKeyAskedFor() {
        let clock = ManualClock()
        var settings = SessionSettings()
        settings.cloudCheck = true
        let field = FakeField(settings: settings, reporting: .codePoints)
        field.session.clock = ProductClock { clock.now }
        field.type("I saw teh cat")
        let typed = field.session.cloud.deadline
        #expect(typed != nil)
        clock.now += 100
        field.press(Self.offTheRecordKey)
        #expect(field.session.settings.offTheRecord)
        #expect(field.session.cloud.deadline == typed, "off the record: no cloud timer restarted")
        clock.now += 100
        field.press(Self.offTheRecordKey)
        #expect(!field.session.settings.offTheRecord)
        #expect(field.session.cloud.deadline == clock.now + field.session.cloud.idleDelay)
    }
}
