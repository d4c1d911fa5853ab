/// Carries a `WordLanguageModel`'s state along the document: one GRU step per new word, none
/// per key of a word (every query of a word sees the same previous words).
public final class NeuralContextTracker {
    /// The most previous words the tracker is given; a context that is not the last one plus one
    /// word (the cursor moved, text was deleted) is replayed from the document start over these.
    public static let historyLimit = 8

    public let model: WordLanguageModel
    /// The keys the current state was computed after (the last `historyLimit`).
    public private(set) var keys: [String] = []
    private var state: WordLanguageModel.State
    /// GRU steps taken so far (one per word when typing forward).
    public private(set) var stepCount = 0

    public init(model: WordLanguageModel) {
        self.model = model
        state = model.startState
    }

    /// The state after `documentKeys` (the last words of the document, oldest first, at most
    /// `historyLimit`; empty: the document start).
    public func state(after documentKeys: [String]) -> WordLanguageModel.State {
        let wanted = Array(documentKeys.suffix(Self.historyLimit))
        if wanted == keys { return state }
        if let last = wanted.last, Array((keys + [last]).suffix(Self.historyLimit)) == wanted {
            state = model.advance(state, key: last)
            stepCount += 1
        } else {
            // Replayed over the hidden vectors: the normaliser (most of a step's cost) only at the end.
            var hidden = model.startHidden
            for key in wanted { hidden = model.step(hidden, id: model.id(stepping: key)) }
            state = model.state(hidden: hidden)
            stepCount += wanted.count
        }
        keys = wanted
        return state
    }
}

/// Re-ranks the window with a `RerankerNetwork` that reads the predictor's features plus the
/// word language model's log-probability of the candidate and an unknown-word flag (issue 17):
/// score = the predictor's score + the network's output.
public final class NeuralContextReranker: CandidateReranker {
    /// Inputs of the network: `RerankFeature`s, then log P(word | document), then 1 if unknown.
    public static let inputCount = RerankFeature.count + 2

    public let network: RerankerNetwork
    public let tracker: NeuralContextTracker

    /// Nil when the network does not read exactly `inputCount` inputs.
    public init?(network: RerankerNetwork, model: WordLanguageModel) {
        guard network.inputCount == Self.inputCount else { return nil }
        self.network = network
        tracker = NeuralContextTracker(model: model)
    }

    public func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) {
        let state = tracker.state(after: context.documentKeys)
        for index in candidates.indices {
            let (logProbability, isUnknown) = tracker.model.logProbability(of: candidates[index].key, in: state)
            candidates[index].score += network.score(candidates[index].features + [logProbability, isUnknown ? 1 : 0])
        }
    }
}

extension NeuralContextReranker {
    /// The pack's neural re-ranker: nil unless it has both the word model and a network that
    /// reads the features plus the word model's inputs (older packs keep the n-gram order).
    public convenience init?(pack: LanguagePack) {
        guard let network = pack.rerankerNetwork, let model = pack.wordLanguageModel else { return nil }
        self.init(network: network, model: model)
    }

    /// Why a pair of `NGRU` and `NRRK` section bytes cannot ship in a pack (nil: they can).
    public static func problem(wordModel: [UInt8], network: [UInt8]) -> String? {
        do {
            _ = try wordModel.withUnsafeBytes { raw throws(PackError) in try WordLanguageModel(section: raw) }
            let decoded = try network.withUnsafeBytes { raw throws(PackError) in try RerankerNetwork(section: raw) }
            guard decoded.inputCount == inputCount else {
                return "the network reads \(decoded.inputCount) inputs, the re-ranker gives \(inputCount)"
            }
            return nil
        } catch {
            return "\(error)"
        }
    }
}
