/// Carries a `WordLanguageModel`'s state along the document: one GRU step and one normaliser
/// pass per new word, none per key of a word (every query of a word sees the same previous
/// words). The pass keeps every word's logit for the current state, so a candidate's
/// log-probability is a look-up; nothing is allocated while typing forward.
public final class NeuralContextTracker {
    /// The most previous words the tracker is given; a context that is not the last one plus one
    /// word (the cursor moved, text was deleted) is replayed from the document start over these.
    public static let historyLimit = 8

    public let model: WordLanguageModel
    /// The keys the current state was computed after (the last `historyLimit`).
    public private(set) var keys: [String] = []
    private let workspace: WordLanguageModel.Workspace
    /// The hidden vector after `keys`, and the one after `<s>` alone (for replays).
    private var hidden: [Float]
    private let startHidden: [Float]
    /// The normaliser of the distribution after `keys`; `workspace.logits` holds its logits.
    private var logNormalizer: Float = 0
    /// GRU steps taken so far (one per word when typing forward).
    public private(set) var stepCount = 0
    /// Normaliser passes so far (one per state).
    public private(set) var normaliserCount = 0

    public init(model: WordLanguageModel) {
        self.model = model
        workspace = WordLanguageModel.Workspace(for: model)
        startHidden = model.startHidden
        hidden = startHidden
        keys.reserveCapacity(Self.historyLimit + 1)
        normalise()
    }

    /// Brings the state to `documentKeys` (the last words of the document, oldest first, only
    /// the last `historyLimit` count; empty: the document start). Cheap when nothing changed;
    /// one step when one word was added; a replay otherwise.
    public func update(after documentKeys: [String]) {
        let wanted = documentKeys.suffix(Self.historyLimit)
        if wanted.elementsEqual(keys) { return }
        if let last = wanted.last, extendsByOne(wanted) {
            hidden.withUnsafeMutableBufferPointer { model.step($0.baseAddress!, id: model.id(stepping: last), workspace) }
            stepCount += 1
            keys.append(last)
            if keys.count > Self.historyLimit { keys.removeFirst() }
        } else {
            // Replayed over the hidden vectors: the normaliser only at the end.
            hidden.withUnsafeMutableBufferPointer { buffer in
                for index in buffer.indices { buffer[index] = startHidden[index] }
                for key in wanted { model.step(buffer.baseAddress!, id: model.id(stepping: key), workspace) }
            }
            stepCount += wanted.count
            keys.removeAll(keepingCapacity: true)
            keys.append(contentsOf: wanted)
        }
        normalise()
    }

    /// Whether `wanted` is the last `historyLimit` of `keys` plus one more word.
    private func extendsByOne(_ wanted: ArraySlice<String>) -> Bool {
        let combined = keys.count + 1
        let dropped = max(0, combined - Self.historyLimit)
        guard wanted.count == combined - dropped else { return false }
        var index = wanted.startIndex
        for key in keys.dropFirst(dropped) {
            if wanted[index] != key { return false }
            index += 1
        }
        return true
    }

    private func normalise() {
        logNormalizer = hidden.withUnsafeBufferPointer { model.normalise($0.baseAddress!, workspace) }
        normaliserCount += 1
    }

    /// log P(key | the current state) from the logits the last normaliser pass kept, and whether
    /// the key is outside the vocabulary (then `<unk>`'s). Exactly `model.logProbability(of:in:)`.
    public func logProbability(of key: String) -> (value: Float, isUnknown: Bool) {
        let id = model.id(of: key)
        return (workspace.logits[id ?? 1] - logNormalizer, id == nil)
    }

    /// The state after `documentKeys` (see `update(after:)`).
    public func state(after documentKeys: [String]) -> WordLanguageModel.State {
        update(after: documentKeys)
        return WordLanguageModel.State(hidden: hidden, logNormalizer: logNormalizer)
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
    private let evaluator: RerankerNetwork.Evaluator

    /// Nil when the network does not read exactly `inputCount` inputs.
    public init?(network: RerankerNetwork, model: WordLanguageModel) {
        guard network.inputCount == Self.inputCount else { return nil }
        self.network = network
        tracker = NeuralContextTracker(model: model)
        evaluator = RerankerNetwork.Evaluator(network)
    }

    /// Computes the state after `documentKeys` now (after a word is committed, while the engine
    /// is idle), so that the next query only looks its candidates up.
    public func prepare(documentKeys: [String]) { tracker.update(after: documentKeys) }

    public func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) {
        tracker.update(after: context.documentKeys)
        for index in candidates.indices {
            let (logProbability, isUnknown) = tracker.logProbability(of: candidates[index].key)
            let output = candidates[index].features.withUnsafeBufferPointer {
                evaluator.score($0, extra: (logProbability, isUnknown ? 1 : 0))
            }
            // A network that overflows (weights a pack may hold) leaves the predictor's order.
            if output.isFinite { candidates[index].score += output }
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
            _ = try WordLanguageModel(section: wordModel)
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
