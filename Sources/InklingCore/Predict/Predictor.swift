/// How the predictor weighs its models; the defaults are tuned on held-out training text.
public struct PredictorOptions: Sendable, Equatable {
    /// Whether the character model re-ranks the candidate window (off for ablation).
    public var useCharacterModel = true
    /// Weight of the character model's log probability relative to the word model's.
    public var characterWeight: Float = 0.35
    /// Weight of the character model when predicting the next word (nothing typed yet).
    public var nextWordCharacterWeight: Float = 0.15
    /// How much of the character model's context-free score is removed (1: only what the context adds).
    public var characterPriorShare: Float = 1.0
    /// Candidates from the dictionary that the re-ranker looks at.
    public var windowSize = 32
    /// Maximum weight of the document cache (words already typed in this document).
    public var cacheWeight: Double = 0.12
    /// Weight of the document's own word pairs for next-word prediction.
    public var cacheBigramWeight: Double = 0.25
    /// Whether unlikely prefixes also get completions of nearby prefixes (`tge` → `the`).
    public var typoTolerantCompletions = true
    /// A prefix whose best completion has a lower log prior than this is unlikely.
    public var unlikelyPrefixLogPrior: Float = -14
    /// Score penalty of a completion that assumes one typo.
    public var correctionPenalty: Float = 4
    /// Keyboard layout for neighbouring keys.
    public var keyboardLayout = KeyboardLayout.qwerty.name
    /// Learned successors of the previous words considered as candidates (most used first).
    public var learnedSuccessorWindow = 12
    /// Largest weight of the user's learned words and phrases.
    public var userWeight: Double = 0.3
    /// Prefer longer words by this exponent of the characters a selection saves.
    public var savingsExponent: Float = 0.0
    public init() {}
}

/// A suggestion shown to the user.
public struct Suggestion: Equatable, Sendable, CustomStringConvertible {
    /// The full word, cased for where it will be inserted.
    public var text: String
    /// The combined score (natural log scale; higher is better).
    public var score: Float
    /// Whether the word corrects a likely typo in what was typed (`tge` → `the`).
    public var isCorrection: Bool
    public init(text: String, score: Float, isCorrection: Bool = false) {
        self.text = text
        self.score = score
        self.isCorrection = isCorrection
    }
    public var description: String { text }
}

/// Suggests whole words from a language pack: completions of the word being typed, or next words.
///
/// Candidates come from the dictionary (prefix range by prior, successors of the previous one
/// or two words, words already used in the document); a word model scores them; the character
/// model then re-ranks the best `windowSize` of them using the text before the word.
public final class Predictor {
    /// The pack suggestions come from.
    public let pack: LanguagePack
    /// Model weights and switches.
    public var options: PredictorOptions {
        didSet { resultCache.removeAll() }
    }
    private var document = DocumentCache()
    /// Re-orders the candidate window after the n-gram and character models (nil: their order).
    public var reranker: (any CandidateReranker)? {
        didSet { resultCache.removeAll() }
    }
    /// What this user has typed before (learned words and contexts); empty when learning is off.
    public private(set) var userModel = UserModel()

    /// Changes the learned model (load, forget, wipe) and drops answers that depended on it.
    public func updateUserModel(_ change: (inout UserModel) -> Void) {
        change(&userModel)
        resultCache.removeAll()
    }
    private var layout: KeyboardLayout { KeyboardLayout.named(options.keyboardLayout) }
    /// Keyed by scalars: canonically equivalent strings (`é` and `e` + U+0301) are different input.
    private var resultCache: [ResultKey: [Suggestion]] = [:]

    /// Character-model log probabilities of candidate words, computed once and reused: the
    /// history stays the same for every key of a word, and the context-free score for good.
    private var characterScores = CharacterScores()

    private struct CharacterScores {
        /// The symbols the `inContext` scores were computed after.
        var history: [UInt8] = []
        var inContext: [String: Float] = [:]
        var alone: [String: Float] = [:]
        static let limit = 4096

        mutating func remember(key: String, inContext score: Float, alone aloneScore: Float) {
            if inContext.count >= Self.limit { inContext.removeAll(keepingCapacity: true) }
            if alone.count >= Self.limit { alone.removeAll(keepingCapacity: true) }
            inContext[key] = score
            alone[key] = aloneScore
        }
    }

    /// A cached answer's request: the count as a number (any Int, unlike a code point) and the text.
    private struct ResultKey: Hashable {
        var count: Int
        var text: [Unicode.Scalar]
    }

    /// Creates a predictor over a pack.
    public init(pack: LanguagePack, options: PredictorOptions = PredictorOptions()) {
        self.pack = pack
        self.options = options
        reranker = NeuralContextReranker(pack: pack)  // nil for packs without the neural sections
    }

    /// Forgets the current document (a new message, another text field).
    public func reset() {
        document = DocumentCache()
        resultCache.removeAll()
    }

    /// Records a committed word with the text before it (call only where learning is allowed).
    ///
    /// The context is the previous one or two words of the same sentence; a chunk that must not
    /// be learned (an address, a number, a secret-looking token) breaks the context too, so no
    /// learned pair ever includes it.
    public func learn(word: String, before: String, now: Int64) {
        guard LearningPolicy.mayRecord(word) else { return }
        let (context, _) = WordText.splitPartialWord(String(before.unicodeScalars.suffix(200)))
        var recent: [String] = []
        for chunk in context.split(whereSeparator: { $0.isWhitespace }) {
            if !LearningPolicy.mayLearnChunk(chunk) {
                recent.removeAll()
                continue
            }
            var previousEnd = chunk.startIndex
            for candidate in WordText.words(in: chunk) {
                let gap = chunk[previousEnd..<candidate.startIndex]
                if gap.contains(where: { $0 == "." || $0 == "!" || $0 == "?" }) { recent.removeAll() }
                if LearningPolicy.mayRecord(String(candidate)) {
                    recent.append(String(candidate))
                } else {
                    recent.removeAll()
                }
                previousEnd = candidate.endIndex
            }
            if chunk[previousEnd...].contains(where: { $0 == "." || $0 == "!" || $0 == "?" }) { recent.removeAll() }
        }
        // A capital that only marks a sentence start is not how the user writes the word.
        var display = word
        if recent.isEmpty, WordText.startsUppercase(word), !WordText.isAllCaps(word),
            let id = pack.id(ofKey: WordText.key(word)),
            !WordText.startsUppercase(pack.display(id))
        {
            display = pack.display(id)
        }
        userModel.record(word: display, after: Array(recent.suffix(2)), now: now)
        resultCache.removeAll()
    }

    /// The learned entries changed since the last call, for the store (does not touch the cache).
    public func takeLearnedChanges() -> [(context: String, key: String, entry: LearnedEntry?)] {
        userModel.takeChanges()
    }

    /// Replaces everything learned (the store changed under the engine), keeping the model's limits.
    public func replaceUserModel(with entries: [LearnedEntry]) {
        var model = UserModel()
        model.capacity = userModel.capacity
        model.halfLife = userModel.halfLife
        model.load(entries)
        _ = model.takeChanges()
        userModel = model
        resultCache.removeAll()
    }

    /// The best `count` words for the text before the cursor.
    public func suggest(before: String, count: Int) -> [String] {
        suggestions(before: before, count: count).map(\.text)
    }

    /// The best `count` suggestions for the text before the cursor, with scores.
    public func suggestions(before: String, count: Int) -> [Suggestion] {
        guard count > 0 else { return [] }
        let tail = String(before.unicodeScalars.suffix(1000))
        let cacheKey = ResultKey(count: count, text: Array(tail.unicodeScalars))
        if let cached = resultCache[cacheKey] { return cached }
        let (context, partial) = WordText.splitPartialWord(tail)
        document.update(context: context, pack: pack)
        let result = compute(context: context, partial: partial, count: count)
        if resultCache.count > 256 { resultCache.removeAll(keepingCapacity: true) }
        resultCache[cacheKey] = result
        return result
    }

    // MARK: Scoring

    private struct Candidate {
        var id: Int?  // nil: a word from the document that the pack lacks
        var key: String
        var display: String
        var wordScore: Float
        var total: Float = 0
        /// Offered because a neighbouring key or a swap makes the typed prefix a likely word.
        var isCorrection = false
    }

    private func compute(context: Substring, partial: Substring, count: Int) -> [Suggestion] {
        if WordText.containsDigit(partial) { return [] }
        let prefixKey = WordText.key(partial)
        let (previous, beforePrevious) = document.lastWords
        let bigram = pack.bigramSuccessors(of: previous ?? pack.sentenceStartID)
        let trigram = previous.flatMap { p in beforePrevious.flatMap { pack.trigramSuccessors(of: $0, p) } }
        let startsSentence = WordText.isSentenceStart(context)
        // After a capitalised word mid-sentence, words often written with a capital continue a name.
        let continuesName = partial.isEmpty && document.lastWordCapitalizedMidSentence
        let unknownPrevious = previous == nil && !startsSentence

        // Successor probabilities of the previous words, by id.
        var trigramProb: [Int: Float] = [:]
        if let trigram {
            for entry in trigram.entries {
                let (id, logProb) = LanguagePack.decodeSuccessor(entry)
                trigramProb[id] = Math.exp(logProb)
            }
        }
        var bigramProb: [Int: Float] = [:]
        if !unknownPrevious {
            for entry in bigram.entries {
                let (id, logProb) = LanguagePack.decodeSuccessor(entry)
                bigramProb[id] = Math.exp(logProb)
            }
        }
        let bigramBackoff: Float = unknownPrevious ? 1 : bigram.weight
        let trigramBackoff: Float = trigram?.weight ?? 1

        // Gather candidate ids.
        var ids: [Int] = []
        var seen = Set<Int>()
        func add(_ id: Int) {
            if seen.insert(id).inserted { ids.append(id) }
        }
        let range = prefixKey.isEmpty ? 0..<0 : pack.range(ofPrefix: prefixKey)
        if prefixKey.isEmpty {
            for id in pack.topWords.prefix(64) { add(Int(id)) }
        } else {
            for id in topByPrior(range, limit: 40) { add(id) }
        }
        // Typo-tolerant completions: when the typed prefix is unlikely, the prefixes one
        // neighbouring key or one swap away may hold the word meant (`tge` → `the`).
        var corrections: [Int: Float] = [:]
        if options.typoTolerantCompletions, partial.unicodeScalars.count >= 3,
            range.isEmpty
                || topByPrior(range, limit: 1).first.map({ pack.logPrior($0) < options.unlikelyPrefixLogPrior }) ?? true
        {
            for (variant, penalty) in prefixVariants(Array(prefixKey.unicodeScalars)) {
                for id in topByPrior(pack.range(ofPrefix: variant), limit: 3) where !range.contains(id) {
                    if corrections[id].map({ $0 < penalty }) ?? true { corrections[id] = penalty }
                    add(id)
                }
            }
        }
        for id in trigramProb.keys where range.contains(id) || prefixKey.isEmpty { add(id) }
        for id in bigramProb.keys where range.contains(id) || prefixKey.isEmpty { add(id) }
        var documentOnly: [(key: String, display: String)] = []
        var documentOnlyKeys = Set<String>()
        for (key, entry) in document.words where key.hasPrefix(prefixKey) {
            if let id = entry.id {
                add(id)
            } else if documentOnlyKeys.insert(key).inserted {
                documentOnly.append((key, entry.display))
            }
        }
        // The user's own words and phrases.
        let userContexts = [document.lastKeys.joined(separator: " "), document.lastKeys.last ?? ""]
        let userTrigram = document.lastKeys.count == 2 ? userModel.successors(of: userContexts[0]) : [:]
        let userBigram = document.lastKeys.isEmpty ? [:] : userModel.successors(of: userContexts[1])
        let userTotals = (
            one: Float(userModel.total(of: "")), two: Float(userModel.total(of: userContexts[1])),
            three: document.lastKeys.count == 2 ? Float(userModel.total(of: userContexts[0])) : 0
        )
        var learnedCandidates = userModel.words(withPrefix: prefixKey, limit: 12)
        // The most used learned successors only: a bounded window, like the pack's successor lists.
        let learnedSuccessors =
            (userBigram.values.filter { $0.key.hasPrefix(prefixKey) }
            + userTrigram.values.filter { $0.key.hasPrefix(prefixKey) })
            .sorted { ($0.count, $1.key) > ($1.count, $0.key) }
        learnedCandidates += learnedSuccessors.prefix(options.learnedSuccessorWindow)
        for entry in learnedCandidates {
            if let id = pack.id(ofKey: entry.key) {
                add(id)
            } else if documentOnlyKeys.insert(entry.key).inserted {
                documentOnly.append((entry.key, entry.display))
            }
        }

        // Word model: interpolated trigram/bigram/unigram, mixed with the document cache.
        let cacheMass = Double(document.totalWords)
        let cacheWeight = Float(options.cacheWeight * cacheMass / (cacheMass + 20))
        let followers = document.lastWordFollowers
        let followerMass = Float(followers.values.reduce(0, +))
        let followerWeight = followerMass > 0 ? Float(options.cacheBigramWeight) * followerMass / (followerMass + 2) : 0
        func wordScore(id: Int?, key: String) -> Float {
            var p: Float = 0
            if let id {
                let unigram = Math.exp(pack.logPrior(id))
                let lower = (bigramProb[id] ?? 0) + bigramBackoff * unigram
                p = (trigramProb[id] ?? 0) + trigramBackoff * lower
            } else {
                p = 1e-7
            }
            let cached = document.words[key].map { Float($0.count) / Float(max(1, document.totalWords)) } ?? 0
            p = (1 - cacheWeight) * p + cacheWeight * cached
            if followerWeight > 0 {
                p = (1 - followerWeight) * p + followerWeight * Float(followers[key] ?? 0) / followerMass
            }
            if userTotals.one > 0 {
                // Back-off over the user's own counts: two words of context, one, none.
                let one = Float(userModel.word(key)?.count ?? 0) / userTotals.one
                let two = userTotals.two > 0 ? Float(userBigram[key]?.count ?? 0) / userTotals.two : 0
                let three = userTotals.three > 0 ? Float(userTrigram[key]?.count ?? 0) / userTotals.three : 0
                let w3 = userTotals.three / (userTotals.three + 2)
                let w2 = (1 - w3) * userTotals.two / (userTotals.two + 2)
                let personal = w3 * three + w2 * two + (1 - w3 - w2) * one
                // Trust grows with everything the user typed, and faster with this very context.
                let overall = userTotals.one / (userTotals.one + 100)
                let contextual = max(userTotals.two / (userTotals.two + 2), userTotals.three / (userTotals.three + 1))
                let weight = Float(options.userWeight) * max(overall, contextual)
                p = (1 - weight) * p + weight * personal
            }
            return Math.log(max(p, 1e-12))
        }

        var candidates: [Candidate] = []
        candidates.reserveCapacity(ids.count + documentOnly.count)
        let partialScalarCount = partial.unicodeScalars.count
        for id in ids {
            let key = pack.key(id)
            if key == prefixKey { continue }  // the typed text itself is already in the field
            // The display form is settled below, for the window only.
            var candidate = Candidate(id: id, key: key, display: "", wordScore: wordScore(id: id, key: key))
            if let penalty = corrections[id] {
                candidate.isCorrection = true
                candidate.wordScore -= penalty
            }
            candidates.append(candidate)
        }
        for (key, display) in documentOnly where key != prefixKey {
            candidates.append(Candidate(id: nil, key: key, display: display, wordScore: wordScore(id: nil, key: key)))
        }
        candidates.sort { ($0.wordScore, $1.key) > ($1.wordScore, $0.key) }
        if candidates.count > options.windowSize { candidates.removeLast(candidates.count - options.windowSize) }
        for index in candidates.indices {
            guard let id = candidates[index].id else { continue }
            let key = candidates[index].key
            // The document's own spelling wins only for words often written as (part of) a name.
            var display = pack.display(id)
            if let written = document.words[key]?.display, !WordText.isAllCaps(written),
                !pack.wordFlags(id).intersection([.capitalized, .sometimesCapitalized]).isEmpty
            {
                display = written
            } else if let learned = userModel.word(key)?.display, !WordText.isAllCaps(learned) {
                // How this user writes the word (`Inkling`, a product, not `inkling`).
                display = learned
            }
            if continuesName, pack.wordFlags(id).contains(.sometimesCapitalized) {
                display = WordText.capitalizingFirst(display)
            }
            candidates[index].display = display
        }

        // Re-rank the window with the character model and the savings preference.
        let model = pack.characterModel
        let history = options.useCharacterModel ? model.symbols(context.unicodeScalars.suffix(model.order * 2)) : []
        // A neutral history: the word after a plain space. Subtracting the word's score there
        // keeps only what the context adds, so the prior is not counted twice.
        let neutral = model.symbols(CollectionOfOne(" "))
        if characterScores.history != history {
            characterScores.history = history
            characterScores.inContext.removeAll(keepingCapacity: true)
        }
        for index in candidates.indices {
            var total = candidates[index].wordScore
            if options.useCharacterModel {
                let key = candidates[index].key
                let inContext: Float
                let alone: Float
                if let known = characterScores.inContext[key], let knownAlone = characterScores.alone[key] {
                    (inContext, alone) = (known, knownAlone)
                } else {
                    let symbols = model.symbols(key.unicodeScalars) + model.symbols(CollectionOfOne(" "))
                    inContext = model.logProb(of: symbols, after: history)
                    alone = characterScores.alone[key] ?? model.logProb(of: symbols, after: neutral)
                    characterScores.remember(key: key, inContext: inContext, alone: alone)
                }
                let weight = partial.isEmpty ? options.nextWordCharacterWeight : options.characterWeight
                total += weight * (inContext - options.characterPriorShare * alone)
            }
            if options.savingsExponent != 0 {
                let saved = Float(max(1, candidates[index].key.unicodeScalars.count - partialScalarCount))
                total += options.savingsExponent * Math.log(saved)
            }
            candidates[index].total = total
        }
        // Optional learned re-ranker (issue 17): sees the window with its features, rewrites totals.
        if let reranker {
            var window = candidates.enumerated().map { index, candidate in
                RerankCandidate(
                    key: candidate.key,
                    features: rerankFeatures(
                        of: candidate, rank: index, partialLength: partialScalarCount,
                        trigramProb: trigramProb, bigramProb: bigramProb, startsSentence: startsSentence),
                    score: candidate.total)
            }
            reranker.rerank(
                &window,
                context: RerankContext(
                    previousKeys: document.lastKeys, partialKey: prefixKey, startsSentence: startsSentence,
                    documentKeys: document.documentKeys))
            for index in candidates.indices { candidates[index].total = window[index].score }
        }
        candidates.sort { ($0.total, $1.key) > ($1.total, $0.key) }

        var result: [Suggestion] = []
        var shown = Set<String>()
        for candidate in candidates {
            let text: String
            if candidate.isCorrection {
                // The typed letters are not a prefix of this word: copy only their case.
                text =
                    WordText.isAllCaps(partial)
                    ? candidate.display.uppercased()
                    : (WordText.startsUppercase(partial) || (partial.isEmpty && startsSentence))
                        ? WordText.capitalizingFirst(candidate.display) : candidate.display
            } else {
                text = Casing.apply(display: candidate.display, typed: partial, sentenceStart: startsSentence)
            }
            if text == String(partial) || !shown.insert(text).inserted { continue }
            result.append(Suggestion(text: text, score: candidate.total, isCorrection: candidate.isCorrection))
            if result.count == count { break }
        }
        return result
    }

    /// The re-ranker's view of one window candidate (`RerankFeature` order).
    private func rerankFeatures(
        of candidate: Candidate, rank: Int, partialLength: Int,
        trigramProb: [Int: Float], bigramProb: [Int: Float], startsSentence: Bool
    ) -> [Float] {
        var features = [Float](repeating: 0, count: RerankFeature.count)
        func set(_ feature: RerankFeature, _ value: Float) { features[feature.rawValue] = value }
        set(.total, candidate.total)
        set(.wordScore, candidate.wordScore)
        if options.useCharacterModel, let inContext = characterScores.inContext[candidate.key],
            let alone = characterScores.alone[candidate.key]
        {
            set(.characterContext, inContext - alone)
            set(.characterAlone, alone)
        }
        set(.logPrior, candidate.id.map { pack.logPrior($0) } ?? -20)
        set(.trigramLog, Math.log((candidate.id.flatMap { trigramProb[$0] } ?? 0) + 1e-6))
        set(.bigramLog, Math.log((candidate.id.flatMap { bigramProb[$0] } ?? 0) + 1e-6))
        set(.isCorrection, candidate.isCorrection ? 1 : 0)
        set(.typedLength, Float(partialLength))
        set(.remainingLength, Float(max(0, candidate.key.unicodeScalars.count - partialLength)))
        set(.documentCount, Math.log(1 + Float(document.words[candidate.key]?.count ?? 0)))
        set(.learnedCount, Math.log(1 + Float(userModel.word(candidate.key)?.count ?? 0)))
        set(.windowRank, Float(rank) / Float(max(1, options.windowSize)))
        set(.nextWord, partialLength == 0 ? 1 : 0)
        set(.sentenceStart, startsSentence ? 1 : 0)
        return features
    }

    /// Prefixes one neighbouring-key substitution or one adjacent swap away, with their penalty.
    private func prefixVariants(_ prefix: [Unicode.Scalar]) -> [(String, Float)] {
        var variants: [(String, Float)] = []
        for index in prefix.indices {
            for neighbour in layout.neighbours(of: prefix[index]) where neighbour.properties.isAlphabetic {
                var variant = prefix
                variant[index] = neighbour
                variants.append((String(String.UnicodeScalarView(variant)), options.correctionPenalty))
            }
            if index + 1 < prefix.count, prefix[index] != prefix[index + 1] {
                var variant = prefix
                variant.swapAt(index, index + 1)
                variants.append((String(String.UnicodeScalarView(variant)), options.correctionPenalty))
            }
        }
        return variants
    }

    /// The `limit` ids with the highest prior inside a range.
    private func topByPrior(_ range: Range<Int>, limit: Int) -> [Int] {
        if range.count <= limit { return Array(range) }
        var best: [(cost: UInt16, id: Int)] = []
        best.reserveCapacity(limit + 1)
        var worst = UInt16.max
        for id in range {
            let cost = pack.priors[id]
            if best.count == limit && cost >= worst { continue }
            let position = best.firstIndex { $0.cost > cost } ?? best.count
            best.insert((cost, id), at: position)
            if best.count > limit { best.removeLast() }
            worst = best.count == limit ? best[limit - 1].cost : UInt16.max
        }
        return best.map(\.id)
    }
}
