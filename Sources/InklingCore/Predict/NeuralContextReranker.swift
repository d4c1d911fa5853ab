/// Carries a `WordLanguageModel`'s state along the document: one GRU step and one normaliser
/// pass per new word, none per key of a word (every query of a word sees the same previous
/// words). The pass keeps every word's logit for its state, so a candidate's log-probability is
/// a look-up; the last `slotCount` states are kept, so a context the engine comes back to (the
/// finished word's check looks at the text before it, then typing goes on after it) costs
/// nothing again. Nothing is allocated while typing.
public final class NeuralContextTracker {
    /// The most previous words the tracker is given; a context that is not a kept one plus one
    /// word (the cursor moved, text was deleted) is replayed from the document start over these.
    public static let historyLimit = 8
    /// How many states (with their logits: 4 bytes per vocabulary word each) are kept (≥ 2).
    public static let slotCount = 3

    /// One kept state: the keys it follows, its hidden vector, its logits and normaliser.
    private final class Slot {
        var keys: [String] = []
        var hidden: [Float]
        var logNormalizer: Float = 0
        let workspace: WordLanguageModel.Workspace
        var lastUse = 0
        /// The model's most likely words after `keys`, best first (vocabulary ids; filled on
        /// the first `likelyWords()` after the state changed, then kept with it).
        var likely: [Int32] = []
        var likelyIsCurrent = false

        init(model: WordLanguageModel, hidden: [Float]) {
            self.hidden = hidden
            workspace = WordLanguageModel.Workspace(for: model)
            keys.reserveCapacity(NeuralContextTracker.historyLimit + 1)
            likely.reserveCapacity(NeuralContextTracker.likelyWordCount + 1)
        }
    }

    /// How many of the model's most likely words `likelyWords()` gives.
    public static let likelyWordCount = 64
    /// Ids never offered as words: the document start, the unknown word, punctuation keys.
    private let notWords: Set<Int>

    public let model: WordLanguageModel
    private let slots: [Slot]
    private var current: Slot
    private var clock = 0
    /// The hidden vector after `<s>` alone (for replays).
    private let startHidden: [Float]
    /// The keys the current state was computed after (the last `historyLimit`).
    public var keys: [String] { current.keys }
    /// GRU steps taken so far (one per word when typing forward).
    public private(set) var stepCount = 0
    /// Normaliser passes so far (one per state not kept).
    public private(set) var normaliserCount = 0

    public init(model: WordLanguageModel) {
        self.model = model
        startHidden = model.startHidden
        let marks = [
            WordLanguageModel.sentenceEndKey, WordLanguageModel.questionKey, WordLanguageModel.exclamationKey,
            WordLanguageModel.commaKey, WordLanguageModel.colonKey,
        ]
        notWords = Set([0, 1] + marks.compactMap { model.id(of: $0) })
        slots = (0..<Self.slotCount).map { _ in Slot(model: model, hidden: model.startHidden) }
        current = slots[0]
        normalise(current)
        // The others are marked unused (keys never match an empty slot: see `update`).
        for slot in slots.dropFirst() { slot.lastUse = -1 }
    }

    /// The most keys a kept state is stepped forward by (a word and the punctuation after it,
    /// for a model that reads punctuation); a longer gap is replayed.
    static let maximumStepsForward = 3

    /// Brings the state to `documentKeys` (the last words of the document, only the last
    /// `historyLimit` count; empty: the document start). Free for a kept state; one step per
    /// key from a kept state up to `maximumStepsForward` keys shorter; a replay otherwise.
    public func update(after documentKeys: [String]) {
        let wanted = documentKeys.suffix(Self.historyLimit)
        clock += 1
        if current.keys.elementsEqual(wanted) {
            current.lastUse = clock
            return
        }
        if let kept = slots.first(where: { $0.lastUse >= 0 && $0.keys.elementsEqual(wanted) }) {
            current = kept
            current.lastUse = clock
            return
        }
        // The least recently used slot takes the new state (never the one it steps from).
        var base: Slot? = nil
        var added = 0
        if !wanted.isEmpty {
            // The fewest keys forward from a kept state.
            search: for count in 1...Self.maximumStepsForward {
                for slot in slots where slot.lastUse >= 0 && Self.extends(slot.keys, by: count, to: wanted) {
                    base = slot
                    added = count
                    break search
                }
            }
        }
        var target = slots[0] === base ? slots[1] : slots[0]
        for slot in slots where slot !== base && slot.lastUse < target.lastUse { target = slot }
        if let base {
            target.hidden.withUnsafeMutableBufferPointer { buffer in
                guard let hidden = buffer.baseAddress else { return }  // never empty: the model's width
                for index in buffer.indices { buffer[index] = base.hidden[index] }
                for key in wanted.suffix(added) { model.step(hidden, id: model.id(stepping: key), target.workspace) }
            }
            stepCount += added
        } else {
            // Replayed over the hidden vectors: the normaliser only at the end.
            target.hidden.withUnsafeMutableBufferPointer { buffer in
                guard let hidden = buffer.baseAddress else { return }  // never empty: the model's width
                for index in buffer.indices { buffer[index] = startHidden[index] }
                for key in wanted { model.step(hidden, id: model.id(stepping: key), target.workspace) }
            }
            stepCount += wanted.count
        }
        target.keys.removeAll(keepingCapacity: true)
        target.keys.append(contentsOf: wanted)
        normalise(target)
        target.lastUse = clock
        current = target
    }

    /// Whether `wanted` is the last `historyLimit` of `keys` followed by `count` more keys.
    private static func extends(_ keys: [String], by count: Int, to wanted: ArraySlice<String>) -> Bool {
        let combined = keys.count + count
        let dropped = max(0, combined - historyLimit)
        guard wanted.count == combined - dropped, dropped <= keys.count else { return false }
        var index = wanted.startIndex
        for key in keys.dropFirst(dropped) {
            if wanted[index] != key { return false }
            index += 1
        }
        return true
    }

    private func normalise(_ slot: Slot) {
        slot.logNormalizer = slot.hidden.withUnsafeBufferPointer { buffer in
            guard let hidden = buffer.baseAddress else { return 0 }  // never empty: the model's width
            return model.normalise(hidden, slot.workspace)
        }
        slot.likelyIsCurrent = false
        normaliserCount += 1
    }

    /// The vocabulary ids of the `likelyWordCount` words the model finds most likely in the
    /// current state, best first (ties: the lower id), punctuation and `<unk>` left out. One
    /// pass over the kept logits per state, then free; nothing allocated after the first.
    public func likelyWords() -> [Int32] {
        let slot = current
        if slot.likelyIsCurrent { return slot.likely }
        let limit = Self.likelyWordCount
        let logits = slot.workspace.logits
        slot.likely.removeAll(keepingCapacity: true)
        // Insertion into a short sorted list: most words fall below its last one at once.
        var worst = -Float.infinity
        for id in 0..<model.vocabularySize {
            let logit = logits[id]
            if slot.likely.count == limit, !(logit > worst) { continue }
            if !logit.isFinite || notWords.contains(id) { continue }
            var position = slot.likely.count
            while position > 0, logits[Int(slot.likely[position - 1])] < logit { position -= 1 }
            slot.likely.insert(Int32(id), at: position)
            if slot.likely.count > limit { slot.likely.removeLast() }
            if slot.likely.count == limit { worst = logits[Int(slot.likely[limit - 1])] }
        }
        slot.likelyIsCurrent = true
        return slot.likely
    }

    /// log P(key | the current state) from the logits its normaliser pass kept, and whether the
    /// key is outside the vocabulary (then `<unk>`'s). Exactly `model.logProbability(of:in:)`.
    public func logProbability(of key: String) -> (value: Float, isUnknown: Bool) {
        let id = model.id(of: key)
        return (current.workspace.logits[id ?? 1] - current.logNormalizer, id == nil)
    }

    /// The state after `documentKeys` (see `update(after:)`).
    public func state(after documentKeys: [String]) -> WordLanguageModel.State {
        update(after: documentKeys)
        return WordLanguageModel.State(hidden: current.hidden, logNormalizer: current.logNormalizer)
    }
}

/// Re-ranks the window with a `RerankerNetwork` that reads the predictor's features plus the
/// word language model's log-probability of the candidate and an unknown-word flag (issue 17):
/// score = the predictor's score + the network's output (for a learned word the word model does
/// not know, the largest output among the words the predictor ranked at or below it).
public final class NeuralContextReranker: CandidateReranker {
    /// Inputs of the network: `RerankFeature`s, then log P(word | document), then 1 if unknown.
    public static let inputCount = RerankFeature.count + 2

    public let network: RerankerNetwork
    public let tracker: NeuralContextTracker
    private let evaluator: RerankerNetwork.Evaluator

    /// The pack whose words `likelyWords` gives (nil: none given).
    private let pack: LanguagePack?
    /// The pack id of each vocabulary word, found on first use: -2 not yet looked up, -1 none.
    private var packIDs: [Int32] = []

    /// Nil when the network does not read exactly `inputCount` inputs. With a `pack`, the word
    /// model's most likely words that the pack has join the window (`likelyWords`).
    public init?(network: RerankerNetwork, model: WordLanguageModel, pack: LanguagePack? = nil) {
        guard network.inputCount == Self.inputCount else { return nil }
        self.network = network
        self.pack = pack
        tracker = NeuralContextTracker(model: model)
        evaluator = RerankerNetwork.Evaluator(network)
    }

    /// The pack ids of the word model's most likely words after `documentKeys`, best first
    /// (at most `NeuralContextTracker.likelyWordCount`; words the pack lacks left out).
    public func likelyWords(after documentKeys: [String]) -> [Int] {
        guard let pack else { return [] }
        tracker.update(after: documentKeys)
        if packIDs.isEmpty { packIDs = [Int32](repeating: -2, count: tracker.model.vocabularySize) }
        var words: [Int] = []
        words.reserveCapacity(NeuralContextTracker.likelyWordCount)
        for id in tracker.likelyWords() {
            let index = Int(id)
            if packIDs[index] == -2 {
                packIDs[index] = pack.id(ofKey: tracker.model.key(index)).map { Int32($0) } ?? -1
            }
            if packIDs[index] >= 0 { words.append(Int(packIDs[index])) }
        }
        return words
    }

    public func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) {
        tracker.update(after: context.documentKeys)
        outputs.removeAll(keepingCapacity: true)
        var usersOwnWords: [Int] = []
        for index in candidates.indices {
            let (logProbability, isUnknown) = tracker.logProbability(of: candidates[index].key)
            let output = candidates[index].features.withUnsafeBufferPointer {
                evaluator.score($0, extra: (logProbability, isUnknown ? 1 : 0))
            }
            outputs.append(output)
            if isUnknown, candidates[index].features[RerankFeature.learnedCount.rawValue] > 0 {
                usersOwnWords.append(index)
            }
        }
        // A learned word outside the word model's vocabulary (a name, jargon: the user's own
        // words) gets the largest adjustment of the words the predictor ranked at or below it:
        // the model knows nothing of it beyond "unknown", so it never moves it below a word the
        // predictor ranked lower; what was learned decides. (The window's largest adjustment did
        // the same but lifted it over better words too: over `the`, once the window held the
        // word model's favourites that the network lifts from far below.)
        var adjusted = outputs
        for index in usersOwnWords {
            var largest = -Float.infinity
            for other in candidates.indices
            where !candidates[other].isLikelyWord && candidates[other].score <= candidates[index].score
                && outputs[other].isFinite
            {
                largest = max(largest, outputs[other])
            }
            adjusted[index] = largest
        }
        for index in candidates.indices {
            // A network that overflows (weights a pack may hold) leaves the predictor's order.
            guard adjusted[index].isFinite else { continue }
            candidates[index].score += adjusted[index]
        }
    }

    /// The network's output for each window candidate (kept between queries: no allocation).
    private var outputs: [Float] = []
}

extension NeuralContextReranker {
    /// The pack's neural re-ranker: nil unless it has both the word model and a network that
    /// reads the features plus the word model's inputs (older packs keep the n-gram order).
    public convenience init?(pack: LanguagePack) {
        guard let network = pack.rerankerNetwork, let model = pack.wordLanguageModel else { return nil }
        self.init(network: network, model: model, pack: pack)
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
