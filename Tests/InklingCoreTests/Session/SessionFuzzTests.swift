import FoundationEssentials
import InklingCore
import InklingTestSupport
import Testing

/// The session fuzzer (see `SessionFuzzer`): random users and clients against the real pack.
///
/// `INKLING_FUZZ_SEED` (a number, or `random`) and `INKLING_FUZZ_EVENTS` replace the defaults;
/// a failure prints the seed, the event and the last events, so `INKLING_FUZZ_SEED=<seed>
/// swift test --filter SessionFuzz` replays it.
@Suite("Session fuzzer")
struct SessionFuzzTests {
    static let defaultSeed: UInt64 = 0x1E_4B1E_2026
    static let defaultEvents = 100_000

    /// A second language for switches: the fixture's words, labelled German.
    static let secondPack: LanguagePack = {
        let bytes = FixturePacks.build(wordFrequencies: EnglishFixture.wordFrequencies, corpus: EnglishFixture.corpus) {
            $0.language = "de"
        }
        do { return try LanguagePack(data: Data(bytes)) } catch {
            fatalError("the fixture pack does not open: \(error)")
        }
    }()

    static var seed: UInt64 {
        guard let value = ProcessInfo.processInfo.environment["INKLING_FUZZ_SEED"], !value.isEmpty else {
            return defaultSeed
        }
        if value == "random" {
            return UInt64(truncatingIfNeeded: ContinuousClock.now.hashValue) ^ UInt64.random(in: 0...UInt64.max)
        }
        return UInt64(value) ?? UInt64(value.drop { $0 == "0" || $0 == "x" }, radix: 16) ?? defaultSeed
    }

    static var events: Int {
        ProcessInfo.processInfo.environment["INKLING_FUZZ_EVENTS"].flatMap { Int($0) }.map { max(1, $0) }
            ?? defaultEvents
    }

    @Test func randomUsersAndClientsNeverLoseTextOrLearnSecrets() {
        let seed = Self.seed
        let events = Self.events
        let fuzzer = SessionFuzzer(seed: seed, packs: [RealPack.pack, Self.secondPack])
        let start = ContinuousClock.now
        let failure = fuzzer.run(events: events)
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Int(Double(fuzzer.eventsRun) / max(seconds, 0.001))
        print(
            "session fuzz: seed \(seed), \(fuzzer.eventsRun) of \(events) events, \(rate) events/s, \(failure == nil ? "pass" : "FAIL")"
        )
        print(
            "session fuzz: "
                + fuzzer.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        if let failure { print(failure) }
        #expect(failure == nil, "seed \(seed): see the failure printed above")
    }
}
