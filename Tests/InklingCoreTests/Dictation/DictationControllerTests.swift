import FoundationEssentials
import InklingCore
import Testing

@Suite("Dictation decisions")
struct DictationControllerTests {
    static let dictationKey = KeyEvent(keyval: 0x6D, modifiers: [.control, .alt])

    static func enabled() -> DictationController {
        var controller = DictationController()
        controller.enabled = true
        return controller
    }

    static func types(_ lines: [String]) -> [String] {
        lines.compactMap { DictationRequest.parse(String($0.dropLast())) }.map(\.type)
    }

    static func event(_ type: String, _ session: Int?, text: String? = nil) -> DictationEvent {
        DictationEvent(type: type, session: session, text: text)
    }

    @Test func theDefaultKeyIsControlAltM() {
        #expect(DictationController().key?.matches(Self.dictationKey) == true)
        #expect(SessionSettings().dictationKey == KeyBinding(accelerator: "<Control><Alt>m"))
    }

    @Test func theKeyWhenOffShowsTheNoticeAndSendsNothing() {
        var controller = DictationController()
        let action = controller.key(Self.dictationKey, secretField: false, now: 0)
        #expect(action.handled)
        #expect(action.notice == DictationController.offNotice)
        #expect(action.lines.isEmpty && !action.statusChanged)
        #expect(!controller.isActive)
    }

    @Test func theKeyTogglesListeningAndShowsTheLabel() {
        var controller = Self.enabled()
        let start = controller.key(Self.dictationKey, secretField: false, now: 0)
        #expect(Self.types(start.lines) == ["start"])
        #expect(start.statusChanged && start.status == DictationController.listeningLabel)
        _ = controller.received(Self.event("listening", controller.session), now: 10)
        let stop = controller.key(Self.dictationKey, secretField: false, now: 20)
        #expect(Self.types(stop.lines) == ["stop"])
        #expect(stop.statusChanged && stop.status == nil)
    }

    @Test func refusedInPasswordAndPINFields() {
        var controller = Self.enabled()
        let action = controller.key(Self.dictationKey, secretField: true, now: 0)
        #expect(action.handled && action.lines.isEmpty)
        #expect(action.notice == DictationController.refusedNotice)
        #expect(!controller.isActive)
    }

    @Test func partialsAreShownNeverCommittedAndFinalsCommittedOnce() {
        var controller = Self.enabled()
        _ = controller.key(Self.dictationKey, secretField: false, now: 0)
        let session = controller.session
        _ = controller.received(Self.event("listening", session), now: 1)
        let partial = controller.received(Self.event("partial", session, text: "hello wor"), now: 2)
        #expect(partial.commit == nil)
        #expect(partial.status == DictationController.listeningLabel + " hello wor")
        let final = controller.received(Self.event("final", session, text: "hello world"), now: 3)
        #expect(final.commit == "hello world")
        #expect(final.status == DictationController.listeningLabel)
        // A stale period's events are dropped.
        let stale = controller.received(Self.event("final", (session ?? 0) + 100, text: "other"), now: 4)
        #expect(stale.commit == nil)
    }

    @Test func stopKeepsTheLastFinalButCancelDoesNot() {
        var controller = Self.enabled()
        _ = controller.key(Self.dictationKey, secretField: false, now: 0)
        var session = controller.session
        _ = controller.received(Self.event("listening", session), now: 1)
        _ = controller.key(Self.dictationKey, secretField: false, now: 2)
        #expect(controller.received(Self.event("final", session, text: "kept"), now: 3).commit == "kept")
        _ = controller.received(Self.event("stopped", session), now: 4)
        #expect(!controller.isActive)

        _ = controller.key(Self.dictationKey, secretField: false, now: 10)
        session = controller.session
        _ = controller.received(Self.event("listening", session), now: 11)
        let escape = controller.key(.key(Keysym.escape), secretField: false, now: 12)
        #expect(escape.handled && Self.types(escape.lines) == ["cancel"])
        #expect(controller.received(Self.event("final", session, text: "dropped"), now: 13).commit == nil)
    }

    @Test func focusOutCancelsAndEscapeIsTheApplicationsWhenIdle() {
        var controller = Self.enabled()
        #expect(!controller.key(.key(Keysym.escape), secretField: false, now: 0).handled)
        _ = controller.key(Self.dictationKey, secretField: false, now: 0)
        let session = controller.session
        let out = controller.focusOut(now: 1)
        #expect(Self.types(out.lines) == ["cancel"])
        #expect(controller.received(Self.event("final", session, text: "late"), now: 2).commit == nil)
    }

    /// The key stopped listening (the last final is still on its way), then the user left the
    /// field: that final must not be typed into a field without focus.
    @Test func focusOutAfterStopDropsTheFinalStillOnItsWay() {
        var controller = Self.enabled()
        _ = controller.key(Self.dictationKey, secretField: false, now: 0)
        let session = controller.session
        _ = controller.received(Self.event("listening", session), now: 1)
        _ = controller.key(Self.dictationKey, secretField: false, now: 2)
        _ = controller.focusOut(now: 3)
        #expect(controller.received(Self.event("final", session, text: "late"), now: 4).commit == nil)
    }

    /// The same for the other ways listening is cancelled: turned off, field turned secret.
    @Test func turningOffOrASecretFieldAfterStopDropsTheFinalStillOnItsWay() {
        for turnOff in [true, false] {
            var controller = Self.enabled()
            _ = controller.key(Self.dictationKey, secretField: false, now: 0)
            let session = controller.session
            _ = controller.received(Self.event("listening", session), now: 1)
            _ = controller.key(Self.dictationKey, secretField: false, now: 2)
            _ = turnOff ? controller.setEnabled(false, now: 3) : controller.becameSecret(now: 3)
            #expect(controller.received(Self.event("final", session, text: "late"), now: 4).commit == nil)
        }
    }

    @Test func silenceEndsListening() {
        var controller = Self.enabled()
        controller.silenceTimeoutMilliseconds = 1000
        _ = controller.key(Self.dictationKey, secretField: false, now: 0)
        let session = controller.session
        _ = controller.received(Self.event("listening", session), now: 100)
        _ = controller.received(Self.event("partial", session, text: "a"), now: 500)
        #expect(controller.deadline == 1500)
        #expect(controller.timerFired(now: 1400).lines.isEmpty)
        #expect(Self.types(controller.timerFired(now: 1500).lines) == ["stop"])
    }

    @Test func anUnansweredStartOrStopMeansAHungHelper() {
        var controller = Self.enabled()
        _ = controller.key(Self.dictationKey, secretField: false, now: 0)
        #expect(!controller.helperHung(now: controller.startTimeoutMilliseconds - 1))
        #expect(controller.helperHung(now: controller.startTimeoutMilliseconds))
        let gone = controller.helperGone()
        #expect(gone.notice == DictationController.failedNotice && gone.statusChanged && gone.status == nil)
        #expect(!controller.isActive && controller.deadline == nil)
    }

    @Test func turningDictationOffCancels() {
        var controller = Self.enabled()
        _ = controller.key(Self.dictationKey, secretField: false, now: 0)
        #expect(Self.types(controller.setEnabled(false, now: 1).lines) == ["cancel"])
    }

    @Test func textIsSpacedAndCapitalisedLikeTypedWords() {
        #expect(DictationController.textToCommit("hello world", before: "") == "Hello world")
        #expect(DictationController.textToCommit("hello world", before: "Yes. ") == "Hello world")
        // A new line starts a sentence: the body of a message after its greeting line.
        #expect(DictationController.textToCommit("thanks for coming", before: "Hi all,\n\n") == "Thanks for coming")
        #expect(DictationController.textToCommit("hello world", before: "I said") == " hello world")
        #expect(DictationController.textToCommit("hello world", before: "I said ") == "hello world")
        #expect(DictationController.textToCommit("i think i'm right", before: "so ") == "I think I'm right")
        #expect(DictationController.textToCommit("<sil> ok [noise]", before: nil) == "ok")
        #expect(DictationController.textToCommit("  ", before: "") == "")
    }

    @Test func eventsWithUnsafeTextAreRefused() {
        #expect(DictationEvent.parse(#"{"v":1,"type":"final","session":1,"text":"ok"}"#)?.text == "ok")
        #expect(DictationEvent.parse(#"{"v":1,"type":"final","session":1,"text":"a\nb"}"#) == nil)
        #expect(DictationEvent.parse(#"{"v":1,"type":"final","session":1,"text":"a\u202eb"}"#) == nil)
        #expect(DictationEvent.parse(#"{"v":2,"type":"final","session":1,"text":"ok"}"#) == nil)
        #expect(DictationEvent.parse(#"{"v":1,"type":"final","session":1}"#) == nil)
    }
}

@Suite("Dictated text in the session")
struct DictationSessionTests {
    @Test func aFinalIsCommittedWithTypingsSpacingAndLearned() {
        let field = FakeField()
        field.type("We met")
        field.apply(field.session.commitDictated("zorblax today"))
        field.apply(field.session.commitDictated("it was fine"))
        field.type(".")
        #expect(field.text == "We met zorblax today it was fine.")
        field.refresh()
        #expect(field.session.predictor.userModel.knows("zorblax"))
    }

    @Test func aSentenceStartIsCapitalisedWhenTheContextIsKnown() {
        let field = FakeField(reporting: .codePoints)
        field.apply(field.session.commitDictated("hello there"))
        field.type(". ")
        field.apply(field.session.commitDictated("how are you"))
        field.focusOut()
        #expect(field.text.hasPrefix("Hello there. How are you"))
        // Without the client's text the engine cannot know it is a sentence start.
        let blind = FakeField()
        blind.apply(blind.session.commitDictated("hello there"))
        blind.focusOut()
        #expect(blind.text.hasPrefix("hello there"))
    }

    @Test func nothingIsLearnedInPrivateFieldsOrOffTheRecord() {
        let privateField = FakeField(contentType: ContentType(hints: ContentType.hintPrivate))
        privateField.apply(privateField.session.commitDictated("zorblax quuxly"))
        privateField.type(" ")
        privateField.refresh()
        #expect(!privateField.session.predictor.userModel.knows("zorblax"))

        var settings = SessionSettings()
        settings.offTheRecord = true
        let offRecord = FakeField(settings: settings)
        offRecord.apply(offRecord.session.commitDictated("zorblax quuxly"))
        offRecord.type(" ")
        offRecord.refresh()
        #expect(!offRecord.session.predictor.userModel.knows("zorblax"))
    }

    @Test func nothingReachesAPasswordField() {
        let field = FakeField(contentType: ContentType(purpose: ContentType.purposePassword))
        #expect(field.session.commitDictated("secret words").isEmpty)
        #expect(field.text.isEmpty)
    }

    @Test func theStatusShowsInTheAuxiliaryText() {
        let field = FakeField()
        field.session.dictationStatus = DictationController.listeningLabel
        field.apply(field.session.refreshAuxiliary())
        #expect(field.auxiliary == DictationController.listeningLabel)
        field.session.dictationStatus = nil
        field.apply(field.session.refreshAuxiliary())
        #expect(field.auxiliary == nil)
    }
}
