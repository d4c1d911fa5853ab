import InklingCore
import Testing

@Suite("The product clock")
struct MonotonicTimeTests {
    @Test func theRealClockNeverGoesBack() {
        let first = ProductClock.monotonic.now()
        let second = ProductClock.monotonic.now()
        #expect(first >= 0 && second >= first)
    }

    /// Learning times come from the session's injected clock, in seconds (not the wall clock).
    @Test func learnedWordsAreStampedByTheInjectedClock() throws {
        let field = FakeField()
        field.session.clock = ProductClock { 7_000_000 }
        field.type("Zorblax said ")
        let entry = try #require(field.session.predictor.userModel.word("zorblax"))
        #expect(entry.lastUsed == 7_000)
    }
}
