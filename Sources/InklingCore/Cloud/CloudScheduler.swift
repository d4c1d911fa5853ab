/// When the engine asks the cloud, and which answer it still wants.
///
/// The cheapest moment: 400 ms after the text ends a sentence (`.`, `!`, `?`), otherwise 2 s
/// after the last key. Every key restarts the timer; a newer request supersedes (and cancels) the
/// one in flight; a reply for any other id is stale and ignored.
public struct CloudScheduler: Sendable {
    /// Delay after a sentence end, in milliseconds.
    public var sentenceEndDelay: Int64 = 400
    /// Delay after any other key, in milliseconds.
    public var idleDelay: Int64 = 2000
    /// Longest a request may stay unanswered before the engine gives up on it (the helper has
    /// its own, shorter network timeout; this only guards against a hung helper).
    public var replyTimeout: Int64 = 15_000

    /// When the next check is due (milliseconds on the session clock), if one is scheduled.
    public private(set) var deadline: Int64? = nil
    /// The request waiting for an answer.
    public private(set) var inFlight: (request: CloudCheckRequest, before: String, sentenceStart: Int, sentAt: Int64)? =
        nil
    private var nextID = 1

    public init() {}

    /// The text changed (a key): restart the timer.
    public mutating func noteChange(now: Int64, endsSentence: Bool) {
        deadline = Self.saturatingSum(now, endsSentence ? sentenceEndDelay : idleDelay)
    }

    /// Nothing to check any more (focus moved, cloud turned off).
    public mutating func cancelAll() -> Int? {
        deadline = nil
        let id = inFlight?.request.id
        inFlight = nil
        return id
    }

    /// Stops the timer without touching the request in flight (nothing to ask right now).
    public mutating func clearDeadline() { deadline = nil }

    /// Whether the timer has run out.
    public func isDue(now: Int64) -> Bool { deadline.map { now >= $0 } ?? false }

    /// Starts a request: returns it with a fresh id and the id it supersedes (to cancel).
    public mutating func start(
        sentence: String, language: String, flags: [CloudFlag], before: String, sentenceStart: Int, now: Int64
    ) -> (request: CloudCheckRequest, cancel: Int?) {
        deadline = nil
        let superseded = inFlight?.request.id
        let request = CloudCheckRequest(id: nextID, sentence: sentence, language: language, flags: flags)
        nextID += 1
        inFlight = (request, before, sentenceStart, now)
        return (request, superseded)
    }

    /// Takes the in-flight request if `id` answers it; nil for a stale or unknown id.
    public mutating func finish(id: Int?) -> (request: CloudCheckRequest, before: String, sentenceStart: Int)? {
        guard let inFlight, let id, inFlight.request.id == id else { return nil }
        self.inFlight = nil
        return (inFlight.request, inFlight.before, inFlight.sentenceStart)
    }

    /// `time + delay`, held at the ends of `Int64` instead of trapping (the clock is injected).
    static func saturatingSum(_ time: Int64, _ delay: Int64) -> Int64 {
        let (sum, overflow) = time.addingReportingOverflow(delay)
        guard overflow else { return sum }
        return delay > 0 ? .max : .min
    }

    /// Whether the in-flight request has waited too long (a hung helper).
    public func hasTimedOut(now: Int64) -> Bool {
        inFlight.map { now > Self.saturatingSum($0.sentAt, replyTimeout) } ?? false
    }
}

/// Restarts of a helper process with exponential backoff, so a crashing helper is not respawned
/// in a tight loop.
public struct RestartBackoff: Sendable {
    /// First delay, in milliseconds.
    public var initial: Int64 = 500
    /// Longest delay.
    public var maximum: Int64 = 60_000
    private var failures = 0
    private var lastFailure: Int64 = 0

    public init() {}

    /// The helper died at `now`.
    public mutating func recordFailure(now: Int64) {
        failures += 1
        lastFailure = now
    }

    /// The helper answered normally: start over.
    public mutating func recordSuccess() { failures = 0 }

    /// When the helper may be started again.
    public func earliestRestart() -> Int64 {
        guard failures > 0 else { return 0 }
        let delay = min(maximum, initial << Int64(min(failures - 1, 20)))
        return CloudScheduler.saturatingSum(lastFailure, delay)
    }
}
