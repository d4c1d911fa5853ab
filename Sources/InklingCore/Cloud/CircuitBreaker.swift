/// A circuit breaker over consecutive failures, driven by an explicit clock value so it can be
/// tested without waiting: after `threshold` consecutive failures the circuit opens for
/// `baseOpenMilliseconds`; when that has passed one request is let through (half-open); if it
/// fails too the circuit opens again for twice as long, up to `maximumOpenMilliseconds`.
/// Any success closes the circuit and resets the duration.
public struct CircuitBreaker: Equatable, Sendable {
    public let threshold: Int
    public let baseOpenMilliseconds: UInt64
    public let maximumOpenMilliseconds: UInt64

    /// Failures since the last success.
    public private(set) var consecutiveFailures = 0
    /// While open: when requests may be tried again.
    public private(set) var openUntil: UInt64?
    /// How long the circuit was opened for the last time; nil while it has not tripped since the
    /// last success.
    public private(set) var lastOpenMilliseconds: UInt64?

    public init(threshold: Int = 3, baseOpenMilliseconds: UInt64 = 30_000, maximumOpenMilliseconds: UInt64 = 300_000) {
        self.threshold = max(1, threshold)
        self.baseOpenMilliseconds = max(1, baseOpenMilliseconds)
        self.maximumOpenMilliseconds = max(self.baseOpenMilliseconds, maximumOpenMilliseconds)
    }

    /// Whether a request may go to the network now.
    public func allows(now: UInt64) -> Bool {
        guard let openUntil else { return true }
        return now >= openUntil
    }

    public mutating func recordSuccess() {
        consecutiveFailures = 0
        openUntil = nil
        lastOpenMilliseconds = nil
    }

    public mutating func recordFailure(now: UInt64) {
        consecutiveFailures += 1
        guard consecutiveFailures >= threshold else { return }
        // A failure that finishes while the circuit is already open (a request that started
        // before it opened) does not extend it.
        if let openUntil, now < openUntil { return }
        let duration: UInt64
        if let last = lastOpenMilliseconds {
            duration = min(
                last.multipliedReportingOverflow(by: 2).overflow ? maximumOpenMilliseconds : last * 2,
                maximumOpenMilliseconds)
        } else {
            duration = baseOpenMilliseconds
        }
        lastOpenMilliseconds = duration
        openUntil = now + duration
    }
}
