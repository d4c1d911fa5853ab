import FoundationEssentials
import InklingCore
import Testing

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    var now: Int64 = 1_000
}

private func cloudField(_ clock: ManualClock, contentType: ContentType = ContentType()) -> FakeField {
    var settings = SessionSettings()
    settings.cloudCheck = true
    let field = FakeField(settings: settings, contentType: contentType, reporting: .codePoints)
    field.session.clock = ProductClock { clock.now }
    return field
}

/// Types `text` into a cloud-enabled field, lets the sentence-end timer run out and returns the
/// request the session sends.
private func typeAndAsk(_ text: String, clock: ManualClock) throws -> (FakeField, CloudCheckRequest) {
    let field = cloudField(clock)
    field.type(text)
    clock.now += 400
    let action = field.session.cloudTimerFired()
    field.apply(action.effects)
    return (field, try request(from: action))
}

private func request(from action: CloudAction) throws -> CloudCheckRequest {
    guard case .check(let request) = try #require(action.messages.last) else {
        Issue.record("the last message is not a check")
        throw CancellationError()
    }
    return request
}

@Suite("Cloud check: timing, verdicts, fixes")
struct CloudSessionTests {
    @Test func asks400MillisecondsAfterASentenceEndsAndTwoSecondsOtherwise() {
        let clock = ManualClock()
        let field = cloudField(clock)
        field.type("I saw teh cat")
        #expect(field.session.cloudDeadline == clock.now + 2000)
        field.press(.typing("."))
        #expect(field.session.cloudDeadline == clock.now + 400)
        clock.now += 399
        #expect(field.session.cloudTimerFired().messages.isEmpty, "not yet")
        clock.now += 1
        #expect(field.session.cloudTimerFired().messages.count == 1)
    }

    @Test func everyKeyRestartsTheTimer() {
        let clock = ManualClock()
        let field = cloudField(clock)
        field.type("Hello.")
        clock.now += 300
        field.type(" I")
        #expect(field.session.cloudDeadline == clock.now + 2000)
        clock.now += 400
        #expect(field.session.cloudTimerFired().messages.isEmpty)
    }

    @Test func theRequestCarriesOnlyTheCurrentSentenceAndTheLocalFlags() throws {
        let clock = ManualClock()
        let field = cloudField(clock)
        field.type("First one here. I saw teh cat.")
        #expect(field.auxiliary == "teh → the", "the local chip shows before anything is sent")
        clock.now += 400
        let action = field.session.cloudTimerFired()
        field.apply(action.effects)
        let sent = try request(from: action)
        #expect(sent.sentence == "I saw teh cat.")
        #expect(sent.flags == [CloudFlag(start: 6, end: 9, word: "teh", replacements: ["the"])])
        #expect(
            field.auxiliary?.hasSuffix(InputSession.cloudHint) == true, "a visible hint while the check is in flight")
    }

    @Test func aDisagreeingVerdictRetractsTheFlagQuietly() throws {
        let clock = ManualClock()
        let (field, sent) = try typeAndAsk("I saw teh cat.", clock: clock)
        let reply = CloudReply(
            type: "result", id: sent.id, verdicts: [CloudVerdict(start: 6, end: 9, verdict: "disagree")])
        field.apply(field.session.cloudReplyReceived(reply))
        #expect(field.session.corrections.flags.isEmpty)
        #expect(field.auxiliary == nil)
    }

    @Test func anAgreeingVerdictKeepsTheFlagWithItsExplanation() throws {
        let clock = ManualClock()
        let (field, sent) = try typeAndAsk("I saw teh cat.", clock: clock)
        let reply = CloudReply(
            type: "result", id: sent.id,
            verdicts: [CloudVerdict(start: 6, end: 9, verdict: "agree", explanation: "letters swapped")])
        field.apply(field.session.cloudReplyReceived(reply))
        #expect(field.session.corrections.flags.first?.flag.explanation == "letters swapped")
        #expect(field.auxiliary == "teh → the")
    }

    @Test func anExtraFixBecomesAChipAndAppliesThroughTheVerifiedPath() throws {
        let clock = ManualClock()
        let (field, sent) = try typeAndAsk("😀 Their going home.", clock: clock)
        #expect(sent.sentence == "😀 Their going home.")
        let reply = CloudReply(
            type: "result", id: sent.id,
            fixes: [CloudFix(start: 2, end: 7, original: "Their", replacement: "They're", explanation: "they are")])
        field.apply(field.session.cloudReplyReceived(reply))
        #expect(field.auxiliary == "Their → They're")
        field.type(" Ok")
        field.press(.key(Keysym.returnKey, modifiers: [.control, .alt]))
        #expect(field.text == "😀 They're going home. Ok")
    }

    @Test func aFixWhoseSpanDoesNotMatchTheTextIsDiscarded() throws {
        let clock = ManualClock()
        let (field, sent) = try typeAndAsk("Their going home.", clock: clock)
        let reply = CloudReply(
            type: "result", id: sent.id, fixes: [CloudFix(start: 1, end: 6, original: "Their", replacement: "They're")])
        field.apply(field.session.cloudReplyReceived(reply))
        #expect(field.session.corrections.flags.isEmpty)
    }

    @Test func aReplyForTextThatChangedIsDropped() throws {
        let clock = ManualClock()
        let (field, sent) = try typeAndAsk("Their going home.", clock: clock)
        field.edit("There going home.")
        let reply = CloudReply(
            type: "result", id: sent.id, fixes: [CloudFix(start: 0, end: 5, original: "Their", replacement: "They're")])
        field.apply(field.session.cloudReplyReceived(reply))
        #expect(field.session.corrections.flags.isEmpty)
    }

    @Test func aNewerRequestCancelsTheStaleOneAndItsLateReplyIsIgnored() throws {
        let clock = ManualClock()
        let field = cloudField(clock)
        field.type("Their going.")
        clock.now += 400
        let first = try request(from: field.session.cloudTimerFired())
        field.type(" Its fine.")
        clock.now += 400
        let action = field.session.cloudTimerFired()
        #expect(action.messages.first == .cancel(id: first.id))
        let late = CloudReply(
            type: "result", id: first.id, fixes: [CloudFix(start: 0, end: 5, original: "Their", replacement: "They're")]
        )
        field.apply(field.session.cloudReplyReceived(late))
        #expect(field.session.corrections.flags.isEmpty)
    }

    @Test func garbageFromTheHelperChangesNothing() {
        let clock = ManualClock()
        let field = cloudField(clock)
        field.type("I saw teh cat.")
        clock.now += 400
        _ = field.session.cloudTimerFired()
        var router = CloudRouter()
        _ = router.outgoing(
            [.check(CloudCheckRequest(id: 1, sentence: "I saw teh cat.", language: "en", flags: []))], from: 7)
        for line in [
            "", "not json", "{\"v\":2,\"type\":\"result\",\"id\":1}", String(repeating: "x", count: 70_000),
            "{\"v\":1}",
        ] {
            #expect(router.incoming(line) == .ignored)
        }
        #expect(field.session.cloudReplyReceived(CloudReply(type: "hello", id: nil)).isEmpty)
        #expect(field.auxiliary?.hasPrefix("teh → the") == true)
    }

    @Test func aDeadHelperLeavesLocalFlagsAndDropsTheHint() {
        let clock = ManualClock()
        let field = cloudField(clock)
        field.type("I saw teh cat.")
        clock.now += 400
        _ = field.session.cloudTimerFired()
        field.apply(field.session.cloudHelperGone())
        #expect(field.auxiliary == "teh → the")
    }

    @Test func theSameSentenceIsNotSentTwice() throws {
        let clock = ManualClock()
        let (field, sent) = try typeAndAsk("I saw teh cat.", clock: clock)
        field.apply(field.session.cloudReplyReceived(CloudReply(type: "result", id: sent.id, verdicts: [])))
        field.type(" ")
        field.key(Keysym.backSpace)
        clock.now += 2000
        let again = field.session.cloudTimerFired()
        #expect(!again.messages.contains { if case .check = $0 { return true } else { return false } })
    }

    @Test(arguments: [
        ContentType(purpose: ContentType.purposePassword), ContentType(purpose: ContentType.purposePIN),
        ContentType(hints: ContentType.hintPrivate),
    ])
    func neverInSecretOrPrivateFields(contentType: ContentType) {
        let clock = ManualClock()
        let field = cloudField(clock, contentType: contentType)
        field.type("I saw teh cat.")
        clock.now += 5000
        #expect(field.session.cloudDeadline == nil)
        #expect(field.session.cloudTimerFired().messages.isEmpty)
    }

    @Test func offByDefaultAndOneSettingTurnsItOffAtOnce() {
        let clock = ManualClock()
        let plain = FakeField(reporting: .codePoints)
        plain.session.clock = ProductClock { clock.now }
        plain.type("I saw teh cat.")
        #expect(plain.session.cloudDeadline == nil)
        let field = cloudField(clock)
        field.type("I saw teh cat.")
        clock.now += 400
        _ = field.session.cloudTimerFired()
        var settings = field.session.settings
        settings.cloudCheck = false
        field.session.apply(settings)
        #expect(
            field.session.cloudReplyReceived(
                CloudReply(type: "result", id: 1, verdicts: [CloudVerdict(start: 6, end: 9, verdict: "disagree")])
            ).allSatisfy {
                if case .updateAuxiliaryText(let text) = $0 { return !text.contains("☁") } else { return true }
            })
        #expect(field.session.corrections.flags.count == 1, "a reply after switching off changes nothing")
    }
}

@Suite("Cloud protocol and scheduling")
struct CloudProtocolTests {
    @Test func validationKeepsOnlyConsistentAnswers() {
        let request = CloudCheckRequest(
            id: 3, sentence: "I saw teh 😀 cat adn dog", language: "en",
            flags: [CloudFlag(start: 6, end: 9, word: "teh", replacements: ["the"])])
        let reply = CloudReply(
            type: "result", id: 3,
            verdicts: [
                CloudVerdict(start: 6, end: 9, verdict: "agree"), CloudVerdict(start: 0, end: 1, verdict: "disagree"),
                CloudVerdict(start: 6, end: 9, verdict: "maybe"),
            ],
            fixes: [
                CloudFix(start: 16, end: 19, original: "adn", replacement: "and"),
                CloudFix(start: 15, end: 18, original: "adn", replacement: "and"),
                CloudFix(start: 16, end: 19, original: "adn", replacement: "adn"),
                CloudFix(start: 17, end: 19, original: "dn", replacement: "nd"),
                CloudFix(start: 20, end: 99, original: "dog", replacement: "cat"),
            ])
        let valid = reply.validated(against: request)
        #expect(valid.verdicts == [CloudVerdict(start: 6, end: 9, verdict: "agree")])
        #expect(valid.fixes == [CloudFix(start: 16, end: 19, original: "adn", replacement: "and")])
    }

    @Test func requestsRoundTripAsOneLine() throws {
        let request = CloudCheckRequest(id: 9, sentence: "Line \"quoted\"\nnext", language: "en", flags: [])
        let line = CloudLine.encode(request)
        #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false)
        #expect(try JSONDecoder().decode(CloudCheckRequest.self, from: Data(line.utf8)) == request)
    }

    @Test func restartBackoffGrowsAndResets() {
        var backoff = RestartBackoff()
        #expect(backoff.earliestRestart() == 0)
        backoff.recordFailure(now: 1000)
        #expect(backoff.earliestRestart() == 1500)
        backoff.recordFailure(now: 2000)
        #expect(backoff.earliestRestart() == 3000)
        for _ in 0..<30 { backoff.recordFailure(now: 5000) }
        #expect(backoff.earliestRestart() == 5000 + backoff.maximum)
        backoff.recordSuccess()
        #expect(backoff.earliestRestart() == 0)
    }

    @Test func aHungRequestTimesOut() {
        var scheduler = CloudScheduler()
        scheduler.noteChange(now: 0, endsSentence: true)
        _ = scheduler.start(sentence: "Hi.", language: "en", flags: [], before: "Hi.", sentenceStart: 0, now: 400)
        #expect(!scheduler.hasTimedOut(now: 400 + scheduler.replyTimeout))
        #expect(scheduler.hasTimedOut(now: 401 + scheduler.replyTimeout))
    }
}

@Suite("Cloud check: abandoned requests")
struct CloudAbandonTests {
    @Test func movingFocusCancelsTheRequestInFlight() throws {
        let clock = ManualClock()
        var settings = SessionSettings()
        settings.cloudCheck = true
        let field = FakeField(settings: settings, reporting: .codePoints)
        field.session.clock = ProductClock { clock.now }
        field.type("I saw teh cat.")
        clock.now += 400
        let sent = try request(from: field.session.cloudTimerFired())
        field.apply(field.session.focusIn())
        #expect(field.session.takePendingCloudMessages() == [.cancel(id: sent.id)])
        #expect(field.session.takePendingCloudMessages().isEmpty)
    }

    @Test func anUnknownContextStopsTheTimerInsteadOfSpinning() {
        let clock = ManualClock()
        var settings = SessionSettings()
        settings.cloudCheck = true
        let field = FakeField(settings: settings)
        field.session.clock = ProductClock { clock.now }
        field.type("I saw teh cat.")
        field.key(Keysym.left)  // the position is unknown now
        clock.now += 5000
        #expect(field.session.cloudTimerFired().messages.isEmpty)
        #expect(field.session.cloudDeadline == nil)
    }
}
