import Testing

@testable import InklingCore

/// The breaker is driven by explicit clock values (milliseconds), so no test waits.
@Suite("CircuitBreaker")
struct CircuitBreakerTests {
    @Test func staysClosedBelowTheThreshold() {
        var breaker = CircuitBreaker()
        breaker.recordFailure(now: 0)
        breaker.recordFailure(now: 1)
        #expect(breaker.allows(now: 2))
        breaker.recordSuccess()
        breaker.recordFailure(now: 3)
        breaker.recordFailure(now: 4)
        #expect(breaker.allows(now: 5), "a success resets the count of consecutive failures")
    }

    @Test func opensForThirtySecondsAfterThreeFailures() {
        var breaker = CircuitBreaker()
        for t in [0, 1, 2] as [UInt64] { breaker.recordFailure(now: t) }
        #expect(!breaker.allows(now: 3))
        #expect(!breaker.allows(now: 30_001))
        #expect(breaker.allows(now: 30_002))
    }

    @Test func failedProbeDoublesUpToFiveMinutes() {
        var breaker = CircuitBreaker()
        var now: UInt64 = 0
        for _ in 0..<3 { breaker.recordFailure(now: now) }
        var expected: [UInt64] = []
        var durations: [UInt64] = []
        for _ in 0..<6 {
            let until = breaker.openUntil!
            durations.append(until - now)
            now = until
            #expect(breaker.allows(now: now))
            breaker.recordFailure(now: now)  // the half-open probe fails
        }
        expected = [30_000, 60_000, 120_000, 240_000, 300_000, 300_000]
        #expect(durations == expected)
    }

    @Test func successAfterOpeningResetsTheDuration() {
        var breaker = CircuitBreaker()
        for _ in 0..<3 { breaker.recordFailure(now: 0) }
        breaker.recordFailure(now: 30_000)  // probe fails: 60 s
        #expect(breaker.openUntil == 90_000)
        breaker.recordSuccess()
        #expect(breaker.allows(now: 90_000))
        #expect(breaker.openUntil == nil)
        for _ in 0..<3 { breaker.recordFailure(now: 100_000) }
        #expect(breaker.openUntil == 130_000, "back to the base duration")
    }

    @Test func lateFailureWhileOpenDoesNotExtend() {
        var breaker = CircuitBreaker()
        for _ in 0..<3 { breaker.recordFailure(now: 0) }
        breaker.recordFailure(now: 10_000)
        #expect(breaker.openUntil == 30_000)
    }

    @Test func customBase() {
        var breaker = CircuitBreaker(baseOpenMilliseconds: 400)
        for _ in 0..<3 { breaker.recordFailure(now: 1000) }
        #expect(!breaker.allows(now: 1399))
        #expect(breaker.allows(now: 1400))
    }
}
