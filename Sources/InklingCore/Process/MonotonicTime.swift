/// The product's monotonic clock, in whole milliseconds since a fixed point in this process.
///
/// Every timer decision in the core (cloud check, dictation, learning times) reads this clock
/// or an injected one, so tests can drive time.
public enum MonotonicTime {
    /// Milliseconds since an arbitrary, fixed point of a monotonic clock (never negative).
    public static func milliseconds() -> Int64 {
        // The origin is read first: it is initialised lazily, on the first call, and reading the
        // clock before it would put "now" before the origin.
        let origin = processStart
        return milliseconds(from: origin, to: ContinuousClock.now)
    }

    /// Whole milliseconds from `origin` to `now`, 0 when `now` is not after `origin`.
    public static func milliseconds(from origin: ContinuousClock.Instant, to now: ContinuousClock.Instant) -> Int64 {
        guard now > origin else { return 0 }
        let elapsed = origin.duration(to: now).components
        // Saturates rather than overflowing: a monotonic clock does not run for 292 million years.
        let (whole, overflow) = elapsed.seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return .max }
        let (sum, overflowSum) = whole.addingReportingOverflow(elapsed.attoseconds / 1_000_000_000_000_000)
        return overflowSum ? .max : sum
    }

    private static let processStart = ContinuousClock.now
}

/// The product's one clock, as a value: what everything that decides by time reads (the
/// session's cloud timer and learning times, dictation, helper restarts and flood limits).
///
/// The engine glue passes one real clock (`monotonic`) everywhere; tests inject one they move
/// by hand, so no decision depends on the wall clock.
public struct ProductClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock that reads `read` (milliseconds, never going back).
    public init(_ read: @escaping @Sendable () -> Int64) { self.read = read }

    /// Milliseconds now.
    public func now() -> Int64 { read() }

    /// The real clock: `MonotonicTime`.
    public static let monotonic = ProductClock { MonotonicTime.milliseconds() }
}
