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

    /// Records every window and gives fixed pack words as its model's likely next words.
    final class Proposer: CandidateReranker {
        var likely: [Int] = []
        var windows: [[RerankCandidate]] = []
        func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) { windows.append(candidates) }
        func likelyWords(after documentKeys: [String]) -> [Int] { likely }
    }

    /// The window the re-ranker sees for `before`, with these likely words and options.
    func window(_ before: String, likely: [Int], options: PredictorOptions = PredictorOptions()) -> [RerankCandidate] {
        let predictor = Predictor(pack: pack, options: options)
        let proposer = Proposer()
        proposer.likely = likely
        predictor.reranker = proposer
        _ = predictor.suggest(before: before, count: 3)
        return proposer.windows.last ?? []
    }

    @Test("the re-ranker's likely words join the next word's window in word-score order, at most nextWordProposals")
    func likelyWordsJoinTheNextWordsWindow() throws {
        let plain = window("I think ", likely: []).map(\.key)
        #expect(plain.count == PredictorOptions().nextWordWindowSize)
        // Pack words the dictionary's order left out (the rarest), and one it has.
        let outside = (0..<pack.wordCount).filter { !plain.contains(pack.key($0)) }
            .sorted { (pack.logPrior($0), $1) < (pack.logPrior($1), $0) }.prefix(10)
        let inside = try #require(pack.id(ofKey: plain[5]))
        let joined = window("I think ", likely: [inside] + outside)
        let limit = PredictorOptions().nextWordProposals
        #expect(limit < outside.count)
        #expect(Set(joined.map(\.key)) == Set(plain + outside.prefix(limit).map { pack.key($0) }))
        let wordScores = joined.map { $0.features[RerankFeature.wordScore.rawValue] }
        #expect(wordScores == wordScores.sorted(by: >))
        for (rank, candidate) in joined.enumerated() {
            #expect(candidate.features[RerankFeature.windowRank.rawValue] == Float(rank) / Float(32))
        }
        // None while a word is typed, and none when switched off.
        #expect(window("I think th", likely: Array(outside)).map(\.key) == window("I think th", likely: []).map(\.key))
        var off = PredictorOptions()
        off.nextWordProposals = 0
        #expect(window("I think ", likely: Array(outside), options: off).map(\.key) == plain)
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

    @Test("the next word has its own window size; a typed prefix keeps the typing window's")
    func nextWordWindowSize() throws {
        var options = PredictorOptions()
        options.windowSize = 4
        options.nextWordWindowSize = 40
        let predictor = Predictor(pack: pack, options: options)
        let probe = Probe()
        predictor.reranker = probe
        _ = predictor.suggest(before: "I think ", count: 3)
        let nextWord = try #require(probe.windows.last)
        #expect(nextWord.count > 32 && nextWord.count <= 40)
        #expect(nextWord.allSatisfy { $0.features[RerankFeature.nextWord.rawValue] == 1 })
        // The rank feature stays on the typing window's scale, so ranks past it exceed 1.
        #expect(nextWord.last?.features[RerankFeature.windowRank.rawValue] == Float(nextWord.count - 1) / 4)
        _ = predictor.suggest(before: "I think t", count: 3)
        let typed = try #require(probe.windows.last)
        #expect(typed.count == 4)
        #expect(typed.allSatisfy { $0.key.hasPrefix("t") })
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
