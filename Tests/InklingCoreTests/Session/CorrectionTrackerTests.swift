import InklingCore
import Testing

@Suite("Correction tracker: flags follow the cursor and fixes are planned after proof")
struct CorrectionTrackerTests {
    static func flag(_ word: String, _ fix: String) -> TypoFlag {
        TypoFlag(word: word, replacements: [fix], explanation: "", margin: 1)
    }

    @Test func flagsAreNewestFirstAndAtMostNine() {
        var tracker = CorrectionTracker()
        for index in 0..<12 {
            tracker.add(Self.flag("w\(index)", "x"), before: "", tail: String(repeating: " ", count: 12 - index))
        }
        #expect(tracker.flags.count == 9)
        #expect(tracker.flags.first?.flag.word == "w11")
    }

    @Test func aKeptWordIsNeverFlaggedAgain() {
        var tracker = CorrectionTracker()
        let id = tracker.add(Self.flag("teh", "the"), before: "I saw ", tail: " ")
        tracker.keep(id: id ?? -1)
        #expect(tracker.flags.isEmpty)
        #expect(tracker.add(Self.flag("Teh", "The"), before: "", tail: "") == nil, "kept regardless of case")
    }

    @Test func insertedTextGrowsTheTailUntilOutOfReach() {
        var tracker = CorrectionTracker()
        tracker.reach = 5
        tracker.add(Self.flag("teh", "the"), before: "", tail: "")
        tracker.inserted(" cat")
        #expect(tracker.flags.first?.tail == " cat")
        tracker.inserted("s!")
        #expect(tracker.flags.isEmpty, "six characters away")
    }

    @Test func deletingIntoTheWordExpiresTheFlag() {
        var tracker = CorrectionTracker()
        tracker.add(Self.flag("teh", "the"), before: "", tail: " ")
        tracker.deletedBackward()
        #expect(tracker.flags.first?.tail == "")
        tracker.deletedBackward()
        #expect(tracker.flags.isEmpty)
    }

    @Test func aPlanDeletesToTheWordStartAndReinsertsTheTail() throws {
        var tracker = CorrectionTracker()
        let added = tracker.add(Self.flag("teh", "the"), before: "I saw ", tail: " cat ")
        let id = try #require(added)
        let plan = tracker.plan(id: id, before: "I saw teh cat ")
        #expect(plan == .success([.deleteSurroundingText(offset: -8, count: 8), .commitText("the cat ")]))
        #expect(tracker.plan(id: id, before: "I saw the cat ") == .failure(.textChanged), "the word is not there")
        #expect(tracker.plan(id: id + 1, before: "I saw teh cat ") == .failure(.textChanged), "no such flag")
    }

    @Test func verifyKeepsOnlyProvenFlags() {
        var tracker = CorrectionTracker()
        tracker.add(Self.flag("teh", "the"), before: "I saw ", tail: " ")
        tracker.verify(before: "I saw teh ")
        #expect(tracker.flags.count == 1)
        tracker.verify(before: "You saw tea ")
        #expect(tracker.flags.isEmpty)
    }

    @Test func applyingAFixRewritesTheOtherFlags() throws {
        var tracker = CorrectionTracker()
        tracker.add(Self.flag("teh", "the"), before: "", tail: " cat adn ")
        let added = tracker.add(Self.flag("adn", "and"), before: "teh cat ", tail: " ")
        let newer = try #require(added)
        tracker.applied(id: newer, replacement: "and")
        #expect(tracker.flags.first?.tail == " cat and ", "the older flag's tail holds the fixed word")
    }
}
