import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// Hyphenated compounds completed part by part (issue 17).
@Suite("CompoundCompletion")
struct CompoundCompletionTests {
    /// A pack with the parts of compounds as words, and one compound (`well-known`) whole.
    static let pack: LanguagePack = {
        let words = """
            the\t0.2\nof\t0.1\na\t0.1\nis\t0.05\nstate\t0.02\nart\t0.01\nartist\t0.02\nself\t0.01
            replication\t0.002\nreply\t0.01\nwell\t0.02\nknown\t0.01\nwell-known\t0.001\nbrown\t0.01\nbag\t0.001
            """
        let corpus = """
            The state of the art is high. A state of the art design. It is the state of the art.
            The art of the state.
            Self replication is known. The replication of the state. Well known is the art.
            """
        do {
            return try LanguagePack(data: Data(FixturePacks.build(wordFrequencies: words, corpus: corpus)))
        } catch {
            fatalError("the compound fixture does not open: \(error)")
        }
    }()

    func suggest(_ before: String, count: Int = 5) -> [String] {
        Predictor(pack: Self.pack).suggest(before: before, count: count)
    }

    @Test("the last part of a compound the dictionary lacks is completed after its earlier parts")
    func partByPart() {
        // The dictionary has no word starting with "state-of-the-a": the trigram "of the" → "art".
        #expect(suggest("a state-of-the-a").first == "state-of-the-art")
        #expect(suggest("a state-of-the-").first == "state-of-the-art")
        #expect(suggest("Self-repl").contains("Self-replication"))
        #expect(suggest("Self-repl").allSatisfy { $0.hasPrefix("Self-repl") })
        #expect(suggest("self-rep").contains("self-replication"))
        #expect(suggest("self-rep").contains("self-reply"))
    }

    @Test("compounds the dictionary has come first; one part and nothing typed offers no guess")
    func dictionaryFirst() {
        #expect(suggest("a well-kn") == ["well-known"])
        #expect(suggest("a well-") == ["well-known"])
        #expect(suggest("a brown-").isEmpty)
        #expect(suggest("a brown-b").contains("brown-bag"))
        // No hyphen: nothing changes.
        #expect(suggest("the ar") == Predictor(pack: Self.pack).suggest(before: "the ar", count: 5))
    }

    @Test("a compound query leaves the predictor's document as it was")
    func documentUnchanged() {
        let predictor = Predictor(pack: Self.pack)
        let fresh = Predictor(pack: Self.pack)
        _ = predictor.suggest(before: "The state of the art is high. Self-repl", count: 5)
        for before in ["The state of the art is high. Self-replication ", "The state of the art is high. A st"] {
            #expect(predictor.suggestions(before: before, count: 5) == fresh.suggestions(before: before, count: 5))
        }
    }

    @Test("split: head up to the last hyphen, the rest as the tail")
    func split() throws {
        let stateOf = try #require(CompoundCompletion.split("state-of-the-a"))
        #expect(stateOf.head == "state-of-the-" && stateOf.tail == "a")
        let well = try #require(CompoundCompletion.split("well-"))
        #expect(well.head == "well-" && well.tail.isEmpty)
        #expect(CompoundCompletion.split("well") == nil)
        #expect(CompoundCompletion.split("koi8-r") == nil)
        #expect(!CompoundCompletion.applies(head: "brown-", tail: ""))
        #expect(CompoundCompletion.applies(head: "state-of-", tail: ""))
    }
}
