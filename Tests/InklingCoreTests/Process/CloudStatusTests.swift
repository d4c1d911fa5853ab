import InklingCore
import Testing

@Suite struct CloudStatusTests {
    let now: Int64 = 1_764_650_000

    @Test func everyRecordReadsBackFromItsContents() {
        for state in CloudStatus.State.allCases {
            for httpClass in [nil, 2, 4, 5] as [Int?] {
                let record = CloudStatus.Record(state: state, time: now, httpClass: httpClass)
                #expect(CloudStatus.record(in: CloudStatus.contents(record)) == record)
            }
        }
        #expect(CloudStatus.contents(.init(state: .failing, time: now, httpClass: 5)) == "failing \(now) 5xx\n")
        #expect(CloudStatus.contents(.init(state: .signInRequired, time: now)) == "sign-in-required \(now)\n")
    }

    @Test(arguments: [
        "", "\n", " ", "working", "working \n", "working abc", "working -5", "working 0", "working +5",
        "working 12 34 56", "working 12 6xx", "working 12 0xx", "working 12 5XX", "working 12 55x", "working  12",
        "Working 12", "online 12", "circuit-open 12", "working 99999999999999999999999",
        "working 12\nworking 13\n", "\u{0}\u{0}\u{0}", "working 12\u{0}", "wörking 12",
        "working " + String(repeating: "1", count: 80), String(repeating: "x", count: 10_000),
    ])
    func garbageIsNoRecordAndNoRecentCheck(text: String) {
        #expect(CloudStatus.record(in: text) == nil)
        #expect(CloudStatus.report(text: text, now: now) == .noRecentCheck)
    }

    @Test func aMissingFileIsNoRecentCheck() {
        #expect(CloudStatus.report(text: nil, now: now) == .noRecentCheck)
        #expect(CloudStatus.report(text: nil, now: now).sentence.hasPrefix("No recent check"))
    }

    @Test func aFreshRecordIsReportedWithItsState() {
        let text = CloudStatus.contents(.init(state: .unreachable, time: now - 30))
        #expect(CloudStatus.report(text: text, now: now) == .state(.unreachable, httpClass: nil))
        let failing = CloudStatus.contents(.init(state: .failing, time: now, httpClass: 5))
        #expect(CloudStatus.report(text: failing, now: now) == .state(.failing, httpClass: 5))
        #expect(CloudStatus.report(text: failing, now: now).sentence.contains("HTTP 5xx"))
    }

    @Test func aRecordOlderThanADayIsNoRecentCheck() {
        let day = CloudStatus.staleAfter
        #expect(
            CloudStatus.report(text: "working \(now - day)", now: now) == .state(.working, httpClass: nil))
        #expect(CloudStatus.report(text: "working \(now - day - 1)", now: now) == .noRecentCheck)
    }

    @Test func aRecordFromTheFutureIsBelievedOnlyWithinTheTolerance() {
        let tolerance = CloudStatus.futureTolerance
        #expect(
            CloudStatus.report(text: "working \(now + tolerance)", now: now) == .state(.working, httpClass: nil))
        #expect(CloudStatus.report(text: "working \(now + tolerance + 1)", now: now) == .noRecentCheck)
        #expect(CloudStatus.report(text: "working \(Int64.max)", now: now) == .noRecentCheck)
        // The other extreme of the clock: no overflow.
        #expect(CloudStatus.report(text: "working 1", now: Int64.max) == .noRecentCheck)
        #expect(CloudStatus.report(text: "working \(Int64.max)", now: 0) == .noRecentCheck)
    }

    @Test func everyReportHasItsOwnSentence() {
        var reports: [CloudStatus.Report] = [.noRecentCheck, .state(.failing, httpClass: 4)]
        reports += CloudStatus.State.allCases.map { .state($0, httpClass: nil) }
        let sentences = reports.map(\.sentence)
        #expect(Set(sentences).count == sentences.count)
        #expect(sentences.allSatisfy { !$0.isEmpty && !$0.contains("{") })
    }

    @Test func theHelperWritesOnAChangeAndHourlyOtherwise() {
        let working = CloudStatus.Record(state: .working, time: now)
        #expect(CloudStatus.needsWrite(previous: nil, next: working))
        #expect(!CloudStatus.needsWrite(previous: working, next: .init(state: .working, time: now + 60)))
        #expect(
            CloudStatus.needsWrite(
                previous: working, next: .init(state: .working, time: now + CloudStatus.rewriteAfter)))
        #expect(CloudStatus.needsWrite(previous: working, next: .init(state: .unreachable, time: now + 1)))
        #expect(
            CloudStatus.needsWrite(
                previous: .init(state: .failing, time: now, httpClass: 4),
                next: .init(state: .failing, time: now, httpClass: 5)))
        #expect(CloudStatus.needsWrite(previous: working, next: .init(state: .working, time: now - 1)))
    }

    @Test func thePathNeedsAnAbsoluteRuntimeFolder() {
        #expect(CloudStatus.path(runtimeDirectory: "/run/user/1000") == "/run/user/1000/inkling/cloud-status")
        #expect(CloudStatus.path(runtimeDirectory: nil) == nil)
        #expect(CloudStatus.path(runtimeDirectory: "run") == nil)
    }
}
