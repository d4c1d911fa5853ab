import InklingServerCore
import Testing

/// Where checks run: on the HTTP thread only while the upstream is plainly fast, never on more
/// than `maximumInline` HTTP threads at once, and handed over again as soon as it turns slow.
@Suite struct CheckPlacementTests {
    private func placement(maximumInline: Int = 2) -> CheckPlacement {
        CheckPlacement(.init(fastMilliseconds: 20, maximumInline: maximumInline, fastRunNeeded: 3))
    }

    /// `count` upstream calls of `milliseconds` each, one after the other, from `now`.
    private func calls(
        _ placement: CheckPlacement, _ count: Int, lasting milliseconds: UInt64, from now: UInt64,
        succeeded: Bool = true
    ) {
        for index in 0..<UInt64(count) {
            let call = placement.upstreamStarted(now: now + index * 100)
            placement.upstreamFinished(call, now: now + index * 100 + milliseconds, succeeded: succeeded)
        }
    }

    @Test func handsOverUntilTheUpstreamHasBeenFastEnoughTimes() {
        let placement = placement()
        #expect(!placement.answerInPlace(now: 0))
        calls(placement, 2, lasting: 1, from: 0)
        #expect(!placement.answerInPlace(now: 1000))
        calls(placement, 1, lasting: 1, from: 1000)
        #expect(placement.answerInPlace(now: 2000))
    }

    @Test func neverMoreThanTheAllowedHTTPThreadsAtOnce() {
        let placement = placement(maximumInline: 2)
        calls(placement, 3, lasting: 1, from: 0)
        #expect(placement.answerInPlace(now: 1000))
        #expect(placement.answerInPlace(now: 1000))
        #expect(!placement.answerInPlace(now: 1000))
        placement.inlineFinished()
        #expect(placement.answerInPlace(now: 1001))
    }

    @Test func aCallUnderWayPastTheLimitHandsEveryOtherCheckOver() {
        let placement = placement(maximumInline: 4)
        calls(placement, 3, lasting: 1, from: 0)
        // The upstream turns slow: a call started at 1000 has not come back 20 ms later.
        let slow = placement.upstreamStarted(now: 1000)
        #expect(placement.answerInPlace(now: 1019))
        placement.inlineFinished()
        #expect(!placement.answerInPlace(now: 1020))
        #expect(!placement.answerInPlace(now: 6000))
        // It came back slow: still handed over, until enough fast calls in a row again.
        placement.upstreamFinished(slow, now: 6000, succeeded: true)
        #expect(!placement.answerInPlace(now: 6001))
        calls(placement, 3, lasting: 1, from: 7000)
        #expect(placement.answerInPlace(now: 8000))
    }

    @Test func failedOrSlowCallsEndTheFastRun() {
        let placement = placement()
        calls(placement, 3, lasting: 1, from: 0)
        calls(placement, 1, lasting: 1, from: 1000, succeeded: false)
        #expect(!placement.answerInPlace(now: 2000))
        calls(placement, 3, lasting: 1, from: 3000)
        calls(placement, 1, lasting: 20, from: 4000)
        #expect(!placement.answerInPlace(now: 5000))
    }

    @Test func zeroMillisecondsOrNoThreadsNeverAnswersInPlace() {
        for settings in [
            CheckPlacement.Settings(fastMilliseconds: 0, maximumInline: 4, fastRunNeeded: 0),
            CheckPlacement.Settings(fastMilliseconds: 20, maximumInline: 0, fastRunNeeded: 0),
        ] {
            let placement = CheckPlacement(settings)
            #expect(!placement.answerInPlace(now: 0))
        }
    }

    @Test func theServerAnswersInPlaceOnHalfItsThreadsOnlyWhenTheUpstreamTimeoutIsUnderTheIdleTimeout() {
        let fits = CheckPlacement.Settings.server(
            httpThreads: 16, fastMilliseconds: 20, upstreamTimeoutMilliseconds: 8000, idleTimeoutMilliseconds: 15000)
        #expect(fits.maximumInline == 8)
        let tooLong = CheckPlacement.Settings.server(
            httpThreads: 16, fastMilliseconds: 20, upstreamTimeoutMilliseconds: 15000, idleTimeoutMilliseconds: 15000)
        #expect(tooLong.maximumInline == 0)
        let one = CheckPlacement.Settings.server(
            httpThreads: 1, fastMilliseconds: 20, upstreamTimeoutMilliseconds: 100, idleTimeoutMilliseconds: 15000)
        #expect(one.maximumInline == 0)
    }
}
