/// The cloud check in the session (decisions in `CloudCheck` and `CloudScheduler`).

extension InputSession {
    /// Whether the cloud check may run here: opted in, not a password, PIN or private field,
    /// not off the record.
    public var cloudEnabled: Bool { cloudEnabled(under: settings) }

    /// Whether the cloud check may run here under `settings`.
    func cloudEnabled(under settings: SessionSettings) -> Bool {
        settings.cloudCheck && !settings.offTheRecord && !contentType.isSecret && !contentType.isPrivate && !isInert
            && !fieldHeldConfidentialText
    }

    /// When the glue should call `cloudTimerFired()` (milliseconds on `clock`).
    public var cloudDeadline: Int64? { cloudEnabled ? cloud.deadline : nil }

    /// Forgets the request in flight and queues its cancellation for the helper.
    func dropCloudRequest() {
        cloudCheck.cancel()
    }

    /// Messages the glue should send the helper now (cancellations of abandoned requests).
    public func takePendingCloudMessages() -> [CloudRequestMessage] {
        if !cloudEnabled, cloudCheck.isWaiting { dropCloudRequest() }
        return cloudCheck.takePendingMessages()
    }

    /// The cloud timer ran out: the request to send for the current sentence, if any.
    public func cloudTimerFired() -> CloudAction {
        let now = clock.now()
        guard cloudEnabled, cloudCheck.scheduler.isDue(now: now) else { return CloudAction() }
        // Nothing known to ask about: wait for the next key rather than firing again.
        guard context.isKnown, let (sentence, start) = CloudCheck.sentence(endingAt: context.before) else {
            cloudCheck.scheduler.clearDeadline()
            return CloudAction()
        }
        let flags = CloudCheck.flags(
            corrections.flags, before: context.before, sentenceStart: start, length: sentence.unicodeScalars.count)
        let (request, superseded) = cloudCheck.scheduler.start(
            sentence: sentence, language: settings.language, flags: flags, before: context.before, sentenceStart: start,
            now: now)
        var messages: [CloudRequestMessage] = []
        if let superseded { messages.append(.cancel(id: superseded)) }
        if var reply = cloudCheck.cachedReply(for: request) {
            // Answered before: no need to ask again.
            reply.id = request.id
            let effects = applyCloudReply(reply)
            return CloudAction(messages: messages, effects: effects)
        }
        messages.append(.check(request))
        return CloudAction(messages: messages, effects: auxiliaryEffects())
    }

    /// A message from the helper (parsed by `CloudRouter`). Stale and out-of-date answers change nothing.
    public func cloudReplyReceived(_ reply: CloudReply) -> [SessionEffect] {
        guard reply.type != "hello" else { return [] }
        guard cloudEnabled else {
            _ = cloudCheck.scheduler.finish(id: reply.id)
            return auxiliaryEffects()
        }
        return applyCloudReply(reply)
    }

    /// The helper died or hung: forget what was asked; local flags stay as they are.
    public func cloudHelperGone() -> [SessionEffect] {
        _ = cloudCheck.scheduler.finish(id: cloud.inFlight?.request.id)
        return auxiliaryEffects()
    }

    /// Whether the request in flight has waited longer than any answer is worth.
    public var cloudRequestTimedOut: Bool { cloudCheck.scheduler.hasTimedOut(now: clock.now()) }

    func applyCloudReply(_ reply: CloudReply) -> [SessionEffect] {
        guard let (request, before, start) = cloudCheck.scheduler.finish(id: reply.id) else { return [] }
        guard reply.type == "result" else { return auxiliaryEffects() }
        let valid = reply.validated(against: request)
        cloudCheck.remember(valid, for: request)
        // Only text appended since the request keeps its positions; anything else drops the answer.
        guard context.before.unicodeScalars.starts(with: before.unicodeScalars) else { return auxiliaryEffects() }
        CloudCheck.merge(valid, sentenceStart: start, before: context.before, into: &corrections.tracker)
        return auxiliaryEffects()
    }

    /// Shown in the auxiliary text while a cloud check is in flight.
    public static var cloudHint: String { "   " + tr("☁ checking…") }
}
