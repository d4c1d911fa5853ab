import InklingTestSupport
import Testing

@testable import InklingCore

/// The predictor's re-ranking hook (issue 17): what a re-ranker sees and what it may change.
@Suite("CandidateReranker")
struct CandidateRerankerTests {
    let pack = FixturePacks.english

    /// Records every window and context; optionally turns the order around.
    final class Probe: CandidateReranker {
        var reverses = false
        var windows: [[RerankCandidate]] = []
        var contexts: [RerankContext] = []
        func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) {
            windows.append(candidates)
            contexts.append(context)
            if reverses {
                for index in candidates.indices { candidates[index].score = -candidates[index].score }
            }
        }
    }

    @Test("without a re-ranker the order is the predictor's own; a pass-through re-ranker keeps it")
    func passThroughKeepsOrder() {
        let plain = Predictor(pack: pack).suggest(before: "I think th", count: 8)
        let predictor = Predictor(pack: pack)
        let probe = Probe()
        predictor.reranker = probe
        #expect(predictor.suggest(before: "I think th", count: 8) == plain)
        #expect(probe.windows.count == 1)
    }

    @Test("the re-ranker's scores decide the order, over the same words")
    func scoresDecideOrder() {
        let plain = Predictor(pack: pack).suggest(before: "I think th", count: 32)
        let predictor = Predictor(pack: pack)
        let probe = Probe()
        probe.reverses = true
        predictor.reranker = probe
        let reversed = predictor.suggest(before: "I think th", count: 32)
        #expect(plain.count > 3)
        #expect(Set(reversed) == Set(plain))
        #expect(reversed.first == plain.last)
    }

    @Test("every window candidate comes with the full feature vector and its predictor score")
    func featuresAndContext() throws {
        let predictor = Predictor(pack: pack)
        let probe = Probe()
        predictor.reranker = probe
        _ = predictor.suggest(before: "I think th", count: 3)
        let window = try #require(probe.windows.first)
        #expect(!window.isEmpty && window.count <= PredictorOptions().windowSize)
        for (rank, candidate) in window.enumerated() {
            #expect(candidate.features.count == RerankFeature.count)
            #expect(candidate.features[RerankFeature.total.rawValue] == candidate.score)
            #expect(candidate.key.hasPrefix("th"))
            #expect(candidate.features[RerankFeature.typedLength.rawValue] == 2)
            #expect(
                candidate.features[RerankFeature.remainingLength.rawValue]
                    == Float(candidate.key.unicodeScalars.count - 2))
            #expect(candidate.features[RerankFeature.nextWord.rawValue] == 0)
            // The window arrives in word-score order.
            #expect(candidate.features[RerankFeature.windowRank.rawValue] == Float(rank) / 32)
        }
        let context = try #require(probe.contexts.first)
        #expect(context.partialKey == "th")
        #expect(context.previousKeys.last == "think")
        #expect(!context.startsSentence)
    }

    /// Proposes fixed next words (the way the neural re-ranker proposes its model's best).
    final class Proposer: CandidateReranker {
        var proposals: [String] = []
        var windows: [[RerankCandidate]] = []
        var asked: [[String]] = []
        func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) { windows.append(candidates) }
        func nextWordProposals(after documentKeys: [String], limit: Int) -> [String] {
            asked.append(documentKeys)
            return Array(proposals.prefix(limit))
        }
    }

    /// A pack word the next word's window after `text` lacks (the test needs one).
    func wordOutsideWindow(after text: String) throws -> String {
        let predictor = Predictor(pack: pack)
        let probe = Probe()
        predictor.reranker = probe
        _ = predictor.suggest(before: text, count: 3)
        let window = Set(try #require(probe.windows.last).map(\.key))
        let rare = ["zebra", "xylophone", "umbrella", "quantum", "yesterday", "weather", "village", "orange"]
        return try #require(rare.first { pack.id(ofKey: $0) != nil && !window.contains($0) })
    }

    @Test("the re-ranker's next-word proposals join the window when they are pack words, in word-score order")
    func proposalsJoinTheNextWordWindow() throws {
        let text = "I think that the "
        let outside = try wordOutsideWindow(after: text)
        let predictor = Predictor(pack: pack)
        let proposer = Proposer()
        proposer.proposals = ["qzxqzx", outside, "the"]  // not a pack word; a new one; one already there
        predictor.reranker = proposer
        _ = predictor.suggest(before: text, count: 3)
        let window = try #require(proposer.windows.last)
        let keys = window.map(\.key)
        #expect(keys.contains(outside))
        #expect(!keys.contains("qzxqzx"), "the model never adds a word the dictionary lacks")
        #expect(keys.count == PredictorOptions().windowSize + 1, "one word added, none removed")
        #expect(Set(keys).count == keys.count, "a proposal already in the window is not added twice")
        #expect(proposer.asked.last == ["i", "think", "that", "the"])
        let scores = window.map { $0.features[RerankFeature.wordScore.rawValue] }
        #expect(scores == scores.sorted(by: >), "the window stays in word-score order")
        for (rank, candidate) in window.enumerated() {
            #expect(candidate.features[RerankFeature.windowRank.rawValue] == Float(rank) / 32)
        }
        // The re-ranker may now put it first.
        final class Promoter: CandidateReranker {
            let word: String
            init(_ word: String) { self.word = word }
            func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) {
                for index in candidates.indices where candidates[index].key == word { candidates[index].score = 100 }
            }
            func nextWordProposals(after documentKeys: [String], limit: Int) -> [String] { [word] }
        }
        let promoted = Predictor(pack: pack)
        promoted.reranker = Promoter(outside)
        #expect(promoted.suggest(before: text, count: 3).first == outside)
        // Off: the window is the word model's alone.
        var options = PredictorOptions()
        options.neuralProposals = 0
        let off = Predictor(pack: pack, options: options)
        off.reranker = Promoter(outside)
        #expect(!off.suggest(before: text, count: 32).contains(outside))
    }

    @Test("proposals are for the next word only, and the first letter's window is the same with or without them")
    func proposalsLeaveLettersAlone() throws {
        let text = "I think that the "
        let outside = try wordOutsideWindow(after: text)
        let letter = String(outside.prefix(1))
        var windows: [[[String]]] = []
        for proposals in [[], [outside]] {
            // Next word, then its first two letters (narrowed from the next word's pool).
            let predictor = Predictor(pack: pack)
            let proposer = Proposer()
            proposer.proposals = proposals
            predictor.reranker = proposer
            _ = predictor.suggest(before: text, count: 3)
            _ = predictor.suggest(before: text + letter, count: 3)
            _ = predictor.suggest(before: text + outside.prefix(2), count: 3)
            windows.append(proposer.windows.map { $0.map(\.key) })
            #expect(proposer.asked.count == 1, "asked once, for the next word")
        }
        #expect(windows[0].count == 3 && windows[1].count == 3)
        #expect(windows[0][0] != windows[1][0])
        #expect(Array(windows[0].dropFirst()) == Array(windows[1].dropFirst()))
    }

    @Test("setting a re-ranker drops answers computed without it")
    func settingDropsCachedAnswers() {
        let predictor = Predictor(pack: pack)
        let plain = predictor.suggest(before: "I think th", count: 32)
        let probe = Probe()
        probe.reverses = true
        predictor.reranker = probe
        #expect(predictor.suggest(before: "I think th", count: 32) != plain)
    }
}
