import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// The word GRU's inference, its `NGRU` pack section and the re-ranker that reads it (issue 17),
/// checked against PyTorch's outputs for a tiny model (`NeuralFixture`, from
/// `scripts/neural/export_sections.py --swift-fixture`).
@Suite("WordLanguageModel")
struct WordLanguageModelTests {
    static func model() throws -> WordLanguageModel {
        try NeuralFixture.wordModelSection.withUnsafeBytes { raw throws(PackError) in
            try WordLanguageModel(section: raw)
        }
    }

    static func decodeError(_ bytes: [UInt8]) -> PackError? {
        do {
            _ = try bytes.withUnsafeBytes { raw throws(PackError) in try WordLanguageModel(section: raw) }
            return nil
        } catch let error as PackError {
            return error
        } catch {
            return .malformed(tag: "not a PackError", reason: "\(error)")
        }
    }

    static func put(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) {
            for (index, byte) in $0.enumerated() { bytes[offset + index] = byte }
        }
    }

    /// Recomputes the checksum after an edit, so that the edit itself is what gets refused.
    static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        put(CRC32.checksum(Array(bytes[20...])), at: 16, in: &bytes)
        return bytes
    }

    @Test("log-probabilities match PyTorch's float64 GRU on the same int8 weights, word by word")
    func parityWithPyTorch() throws {
        let model = try Self.model()
        #expect(model.vocabularySize == 12)
        #expect(model.dimension == 8)
        var state = model.startState
        for (step, expected) in NeuralFixture.logProbabilities.enumerated() {
            if step > 0 { state = model.advance(state, key: NeuralFixture.words[step - 1]) }
            for (query, value) in zip(NeuralFixture.queries, expected) {
                let got = model.logProbability(of: query, in: state)
                #expect(abs(got.value - value) < 2e-4, "after \(step) words, \(query): \(got.value) vs \(value)")
                #expect(got.isUnknown == (query == "zebra"))
            }
        }
    }

    @Test(
        "the int8 matrices read in place give the dequantised log-softmax: 16 and 40 dimensions, 21 words, every byte")
    func int8OutputMatchesDequantised() throws {
        // Rows that end inside a 32-column load, 21 words (not a multiple of 8), and the int8
        // values −128 … 127 all present: a layout or unpacking slip shows as a wrong log-probability.
        for dimension in [16, 40] { try Self.checkInt8Output(dimension: dimension) }
    }

    /// `int8OutputMatchesDequantised` at one dimension (16: one partial 32-column load per row;
    /// 40: a full one and a partial one).
    static func checkInt8Output(dimension: Int) throws {
        let vocabulary = 21
        let gates = 3 * dimension
        func bytes(_ count: Int, _ seed: Int) -> [Int8] {
            (0..<count).map { Int8(truncatingIfNeeded: ($0 * 37 + seed * 11) % 256 - 128) }
        }
        let keys = ["<s>", "<unk>"] + (2..<vocabulary).map { "w\($0)" }
        let embedding = bytes(vocabulary * dimension, 1)
        let embeddingScales = (0..<vocabulary).map { 0.004 + 0.0003 * Float($0) }
        let outputBias = (0..<vocabulary).map { Float($0 % 5) * 0.3 - 0.6 }
        let model = WordLanguageModel(
            WordLanguageModel.Quantized(
                dimension: dimension, keys: keys, embeddingScales: embeddingScales, embedding: embedding,
                inputScales: [Float](repeating: 0.01, count: gates), inputWeights: bytes(gates * dimension, 2),
                hiddenScales: [Float](repeating: 0.012, count: gates), hiddenWeights: bytes(gates * dimension, 3),
                inputBias: (0..<gates).map { Float($0 % 7) * 0.05 }, hiddenBias: [Float](repeating: 0.1, count: gates),
                outputBias: outputBias))
        let state = model.advance(model.advance(model.startState, key: "w5"), key: "w17")
        #expect(state.hidden.contains { abs($0) > 0.05 }, "a hidden vector near zero would hide the matrix")
        let logits = (0..<vocabulary).map { word in
            (0..<dimension).reduce(Double(outputBias[word])) {
                $0 + Double(embedding[word * dimension + $1]) * Double(embeddingScales[word]) * Double(state.hidden[$1])
            }
        }
        let largest = logits.max() ?? 0
        let logNormalizer = largest + Math.log(logits.reduce(0) { $0 + Math.exp($1 - largest) })
        for (word, key) in keys.enumerated() {
            let got = model.logProbability(of: key, in: state).value
            #expect(abs(Double(got) - (logits[word] - logNormalizer)) < 1e-4, "\(key): \(got)")
        }
    }

    @Test("the distribution sums to one")
    func normalised() throws {
        let model = try Self.model()
        let state = model.advance(model.startState, key: "the")
        let total = model.keys.reduce(Float(0)) { $0 + Math.exp(model.logProbability(of: $1, in: state).value) }
        #expect(abs(total - 1) < 1e-4)
    }

    @Test("the section re-encodes to the same bytes")
    func roundTrip() throws {
        let quantized = try NeuralFixture.wordModelSection.withUnsafeBytes { raw throws(PackError) in
            try WordLanguageModel.quantized(section: raw)
        }
        #expect(quantized.encoded() == NeuralFixture.wordModelSection)
        #expect(quantized.keys.prefix(3) == ["<s>", "<unk>", "the"])
    }

    @Test("a damaged section is refused: truncation, trailing bytes, checksum, version, shapes, keys, weights")
    func damagedSections() throws {
        let good = NeuralFixture.wordModelSection
        #expect(Self.decodeError(good) == nil)
        for length in [0, 3, 19, 20, 24, good.count / 2, good.count - 1] {
            #expect(Self.decodeError(Array(good.prefix(length))) != nil, "truncated to \(length)")
        }
        #expect(Self.decodeError(Self.resealed(good + [0, 0, 0, 0])) != nil)
        var flipped = good
        flipped[good.count - 7] ^= 0x10  // a bit of the output bias: only the checksum sees it
        guard case .malformed(_, let reason) = Self.decodeError(flipped) else {
            Issue.record("a flipped bit was not refused")
            return
        }
        #expect(reason.contains("checksum"))
        let blobStart = 20
        let keysEnd =
            blobStart
            + NeuralFixture.wordModelSection[12..<16].enumerated().reduce(0) {
                $0 | Int($1.element) << (8 * $1.offset)
            }
        let floatOffsetOfFirstScale = (keysEnd + 3) / 4 * 4
        let edits: [(String, (inout [UInt8]) -> Void)] = [
            ("version 2", { Self.put(2, at: 0, in: &$0) }),
            ("vocabulary of one", { Self.put(1, at: 4, in: &$0) }),
            ("huge vocabulary", { Self.put(1 << 30, at: 4, in: &$0) }),
            ("dimension 12 (not a multiple of 8)", { Self.put(12, at: 8, in: &$0) }),
            ("dimension 16", { Self.put(16, at: 8, in: &$0) }),
            ("huge key blob", { Self.put(1 << 30, at: 12, in: &$0) }),
            // Keys: "<s>\n<unk>\nthe\ncat\n…": "cat" (bytes 14–16) becomes a second "the".
            ("duplicate key", { $0.replaceSubrange((blobStart + 14)..<(blobStart + 17), with: Array("the".utf8)) }),
            ("first key is not <s>", { $0[blobStart + 1] = UInt8(ascii: "x") }),
            ("a key is not UTF-8", { $0[blobStart + 10] = 0xFF }),
            ("NaN scale", { Self.put(Float.nan.bitPattern, at: floatOffsetOfFirstScale, in: &$0) }),
            ("infinite output bias", { Self.put(Float.infinity.bitPattern, at: $0.count - 4, in: &$0) }),
        ]
        for (name, edit) in edits {
            var bytes = good
            edit(&bytes)
            guard case .malformed(let tag, _) = Self.decodeError(Self.resealed(bytes)) else {
                Issue.record("\(name): not refused as malformed")
                continue
            }
            #expect(tag == "NGRU", "\(name)")
        }
    }

    @Test("two keys that are the same are refused")
    func duplicateKeys() throws {
        var quantized = try NeuralFixture.wordModelSection.withUnsafeBytes { raw throws(PackError) in
            try WordLanguageModel.quantized(section: raw)
        }
        quantized.keys[3] = "the"
        #expect(Self.decodeError(quantized.encoded()) != nil)
        quantized.keys[3] = "c\nt"
        #expect(Self.decodeError(quantized.encoded()) != nil)
    }

    @Test("the tracker takes one step per new word and replays after a jump, with the same states")
    func trackerSteps() throws {
        let model = try Self.model()
        let tracker = NeuralContextTracker(model: model)
        #expect(tracker.state(after: []) == model.startState)
        #expect(tracker.stepCount == 0)
        var replayed = model.startState
        var history: [String] = []
        let text = ["the", "cat", "sat", "on", "the", "mat", "and", "it", "ran", "a", "dog", "ran", "on"]
        for word in text {
            history.append(word)
            replayed = model.advance(replayed, key: word)
            let before = tracker.stepCount
            let normalisersBefore = tracker.normaliserCount
            let keys = Array(history.suffix(NeuralContextTracker.historyLimit))
            #expect(tracker.state(after: keys) == replayed)
            #expect(tracker.state(after: keys) == replayed)  // every key of the next word: no step
            #expect(tracker.stepCount == before + 1, "after \(history.count) words")
            #expect(tracker.normaliserCount == normalisersBefore + 1, "one normaliser pass per state")
        }
        // The cursor moved back one word: that state is still kept (as computed, across all the
        // words before it), so no step.
        var carried = model.startState
        for word in history.dropLast() { carried = model.advance(carried, key: word) }
        let steps = tracker.stepCount
        #expect(tracker.state(after: Array(history.dropLast().suffix(NeuralContextTracker.historyLimit))) == carried)
        #expect(tracker.stepCount == steps)
        // Back further than the kept states: replayed from the document start over the given words.
        let back = Array(history.dropLast(NeuralContextTracker.slotCount + 1).suffix(NeuralContextTracker.historyLimit))
        var expected = model.startState
        for key in back { expected = model.advance(expected, key: key) }
        #expect(tracker.state(after: back) == expected)
        #expect(tracker.state(after: []) == model.startState)
    }

    /// A word and the punctuation after it arrive together (`evening. ` after `evening`): the
    /// kept state steps over both instead of replaying the last `historyLimit` keys, so the
    /// state still carries the whole line.
    @Test("the tracker steps a kept state over up to three new keys, and replays beyond")
    func trackerStepsSeveralKeys() throws {
        let model = try Self.model()
        let tracker = NeuralContextTracker(model: model)
        let text = ["the", "cat", "sat", "on", "the", "mat", "and", "it", "ran", "a", "dog", "ran", "on", "the", "cat"]
        var carried = model.startState
        var history: [String] = []
        var index = 0
        for added in [2, 1, 3, 2, 2, 3, 2] {
            for word in text[index..<index + added] {
                history.append(word)
                carried = model.advance(carried, key: word)
            }
            index += added
            let steps = tracker.stepCount
            let normalisers = tracker.normaliserCount
            // The whole history, not the last `historyLimit` keys alone: stepped, not replayed.
            #expect(tracker.state(after: Array(history.suffix(NeuralContextTracker.historyLimit))) == carried)
            #expect(tracker.stepCount == steps + added, "after \(history.count) keys")
            #expect(tracker.normaliserCount == normalisers + 1)
        }
        #expect(history.count > NeuralContextTracker.historyLimit)
        // Four keys at once: replayed over the last `historyLimit`.
        let more = ["and", "it", "sat", "on"]
        let wanted = Array((history + more).suffix(NeuralContextTracker.historyLimit))
        var replayed = model.startState
        for key in wanted { replayed = model.advance(replayed, key: key) }
        let steps = tracker.stepCount
        #expect(tracker.state(after: wanted) == replayed)
        #expect(tracker.stepCount == steps + wanted.count)
    }

    @Test("the punctuation key of the text between two words, as train_wordlm.py's separator_token")
    func punctuationKeys() {
        let cases: [(String, String?)] = [
            (" ", nil), ("", nil), (". ", "<.>"), ("? ", "<?>"), ("! ", "<!>"), ("\u{2026} ", "<.>"),
            (", ", "<,>"), (": ", "<:>"), ("; ", "<:>"), (".\" ", "<.>"), (", \"", "<,>"), ("?! ", "<!>"),
            ("!? ", "<?>"), (",. ", "<.>"), (".,  ", "<.>"), (":, ", "<,>"), (" - ", nil), (" (", nil),
            ("\u{201D} ", nil), ("\n", nil),
        ]
        for (gap, key) in cases {
            #expect(WordLanguageModel.punctuationKey(between: gap) == key, "\(gap.debugDescription)")
        }
    }

    /// A small model whose vocabulary has the punctuation keys (constant weights).
    static let punctuationModel: WordLanguageModel.Quantized = {
        let keys = ["<s>", "<unk>", "the", "<.>", "<,>", "cat", "well", "i", "think", "so", "<?>", "<!>", "<:>"]
        let dimension = 8  // the smallest a section may declare
        return WordLanguageModel.Quantized(
            dimension: dimension, keys: keys, embeddingScales: [Float](repeating: 0.01, count: keys.count),
            embedding: [Int8](repeating: 1, count: keys.count * dimension),
            inputScales: [Float](repeating: 0.01, count: 3 * dimension),
            inputWeights: [Int8](repeating: 1, count: 3 * dimension * dimension),
            hiddenScales: [Float](repeating: 0.01, count: 3 * dimension),
            hiddenWeights: [Int8](repeating: 1, count: 3 * dimension * dimension),
            inputBias: [Float](repeating: 0, count: 3 * dimension),
            hiddenBias: [Float](repeating: 0, count: 3 * dimension),
            outputBias: [Float](repeating: 0, count: keys.count))
    }()

    @Test("a model reads punctuation when its vocabulary has the keys")
    func readsPunctuation() throws {
        #expect(try !Self.model().readsPunctuation)
        #expect(WordLanguageModel(Self.punctuationModel).readsPunctuation)
    }

    @Test("a pack whose word model reads punctuation gets the marks between words; another pack does not")
    func predictorGivesPunctuationToAModelThatReadsIt() throws {
        final class Recorder: CandidateReranker {
            var contexts: [RerankContext] = []
            func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) { contexts.append(context) }
        }
        let sections = try PackSurgery.sections(of: FixturePacks.englishBytes)
        /// The word model's context for each text, asked in turn (a reset between them).
        func keys(withModel section: [UInt8], _ texts: [String]) throws -> [[String]] {
            let pack = try LanguagePack(data: Data(PackSurgery.assemble(sections + [("NGRU", section)])))
            let predictor = Predictor(pack: pack)
            let recorder = Recorder()
            predictor.reranker = recorder
            for text in texts {
                predictor.reset()
                _ = predictor.suggest(before: text, count: 3)
            }
            return recorder.contexts.map(\.documentKeys)
        }
        let texts = ["Well, I think so. The ", "So, the "]
        #expect(
            try keys(withModel: Self.punctuationModel.encoded(), texts) == [
                ["well", "<,>", "i", "think", "so", "<.>", "the"], ["so", "<,>", "the"],
            ])
        #expect(
            try keys(withModel: NeuralFixture.wordModelSection, texts) == [
                ["well", "i", "think", "so", "the"], ["so", "the"],
            ])
    }

    @Test("the tracker's kept logits give exactly the log-probabilities computed afresh, over a typed text and a jump")
    func cachedScoringIsExact() throws {
        let model = try Self.model()
        let tracker = NeuralContextTracker(model: model)
        let text = [
            "the", "cat", "sat", "zebra", "on", "the", "mat", "and", "it", "ran", "a", "dog", "ran", "on", "the",
        ]
        let queries = model.keys + ["zebra", "unheard", ""]
        func check(_ history: [String], _ state: WordLanguageModel.State) {
            tracker.update(after: Array(history.suffix(NeuralContextTracker.historyLimit)))
            for key in queries {
                let cached = tracker.logProbability(of: key)
                let fresh = model.logProbability(of: key, in: state)
                #expect(cached.value == fresh.value, "after \(history.count) words, \(key)")
                #expect(cached.isUnknown == fresh.isUnknown)
            }
        }
        var state = model.startState
        var history: [String] = []
        check(history, state)
        for word in text {
            history.append(word)
            state = model.advance(state, key: word)
            check(history, state)
        }
        // A jump back (replayed over the last words): the same, against a replay from the start.
        let back = Array(history.dropLast(3).suffix(NeuralContextTracker.historyLimit))
        check(back, back.reduce(model.startState) { model.advance($0, key: $1) })
    }

    @Test("a context the tracker comes back to costs no step and no normaliser pass, and gives the same values")
    func keptStates() throws {
        let model = try Self.model()
        let tracker = NeuralContextTracker(model: model)
        let before = ["the", "cat"]
        let after = ["the", "cat", "sat"]
        tracker.update(after: before)
        let early = tracker.logProbability(of: "on")
        tracker.update(after: after)
        let late = tracker.logProbability(of: "on")
        let (steps, passes) = (tracker.stepCount, tracker.normaliserCount)
        // The finished word's check looks before "sat", the next key after it, and so on.
        for _ in 0..<5 {
            tracker.update(after: before)
            #expect(tracker.logProbability(of: "on") == early)
            tracker.update(after: after)
            #expect(tracker.logProbability(of: "on") == late)
        }
        #expect(tracker.stepCount == steps && tracker.normaliserCount == passes)
        // More contexts than slots: the least recently used one is computed again, correctly.
        for key in ["a", "dog", "ran"] { tracker.update(after: before + [key]) }
        tracker.update(after: after)
        #expect(tracker.normaliserCount == passes + 4)
        #expect(tracker.logProbability(of: "on") == late)
    }

    @Test("the tracker's likely words are the model's best by log-probability, ties by id, without marks or <unk>")
    func likelyWordsAreTheModelsBest() throws {
        for model in [try Self.model(), WordLanguageModel(Self.punctuationModel)] {
            let tracker = NeuralContextTracker(model: model)
            let marks = [
                WordLanguageModel.sentenceEndKey, WordLanguageModel.questionKey, WordLanguageModel.exclamationKey,
                WordLanguageModel.commaKey, WordLanguageModel.colonKey,
            ]
            for history in [[], ["the"], ["the", "cat", "sat"], ["well", "<,>", "i"]] {
                tracker.update(after: history)
                var state = model.startState
                for key in history { state = model.advance(state, key: key) }
                let words = (2..<model.vocabularySize).filter { !marks.contains(model.key($0)) }
                let expected = words.map { ($0, model.logProbability(of: model.key($0), in: state).value) }
                    .sorted { ($0.1, $1.0) > ($1.1, $0.0) }
                    .prefix(NeuralContextTracker.likelyWordCount).map(\.0)
                #expect(tracker.likelyWords().map(Int.init) == Array(expected), "after \(history)")
                // Kept with the state: the same list again, and again after another state and back.
                #expect(tracker.likelyWords().map(Int.init) == Array(expected))
            }
        }
    }

    @Test("the neural re-ranker's likely words are the pack's ids of its model's likely words that the pack has")
    func likelyWordsArePackWords() throws {
        let sections = try PackSurgery.sections(of: FixturePacks.englishBytes)
        let pack = try LanguagePack(
            data: Data(
                PackSurgery.assemble(
                    sections + [("NGRU", NeuralFixture.wordModelSection), ("NRRK", NeuralFixture.rerankerSection)])))
        let reranker = try #require(NeuralContextReranker(pack: pack))
        let model = try Self.model()
        let tracker = NeuralContextTracker(model: model)
        for history in [[], ["the", "cat"]] {
            tracker.update(after: history)
            let expected = tracker.likelyWords().compactMap { pack.id(ofKey: model.key(Int($0))) }
            #expect(reranker.likelyWords(after: history) == expected)
            #expect(!expected.isEmpty)
        }
        // A re-ranker made without a pack has no likely words to give.
        let network = try NeuralFixture.rerankerSection.withUnsafeBytes { raw throws(PackError) in
            try RerankerNetwork(section: raw)
        }
        #expect(try #require(NeuralContextReranker(network: network, model: model)).likelyWords(after: ["the"]).isEmpty)
    }

    @Test("the re-ranker adds the network's output on the features and the GRU's inputs, as in PyTorch")
    func rerankerParity() throws {
        let model = try Self.model()
        let network = try NeuralFixture.rerankerSection.withUnsafeBytes { raw throws(PackError) in
            try RerankerNetwork(section: raw)
        }
        #expect(NeuralContextReranker(network: RerankerNetworkTests.wide, model: model) == nil)
        let reranker = try #require(NeuralContextReranker(network: network, model: model))
        var window = NeuralFixture.window.map {
            RerankCandidate(key: $0, features: NeuralFixture.windowFeatures, score: 1.5)
        }
        reranker.rerank(
            &window,
            context: RerankContext(
                previousKeys: ["the", "cat"], partialKey: "", startsSentence: false, documentKeys: ["the", "cat"]))
        for (candidate, expected) in zip(window, NeuralFixture.windowScores) {
            #expect(abs(candidate.score - expected) < 1e-3, "\(candidate.key): \(candidate.score) vs \(expected)")
        }
    }

    @Test(
        "a learned word the GRU does not know gets the largest adjustment at or below its rank (likely words aside); a known learned word its own"
    )
    func learnedUnknownWordsAreNotDemoted() throws {
        let model = try Self.model()
        let network = try NeuralFixture.rerankerSection.withUnsafeBytes { raw throws(PackError) in
            try RerankerNetwork(section: raw)
        }
        let reranker = try #require(NeuralContextReranker(network: network, model: model))
        let context = RerankContext(
            previousKeys: ["the", "cat"], partialKey: "", startsSentence: false, documentKeys: ["the", "cat"])
        var learned = NeuralFixture.windowFeatures
        learned[RerankFeature.learnedCount.rawValue] = Math.log(4)  // typed three times
        // "zebra" is outside the fixture's vocabulary; "sat" and "mat" are in it.
        var window = [
            RerankCandidate(key: "sat", features: learned, score: 1.5),
            RerankCandidate(key: "zebra", features: learned, score: 1.5),
            RerankCandidate(key: "mat", features: NeuralFixture.windowFeatures, score: 1.5),
        ]
        reranker.rerank(&window, context: context)
        let state = model.advance(model.advance(model.startState, key: "the"), key: "cat")
        let evaluator = RerankerNetwork.Evaluator(network)
        let raw = [(learned, "sat"), (learned, "zebra"), (NeuralFixture.windowFeatures, "mat")].map { features, key in
            let (value, isUnknown) = model.logProbability(of: key, in: state)
            return features.withUnsafeBufferPointer { evaluator.score($0, extra: (value, isUnknown ? 1 : 0)) }
        }
        #expect(abs(window[0].score - (1.5 + raw[0])) < 1e-5, "a known learned word: the network's own output")
        #expect(abs(window[2].score - (1.5 + raw[2])) < 1e-5)
        let largest = try #require(raw.max())
        #expect(abs(window[1].score - (1.5 + largest)) < 1e-5, "the unknown learned word: the largest")
        #expect(window[1].score >= window[0].score && window[1].score >= window[2].score)
        // Not learned: the network's output, as for any word.
        var unlearned = [RerankCandidate(key: "zebra", features: NeuralFixture.windowFeatures, score: 1.5)]
        reranker.rerank(&unlearned, context: context)
        let (value, _) = model.logProbability(of: "zebra", in: state)
        let own = NeuralFixture.windowFeatures.withUnsafeBufferPointer { evaluator.score($0, extra: (value, 1)) }
        #expect(abs(unlearned[0].score - (1.5 + own)) < 1e-5)
        // Ranked below a word by the predictor: the largest output at or below its own score,
        // not the better word's (which the window's largest output was).
        // Features the fixture's network scores above the others' (for "sat" after "the cat").
        func output(_ features: [Float], _ key: String) -> Float {
            let (value, isUnknown) = model.logProbability(of: key, in: state)
            return features.withUnsafeBufferPointer { evaluator.score($0, extra: (value, isUnknown ? 1 : 0)) }
        }
        let plainLargest = max(output(learned, "zebra"), output(NeuralFixture.windowFeatures, "mat"))
        let better = try #require(
            [0.5, 2, -1, 3, -2, 0].lazy.map { factor in NeuralFixture.windowFeatures.map { $0 * Float(factor) } }
                .first { output($0, "sat") > plainLargest + 0.1 })
        var ranked = [
            RerankCandidate(key: "sat", features: better, score: 3.0),
            RerankCandidate(key: "zebra", features: learned, score: 1.5),
            RerankCandidate(key: "mat", features: NeuralFixture.windowFeatures, score: 1.0),
            // One of the word model's likely words, below it: the predictor did not rank it.
            RerankCandidate(key: "sat", features: better, score: 0.5, isLikelyWord: true),
        ]
        let outputs = [output(better, "sat"), output(learned, "zebra"), output(NeuralFixture.windowFeatures, "mat")]
        #expect(outputs[0] > max(outputs[1], outputs[2]), "the fixture's better word has the largest output")
        reranker.rerank(&ranked, context: context)
        #expect(abs(ranked[0].score - (3.0 + outputs[0])) < 1e-5)
        #expect(abs(ranked[1].score - (1.5 + max(outputs[1], outputs[2]))) < 1e-5)
        #expect(ranked[1].score >= ranked[2].score)
        #expect(abs(ranked[3].score - (0.5 + outputs[0])) < 1e-5)
    }

    @Test("a pack with the section exposes the model; without it the pack still opens; a bad one fails to open")
    func packSection() throws {
        let base = FixturePacks.englishBytes
        #expect(try LanguagePack(data: Data(base)).wordLanguageModel == nil)
        let sections = try PackSurgery.sections(of: base)
        let withModel = PackSurgery.assemble(sections + [("NGRU", NeuralFixture.wordModelSection)])
        let pack = try LanguagePack(data: Data(withModel))
        #expect(pack.wordLanguageModel?.keys == (try Self.model()).keys)
        var broken = NeuralFixture.wordModelSection
        broken[broken.count - 1] ^= 1
        let withBroken = PackSurgery.assemble(sections + [("NGRU", broken)])
        #expect(throws: PackError.self) { try LanguagePack(data: Data(withBroken)) }
    }

    @Test("the predictor hands the re-ranker the document's last words across sentences, not across a line break")
    func documentKeysReachTheReranker() {
        final class Recorder: CandidateReranker {
            var contexts: [RerankContext] = []
            func rerank(_ candidates: inout [RerankCandidate], context: RerankContext) { contexts.append(context) }
        }
        let predictor = Predictor(pack: FixturePacks.english)
        let recorder = Recorder()
        predictor.reranker = recorder
        _ = predictor.suggest(before: "I think so. The 42 cats of the th", count: 3)
        #expect(recorder.contexts.last?.documentKeys == ["i", "think", "so", "the", "", "cats", "of", "the"])
        #expect(recorder.contexts.last?.previousKeys == ["of", "the"])
        _ = predictor.suggest(before: "", count: 3)
        #expect(recorder.contexts.last?.documentKeys == [])
        // Not across a line break: the model learned from lines, each after <s>.
        _ = predictor.suggest(before: "Hello Sam,\n\nThe cats of the th", count: 3)
        #expect(recorder.contexts.last?.documentKeys == ["the", "cats", "of", "the"])
        _ = predictor.suggest(before: "Hello Sam,\r\n", count: 3)
        #expect(recorder.contexts.last?.documentKeys == [])
        _ = predictor.suggest(before: "Dear Sam,\u{2028}I think so. The cat", count: 3)
        #expect(recorder.contexts.last?.documentKeys == ["i", "think", "so", "the"])
    }
}

/// The vectorised exponential of the softmax normaliser.
@Suite("WordLanguageModel.exponential")
struct WordLanguageModelExponentialTests {
    @Test("matches Math.exp to 2e-6 relative on [−87, 0], 0 below, exact at 0")
    func exponential() {
        var x: Float = 0
        while x > -87 {
            let lanes = SIMD8<Float>((0..<8).map { x - Float($0) * 0.013 })
            let got = WordLanguageModel.exponential(lanes)
            for lane in 0..<8 {
                let want = Math.exp(Double(lanes[lane]))
                #expect(abs(Double(got[lane]) - want) <= 2e-6 * want + 2e-38, "e^\(lanes[lane])")
            }
            x -= 0.37
        }
        #expect(WordLanguageModel.exponential(SIMD8(repeating: 0)) == SIMD8(repeating: 1))
        #expect(WordLanguageModel.exponential(SIMD8(repeating: -200)) == SIMD8(repeating: 0))
        #expect(WordLanguageModel.exponential(SIMD8(repeating: -.infinity)) == SIMD8(repeating: 0))
    }
}

/// The trained model against PyTorch, when a section and its expected outputs are given
/// (`export_sections.py --wordlm M --ngru S --parity J`, then INKLING_NGRU_SECTION=S
/// INKLING_NGRU_PARITY=J swift test --filter WordLanguageModelRealParity); skipped otherwise.
@Suite("WordLanguageModelRealParity")
struct WordLanguageModelRealParityTests {
    struct Expected: Decodable {
        var words: [String]
        var queries: [String]
        var logProbabilities: [[Float]]
    }

    static let environment = ProcessInfo.processInfo.environment

    @Test(
        "a trained section gives PyTorch's log-probabilities",
        .enabled(if: environment["INKLING_NGRU_SECTION"] != nil && environment["INKLING_NGRU_PARITY"] != nil))
    func trainedModel() throws {
        let section = try Data(contentsOf: URL(filePath: Self.environment["INKLING_NGRU_SECTION"]!))
        let expected = try JSONDecoder().decode(
            Expected.self, from: Data(contentsOf: URL(filePath: Self.environment["INKLING_NGRU_PARITY"]!)))
        let model = try Array(section).withUnsafeBytes { raw throws(PackError) in try WordLanguageModel(section: raw) }
        var state = model.startState
        var worst: Float = 0
        for (step, row) in expected.logProbabilities.enumerated() {
            if step > 0 { state = model.advance(state, key: expected.words[step - 1]) }
            for (query, value) in zip(expected.queries, row) {
                worst = max(worst, abs(model.logProbability(of: query, in: state).value - value))
            }
        }
        print("WordLanguageModelRealParity: largest difference \(worst)")
        #expect(worst < 2e-3)
    }
}
