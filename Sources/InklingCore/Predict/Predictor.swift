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
    /// Candidates from the dictionary that the re-ranker looks at while a word is typed.
    public var windowSize = 32
    /// Candidates the re-ranker looks at for the next word (nothing typed yet), where the
    /// dictionary's order is weakest.
    public var nextWordWindowSize = 32
    /// Words the neural re-ranker's word model finds most likely that join the next word's
    /// window when the dictionary's order left them out (of its best `likelyWordCount`; while a
    /// word is typed, none: +0.04 KSS points on dev with 4, within noise).
    public var nextWordProposals = 8
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
        didSet { forgetAnswers() }
    }
    private var document = DocumentCache()
    /// Whether the word model's context holds punctuation keys (a model trained with them).
    private let readsPunctuation: Bool
    /// Re-orders the candidate window after the n-gram and character models (nil: their order).
    public var reranker: (any CandidateReranker)? {
        didSet { forgetAnswers() }
    }
    /// What this user has typed before (learned words and contexts); empty when learning is off.
    public private(set) var userModel = UserModel()

    /// Changes the learned model (load, forget, wipe) and drops answers that depended on it.
    public func updateUserModel(_ change: (inout UserModel) -> Void) {
        forgetAnswers()  // first: the context's scores hold the model too (see `learn`)
        change(&userModel)
        learnedWords.isStale = true
    }
    private var layout: KeyboardLayout { KeyboardLayout.named(options.keyboardLayout) }
    /// Keyed by scalars: canonically equivalent strings (`é` and `e` + U+0301) are different input.
    private var resultCache: [ResultKey: [Suggestion]] = [:]

    /// The word model's view of the current context (nil: not computed since it changed).
    private var contextScores: ContextScores?
    /// The last key's candidates, for the next key of the same word (nil: none in this context).
    private var candidatePool: CandidatePool?
    /// The best words by prior of large prefix ranges (`bestByPrior`), for good: the pack's.
    private var priorTops: [String: [Int]] = [:]
    /// Word scores of pack words in the current context (`scoredWord`).
    private var scoredWords = IDTable<Float>()
    /// Display forms of pack words in the current context (`displayForm`): an index into
    /// `displayForms` by id.
    private var displayIndex = IDTable<Int>()
    private var displayForms: [String] = []
    /// The pack words the learned model may hold, so that the word score of a pack word the
    /// user never typed skips the learned model's lookups (by string).
    private var learnedWords = LearnedWords()
    /// `unigramProbability` by stored prior, and `successorProbability` by cost (NaN: not yet).
    private var unigramByCost: [Float] = []
    private var successorByCost: [Float] = []
    /// Whether a key reuses what earlier keys found beyond their own context: a key that
    /// extends the last key's word (or starts the next word) narrows its candidates, the best
    /// words of a prefix by prior and character scores after an earlier history are kept, and
    /// only candidates that may reach the window get their log score, and pack words are scored
    /// by id (off: every key is computed in full, by string; the reference for tests that
    /// compare both).
    var reusesCandidates = true
    /// The pack words present in a narrowed pool (`narrowedCandidates`), kept for the next key.
    private var narrowingIDs = IDTable<UInt8>()
    /// Where each pack word is among a search's candidates (`freshCandidates`), kept likewise.
    private var searchPositions = IDTable<Int>()
    /// Keys answered by narrowing the last key's candidates (for tests).
    private(set) var narrowedKeys = 0

    /// How an answer was found, for profiling the predictor by kind of query (`inkling predict`
    /// with `INKLING_PREDICT_TIMINGS`).
    public enum AnswerPath: String, Sendable {
        /// The same request as an earlier one: the remembered answer.
        case cached
        /// Nothing typed of the word: next-word candidates.
        case nextWord
        /// A prefix searched in the dictionary.
        case searched
        /// A prefix answered by narrowing the last key's candidates.
        case narrowed
        /// A prefix searched with typo-tolerant completions.
        case corrected
        /// No suggestions asked for or possible (a digit in the word).
        case none
    }
    /// How the last `suggestions` call was answered.
    public private(set) var lastAnswerPath = AnswerPath.none

    /// Character-model log probabilities of candidate words, computed once and reused: the
    /// history stays the same for every key of a word, and the context-free score for good.
    private var characterScores = CharacterScores()
    /// The character model's score of each n-gram read so far (any history: the score of a
    /// position depends only on the symbols the model reads there).
    private var positionScores = CharacterModel.PositionScores()

    private struct CharacterScores {
        /// The symbols the `inContext` scores were computed after: the last `order - 1` of the
        /// context, all the model reads, so contexts that end alike (`of the `, `in the `) share them.
        var history: [UInt8] = []
        var inContext = ScoreTable()
        var alone = ScoreTable()
        /// The `inContext` scores of earlier histories (a few dozen, dropped together).
        var earlier: [[UInt8]: ScoreTable] = [:]
        /// The scores in `earlier`, all histories together (bounded by `limit`).
        var earlierCount = 0
        /// Emptied tables of dropped histories, kept with their room for the next new ones (a
        /// table grown afresh for every new context rehashed itself several times).
        var spare: [ScoreTable] = []
        static let limit = 4096
        static let earlierLimit = 32

        /// Switches to the scores after another history, keeping the current ones if `keeps`.
        mutating func use(history newHistory: [UInt8], keeps: Bool) {
            guard newHistory != history else { return }
            if keeps {
                if earlier.count >= Self.earlierLimit || earlierCount + inContext.count > Self.limit {
                    for var table in earlier.values where spare.count < Self.earlierLimit {
                        table.removeAll()
                        spare.append(table)
                    }
                    earlier.removeAll(keepingCapacity: true)
                    earlierCount = 0
                }
                earlier[history] = inContext
                earlierCount += inContext.count
                if let known = earlier.removeValue(forKey: newHistory) {
                    inContext = known
                    earlierCount -= inContext.count
                } else {
                    inContext = spare.popLast() ?? ScoreTable()
                }
            } else {
                inContext.removeAll()
            }
            history = newHistory
        }

        mutating func remember(id: Int?, key: String, inContext score: Float, alone aloneScore: Float) {
            if inContext.count >= Self.limit { inContext.removeAll() }
            if alone.count >= Self.limit { alone.removeAll() }
            inContext.set(id: id, key: key, score)
            alone.set(id: id, key: key, aloneScore)
        }
    }

    /// Scores of candidate words: a pack word's by its id (no string hashed: looking them up by
    /// key was a tenth of the prediction's time), a word the pack lacks by its key.
    private struct ScoreTable {
        private var byID = IDTable<Float>()
        private var byKey: [String: Float] = [:]
        var count: Int { byID.count + byKey.count }

        /// The score of the word with this id (a pack word) or else this key.
        subscript(id: Int?, key: String) -> Float? {
            if let id { return byID[id] }
            return byKey[key]
        }

        mutating func set(id: Int?, key: String, _ score: Float) {
            if let id { byID.set(id, score) } else { byKey[key] = score }
        }

        mutating func removeAll() {
            byID.removeAll()
            byKey.removeAll(keepingCapacity: true)
        }
    }

    /// A cached answer's request: the count and the text, compared by scalars (as UTF-8 bytes,
    /// which are equal exactly when the scalars are) and hashed as bytes in one call.
    private struct ResultKey: Hashable {
        var count: Int
        var text: String

        static func == (a: ResultKey, b: ResultKey) -> Bool {
            a.count == b.count && DocumentCache.sameScalars(a.text[...], b.text[...])
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(count)
            let hashed: Void? = text.utf8.withContiguousStorageIfAvailable {
                hasher.combine(bytes: UnsafeRawBufferPointer($0))
            }
            if hashed == nil { Array(text.utf8).withUnsafeBytes { hasher.combine(bytes: $0) } }
        }
    }

    /// Creates a predictor over a pack.
    public init(pack: LanguagePack, options: PredictorOptions = PredictorOptions()) {
        self.pack = pack
        self.options = options
        reranker = NeuralContextReranker(pack: pack)  // nil for packs without the neural sections
        readsPunctuation = pack.wordLanguageModel?.readsPunctuation ?? false
        document = DocumentCache(readsPunctuation: readsPunctuation)
    }

    /// Forgets the current document (a new message, another text field).
    public func reset() {
        document = DocumentCache(readsPunctuation: readsPunctuation)
        forgetAnswers()
    }

    /// Drops every answer and everything computed for the current context (the models, the
    /// options or the document changed).
    private func forgetAnswers() {
        resultCache.removeAll()
        forgetContext()
    }

    /// Drops what was computed for the current context (the text before the word).
    private func forgetContext() {
        contextScores = nil
        candidatePool = nil
        scoredWords.removeAll()
        displayIndex.removeAll()
        displayForms.removeAll(keepingCapacity: true)
    }

    /// Records a committed word with the text before it (call only where learning is allowed).
    ///
    /// The context is the previous one or two words of the same sentence; a chunk that must not
    /// be learned (an address, a number, a secret-looking token) breaks the context too, so no
    /// learned pair ever includes it.
    public func learn(word: String, before: String, now: Int64) {
        guard LearningPolicy.mayRecord(word) else { return }
        let (context, _) = WordText.splitPartialWord(String(before.unicodeScalars.suffix(200)))
        let recent = Self.learningContext(context)
        // A capital that only marks a sentence start is not how the user writes the word.
        var display = word
        if recent.isEmpty, WordText.startsUppercase(word), !WordText.isAllCaps(word),
            let id = pack.id(ofKey: WordText.key(word)),
            !WordText.startsUppercase(pack.display(id))
        {
            display = pack.display(id)
        }
        // Before the change: the context's scores hold the model too (a second reference would
        // make the change copy all of it).
        forgetAnswers()
        userModel.record(word: display, after: recent, now: now)
        learnedWords.insert(WordText.key(display), pack: pack)
    }

    /// The last one or two words of the sentence before a learned word (oldest first): words
    /// after the last break (a sentence end, a chunk that must not be learned, a word that must
    /// not be recorded). Read from the end, so only the words it keeps are checked, not all of
    /// the last 200 scalars' words at every learned word.
    static func learningContext(_ context: Substring) -> [String] {
        var recent: [String] = []  // newest first
        // The chunks between whitespace, newest first, found from the end: only the last few are
        // read (splitting all of the context walked every character of it at every learned word).
        var end = context.endIndex
        chunks: while true {
            while end > context.startIndex, context[context.index(before: end)].isWhitespace {
                end = context.index(before: end)
                // A line break ends the sentence: the words of the lines before are not context.
                if context[end].unicodeScalars.contains(where: WordText.isLineBreak) { break chunks }
            }
            guard end > context.startIndex else { break }
            var start = end
            while start > context.startIndex, !context[context.index(before: start)].isWhitespace {
                start = context.index(before: start)
            }
            let chunk = context[start..<end]
            end = start
            guard LearningPolicy.mayLearnChunk(chunk) else { break }
            let words = WordText.words(in: chunk)
            if WordText.endsSentence(chunk[(words.last?.endIndex ?? chunk.startIndex)...]) { break }
            for index in words.indices.reversed() {
                let word = String(words[index])
                guard LearningPolicy.mayRecord(word) else { break chunks }
                recent.append(word)
                if recent.count == 2 { break chunks }
                let gapStart = index > words.startIndex ? words[index - 1].endIndex : chunk.startIndex
                if WordText.endsSentence(chunk[gapStart..<words[index].startIndex]) { break chunks }
            }
        }
        return recent.reversed()
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
        forgetAnswers()
        userModel = model
        learnedWords.isStale = true
    }

    /// The best `count` words for the text before the cursor.
    public func suggest(before: String, count: Int) -> [String] {
        suggestions(before: before, count: count).map(\.text)
    }

    /// The best `count` suggestions for the text before the cursor, with scores.
    public func suggestions(before: String, count: Int) -> [Suggestion] {
        guard count > 0 else { return [] }
        let (context, partial, text) = Self.readContext(before)
        let cacheKey = ResultKey(count: count, text: text)
        lastAnswerPath = .cached
        if let cached = resultCache[cacheKey] { return cached }
        if document.update(context: context, pack: pack) { forgetContext() }
        var result = compute(context: context, partial: partial, count: count)
        // Hyphenated compounds the dictionary lacks, completed part by part (CompoundCompletion).
        result = fillingWithCompoundParts(result, context: context, partial: partial, count: count)
        if resultCache.count > 256 { resultCache.removeAll(keepingCapacity: true) }
        resultCache[cacheKey] = result
        return result
    }

    /// The most scalars of context (the text before the word) the predictor reads.
    static let contextScalars = 1000

    /// The context and the word being typed, each cut to its last `contextScalars` scalars, and
    /// the text they make together (the result cache's key).
    ///
    /// The context is cut on its own, not together with the word: cutting the whole text to its
    /// last 1,000 scalars would move the context's start with every key of a word once the text
    /// is longer (the engine keeps up to 2,000), so every key would start a new context and be
    /// searched afresh instead of narrowing the last key's candidates.
    static func readContext(_ before: String) -> (context: Substring, partial: Substring, text: String) {
        // At most 1,000 bytes are at most 1,000 scalars: no copy for a short text.
        if before.utf8.count <= contextScalars {
            let (context, partial) = WordText.splitPartialWord(before)
            return (context, partial, before)
        }
        var (context, partial) = WordText.splitPartialWord(before)
        let partialEnd = partial.unicodeScalars.suffix(contextScalars)
        if partialEnd.startIndex != partial.startIndex {
            // A "word" this long is no word; only its end is read, with no context.
            partial = Substring(partialEnd)
            context = ""
        } else if context.utf8.count > contextScalars {
            context = Substring(context.unicodeScalars.suffix(contextScalars))
        }
        return (context, partial, String(context) + String(partial))
    }

    /// Pack ids of every key the learned model may hold, in any context: a superset (a word
    /// the model dropped stays), made again from the model after a change other than learning.
    private struct LearnedWords {
        var bits: [UInt64] = []
        /// Made from the model before that change (made again before the next use).
        var isStale = true
        /// A learned key may equal a pack key as a string but not as bytes (see `mayEqualASCII`):
        /// no pack word is known not to be learned.
        var isUnsure = false

        mutating func insert(_ key: String, pack: LanguagePack) {
            guard !isStale else { return }
            if Predictor.mayEqualASCII(key) { isUnsure = true }
            guard let id = pack.id(ofKey: key) else { return }
            if bits.count <= id / 64 { bits += repeatElement(0, count: id / 64 + 1 - bits.count) }
            bits[id / 64] |= 1 << UInt64(id % 64)
        }

        mutating func rebuild(from model: UserModel, pack: LanguagePack) {
            bits = [UInt64](repeating: 0, count: pack.wordCount / 64 + 1)
            isUnsure = false
            isStale = false
            for entry in model.allEntries { insert(entry.key, pack: pack) }
        }

        /// Whether the model may hold the pack word `id` (its key's bytes are ASCII).
        func mayHold(_ id: Int) -> Bool {
            isUnsure || id / 64 >= bits.count || bits[id / 64] & (1 << UInt64(id % 64)) != 0
        }
    }

    /// Whether a key that is not ASCII may still equal an ASCII key as a Swift string (canonical
    /// equivalence): only through the characters whose canonical decomposition is ASCII (the
    /// Greek question mark, the Greek varia, the Kelvin sign). Any other non-ASCII string differs
    /// from every ASCII one, so for an ASCII key, equal as strings is equal as bytes.
    static func mayEqualASCII(_ key: String) -> Bool {
        key.utf8.contains { $0 >= 0x80 }
            && key.unicodeScalars.contains { $0 == "\u{037E}" || $0 == "\u{1FEF}" || $0 == "\u{212A}" }
    }

    /// Whether a pack word's key is ASCII (then the by-id lookups give what lookups by its key give).
    private func keyIsASCII(_ id: Int) -> Bool {
        if asciiKeys.isEmpty { asciiKeys = [UInt64](repeating: 0, count: 2 * (pack.wordCount / 64 + 1)) }
        let word = 2 * (id / 64)
        let bit: UInt64 = 1 << UInt64(id % 64)
        if asciiKeys[word] & bit != 0 { return asciiKeys[word + 1] & bit != 0 }
        let ascii = !pack.keyBytes(id).contains { $0 >= 0x80 }
        asciiKeys[word] |= bit
        if ascii { asciiKeys[word + 1] |= bit }
        return ascii
    }

    /// `keyIsASCII` remembered, two bits a pack word (known, ASCII) side by side: the pack's key
    /// of a candidate is a random read in a few megabytes, mostly missing the caches.
    private var asciiKeys: [UInt64] = []
    /// The pack word whose key is empty, if any (a string equals the empty one only when it is).
    private lazy var emptyKeyID: Int? = pack.id(ofKey: "")

    /// `pack.id(ofKey:)` of learned keys, remembered (a key by its bytes, as the pack finds
    /// it): the learned candidates of a prefix are asked again at every key, and a search in
    /// the pack reads a few dozen of its keys, mostly missing the caches. -1: not in the pack.
    private var learnedKeyIDs: [BytesKey: Int] = [:]

    func packID(ofLearnedKey key: String) -> Int? {
        guard reusesCandidates else { return pack.id(ofKey: key) }
        if let known = learnedKeyIDs[BytesKey(text: key)] { return known >= 0 ? known : nil }
        let id = pack.id(ofKey: key)
        if learnedKeyIDs.count >= 4096 { learnedKeyIDs.removeAll(keepingCapacity: true) }
        learnedKeyIDs[BytesKey(text: key)] = id ?? -1
        return id
    }

    /// A string compared and hashed as its UTF-8 bytes (equal exactly when the scalars are).
    private struct BytesKey: Hashable {
        var text: String

        static func == (a: BytesKey, b: BytesKey) -> Bool { DocumentCache.sameScalars(a.text[...], b.text[...]) }

        func hash(into hasher: inout Hasher) {
            let hashed: Void? = text.utf8.withContiguousStorageIfAvailable {
                hasher.combine(bytes: UnsafeRawBufferPointer($0))
            }
            if hashed == nil { Array(text.utf8).withUnsafeBytes { hasher.combine(bytes: $0) } }
        }
    }

    /// Whether a pack word's key is `key` (as a Swift string), without making the word's string
    /// when both are ASCII.
    private func packKey(_ id: Int, equals key: String, keyIsASCII: Bool) -> Bool {
        // Only an empty string equals the empty one (any scalar makes a character).
        if key.isEmpty { return id == emptyKeyID }
        let bytes = pack.keyBytes(id)
        if keyIsASCII, self.keyIsASCII(id) {
            guard bytes.count == key.utf8.count else { return false }
            return bytes.elementsEqual(key.utf8)
        }
        return pack.key(id) == key
    }

    /// `packKey(id, equals: key, keyIsASCII:)` of a pool candidate, remembering the byte count
    /// of its key when it is ASCII: at the next keys of the word, a key of another length is
    /// not the prefix, and the pack's key (a random read, mostly missing the caches) is not read.
    private func poolKey(_ candidate: inout Candidate, _ id: Int, equals key: String, keyIsASCII: Bool) -> Bool {
        if key.isEmpty { return id == emptyKeyID }
        if keyIsASCII, candidate.asciiKeyBytes >= 0 {
            guard Int(candidate.asciiKeyBytes) == key.utf8.count else { return false }
        }
        let bytes = pack.keyBytes(id)
        if keyIsASCII, self.keyIsASCII(id) {
            candidate.asciiKeyBytes = Int32(bytes.count)
            guard bytes.count == key.utf8.count else { return false }
            return bytes.elementsEqual(key.utf8)
        }
        return pack.key(id) == key
    }

    // MARK: Scoring

    private struct Candidate {
        var id: Int?  // nil: a word from the document that the pack lacks
        /// Empty for a pack word until it may reach the window (`withKey`): most candidates
        /// never do, and making each one's string was a good part of the next word's time.
        var key: String
        var display: String
        /// The word model's probability of the word here (before the log and any penalty).
        var probability: Float
        /// Subtracted from the log of `probability`: the penalty of a typo correction.
        var penalty: Float = 0
        /// The word model's log score, `log(probability) - penalty`; NaN until `settle()` (the
        /// log is computed only for candidates that may reach the window).
        var wordScore: Float = .nan
        var total: Float = 0
        /// Offered because a neighbouring key or a swap makes the typed prefix a likely word.
        var isCorrection = false
        /// Added to the window as one of the re-ranker's likely words (`addLikelyWords`).
        var isLikelyWord = false
        /// Which prefix-narrowable sources offered it (see `narrowedCandidates`).
        var sources: CandidateSources = []
        /// The byte count of a pack word's key once it is known to be ASCII (-1: not known).
        var asciiKeyBytes: Int32 = -1

        /// Fills in a pack word's key.
        mutating func withKey(_ pack: LanguagePack) {
            if key.isEmpty, let id { key = pack.key(id) }
        }

        /// Takes the log of the probability (once).
        mutating func settle() {
            if wordScore.isNaN { wordScore = Math.log(max(probability, 1e-12)) - penalty }
        }

        init(id: Int?, key: String, display: String, probability: Float, sources: CandidateSources = []) {
            self.id = id
            self.key = key
            self.display = display
            self.probability = probability
            self.sources = sources
        }
    }

    /// Sources of a candidate whose members for a longer prefix are found among those for a shorter one.
    private struct CandidateSources: OptionSet {
        let rawValue: UInt8
        /// In the prefix's dictionary range: the best by prior, or a successor of the previous words.
        static let range = CandidateSources(rawValue: 1)
        /// A word of the document with the prefix.
        static let document = CandidateSources(rawValue: 2)
    }

    /// All candidates of one prefix in one context (in no particular order): the last key's, kept
    /// so the next key (the same word, one letter longer) can narrow them instead of searching.
    private struct CandidatePool {
        var prefixKey: String
        var candidates: [Candidate]
        /// `topByPrior(range(ofPrefix: prefixKey), limit: priorLimit)`.
        var topByPrior: [Int]
        /// Whether a longer prefix may narrow these candidates (no typo corrections among them).
        var extensible: Bool
    }

    /// Words of the prefix's range taken by prior.
    private static let priorLimit = 40

    /// What the previous words give every candidate of this context, computed once per context
    /// (the text before the word being typed) instead of once per key.
    private struct ContextScores {
        var trigramProb = IDTable<Float>()
        var bigramProb = IDTable<Float>()
        var bigramBackoff: Float = 1
        var trigramBackoff: Float = 1
        var userTrigram: [String: LearnedEntry] = [:]
        var userBigram: [String: LearnedEntry] = [:]
        /// `userBigram`'s entries then `userTrigram`'s, most used first (`learnedCandidates`),
        /// sorted once per context instead of once per key.
        var learnedSuccessors: [LearnedEntry] = []
        var userTotals: (one: Float, two: Float, three: Float) = (0, 0, 0)
        /// The learned model these scores were made with: read from here, a value the scoring
        /// does not copy (reading the predictor's property copied it, with a retain and release
        /// of each of its buffers, for every candidate).
        var users: UserModel
        var cacheWeight: Float = 0
        /// Whether the context ends a sentence (`WordText.isSentenceStart`), read once per context.
        var startsSentence = false
        /// `document.words` counts and `followers` of pack words, by id: for ASCII keys, when
        /// no document word may equal an ASCII key as a string but not as bytes (`byID`).
        var documentCounts = IDTable<Int>()
        var followersByID = IDTable<Int>()
        var byID = true
        var followers: [String: Int] = [:]
        var followerMass: Float = 0
        var followerWeight: Float = 0
    }

    private func makeContextScores(context: Substring) -> ContextScores {
        var scores = ContextScores(users: userModel)
        scores.startsSentence = WordText.isSentenceStart(context)
        let (previous, beforePrevious) = document.lastWords
        let bigram = pack.bigramSuccessors(of: previous ?? pack.sentenceStartID)
        let trigram = previous.flatMap { p in beforePrevious.flatMap { pack.trigramSuccessors(of: $0, p) } }
        let unknownPrevious = previous == nil && !scores.startsSentence
        // Successor probabilities of the previous words, by id.
        if let trigram {
            scores.trigramProb = IDTable(capacity: trigram.entries.count)
            for entry in trigram.entries {
                let (id, probability) = successorProbability(entry)
                scores.trigramProb.set(id, probability)
            }
        }
        if !unknownPrevious {
            scores.bigramProb = IDTable(capacity: bigram.entries.count)
            for entry in bigram.entries {
                let (id, probability) = successorProbability(entry)
                scores.bigramProb.set(id, probability)
            }
        }
        scores.bigramBackoff = unknownPrevious ? 1 : bigram.weight
        scores.trigramBackoff = trigram?.weight ?? 1
        // The user's own words and phrases.
        let lastKeys = document.lastKeys
        let userContexts = [lastKeys.joined(separator: " "), lastKeys.last ?? ""]
        scores.userTrigram = lastKeys.count == 2 ? userModel.successors(of: userContexts[0]) : [:]
        scores.userBigram = lastKeys.isEmpty ? [:] : userModel.successors(of: userContexts[1])
        // A stable sort: entries that tie keep this order, so filtering the sorted list by a
        // prefix gives what sorting the filtered entries gave.
        scores.learnedSuccessors = (Array(scores.userBigram.values) + Array(scores.userTrigram.values)).sorted {
            ($0.count, $1.key) > ($1.count, $0.key)
        }
        scores.userTotals = (
            one: Float(userModel.total(of: "")), two: Float(userModel.total(of: userContexts[1])),
            three: lastKeys.count == 2 ? Float(userModel.total(of: userContexts[0])) : 0
        )
        let cacheMass = Double(document.totalWords)
        scores.cacheWeight = Float(options.cacheWeight * cacheMass / (cacheMass + 20))
        scores.followers = document.lastWordFollowers
        scores.documentCounts = IDTable(capacity: document.words.count)
        for (key, entry) in document.words {
            if let id = entry.id { scores.documentCounts.set(id, entry.count) }
            if Self.mayEqualASCII(key) { scores.byID = false }
        }
        for (key, count) in scores.followers {
            if let id = document.words[key]?.id { scores.followersByID.set(id, count) }
        }
        if learnedWords.isStale { learnedWords.rebuild(from: userModel, pack: pack) }
        scores.followerMass = Float(scores.followers.values.reduce(0, +))
        scores.followerWeight =
            scores.followerMass > 0
            ? Float(options.cacheBigramWeight) * scores.followerMass / (scores.followerMass + 2) : 0
        return scores
    }

    /// Word model: interpolated trigram/bigram/unigram, mixed with the document cache and the
    /// user's counts (the probability; `Candidate.settle()` takes its log). Depends on the
    /// context only, never on the typed prefix.
    private func wordProbability(id: Int?, key: String, _ scores: ContextScores) -> Float {
        var p: Float = 0
        if let id {
            let unigram = unigramProbability(id)
            let lower = (scores.bigramProb[id] ?? 0) + scores.bigramBackoff * unigram
            p = (scores.trigramProb[id] ?? 0) + scores.trigramBackoff * lower
        } else {
            p = 1e-7
        }
        let cached = document.words[key].map { Float($0.count) / Float(max(1, document.totalWords)) } ?? 0
        let followed = Float(scores.followers[key] ?? 0)
        return mixed(p, cached: cached, followed: followed, key: key, scores)
    }

    /// `wordProbability(id:key:scores)` of a pack word, by id: its key's string is made only
    /// where a lookup by string may find what a lookup by id does not (a key that is not ASCII,
    /// a word the learned model may hold).
    private func wordProbability(id: Int, _ scores: ContextScores) -> Float {
        // The reference (`reusesCandidates` off) looks up by string, for tests that compare both.
        guard reusesCandidates, scores.byID, keyIsASCII(id) else {
            return wordProbability(id: id, key: pack.key(id), scores)
        }
        let unigram = unigramProbability(id)
        let lower = (scores.bigramProb[id] ?? 0) + scores.bigramBackoff * unigram
        let p = (scores.trigramProb[id] ?? 0) + scores.trigramBackoff * lower
        let cached = scores.documentCounts[id].map { Float($0) / Float(max(1, document.totalWords)) } ?? 0
        let followed = Float(scores.followersByID[id] ?? 0)
        return mixed(
            p, cached: cached, followed: followed, key: learnedWords.mayHold(id) ? pack.key(id) : nil, scores)
    }

    /// The word model's probability mixed with the document cache and the user's counts (`key`
    /// nil: a word the learned model does not hold).
    @inline(__always)
    private func mixed(_ model: Float, cached: Float, followed: Float, key: String?, _ scores: ContextScores) -> Float {
        var p = model
        let cacheWeight = scores.cacheWeight
        p = (1 - cacheWeight) * p + cacheWeight * cached
        let followerWeight = scores.followerWeight
        if followerWeight > 0 {
            p = (1 - followerWeight) * p + followerWeight * followed / scores.followerMass
        }
        let userTotals = scores.userTotals
        if userTotals.one > 0 {
            // Back-off over the user's own counts: two words of context, one, none.
            var one: Float = 0
            var two: Float = 0
            var three: Float = 0
            if let key {
                one = Float(scores.users.word(key)?.count ?? 0) / userTotals.one
                two = userTotals.two > 0 ? Float(scores.userBigram[key]?.count ?? 0) / userTotals.two : 0
                three = userTotals.three > 0 ? Float(scores.userTrigram[key]?.count ?? 0) / userTotals.three : 0
            } else {
                one = 0 / userTotals.one
                two = userTotals.two > 0 ? 0 / userTotals.two : 0
                three = userTotals.three > 0 ? 0 / userTotals.three : 0
            }
            let w3 = userTotals.three / (userTotals.three + 2)
            let w2 = (1 - w3) * userTotals.two / (userTotals.two + 2)
            let personal = w3 * three + w2 * two + (1 - w3 - w2) * one
            // Trust grows with everything the user typed, and faster with this very context.
            let overall = userTotals.one / (userTotals.one + 100)
            let contextual = max(userTotals.two / (userTotals.two + 2), userTotals.three / (userTotals.three + 1))
            let weight = Float(options.userWeight) * max(overall, contextual)
            p = (1 - weight) * p + weight * personal
        }
        return p
    }

    /// `Math.exp(pack.logPrior(id))`, remembered by the stored prior (a few thousand values).
    private func unigramProbability(_ id: Int) -> Float {
        let cost = Int(pack.priors[id])
        if cost < unigramByCost.count, !unigramByCost[cost].isNaN { return unigramByCost[cost] }
        if cost >= unigramByCost.count { unigramByCost += repeatElement(.nan, count: cost + 1 - unigramByCost.count) }
        unigramByCost[cost] = Math.exp(pack.logPrior(id))
        return unigramByCost[cost]
    }

    /// `Math.exp` of a successor entry's log probability, remembered by its 12-bit cost.
    private func successorProbability(_ entry: UInt32) -> (id: Int, probability: Float) {
        let cost = Int(entry >> 20)
        if successorByCost.isEmpty { successorByCost = [Float](repeating: .nan, count: 4096) }
        if successorByCost[cost].isNaN { successorByCost[cost] = Math.exp(LanguagePack.decodeSuccessor(entry).logProb) }
        return (LanguagePack.decodeSuccessor(entry).id, successorByCost[cost])
    }

    /// Candidates from the learned model: words with the prefix and the most used successors
    /// of the previous words (a bounded window, like the pack's successor lists).
    private func learnedCandidates(prefixKey: String, _ scores: ContextScores) -> [LearnedEntry] {
        var learned = scores.users.words(withPrefix: prefixKey, limit: 12)
        // The context's successors are sorted already (`ContextScores.learnedSuccessors`).
        var taken = 0
        for entry in scores.learnedSuccessors where entry.key.hasPrefix(prefixKey) {
            guard taken < options.learnedSuccessorWindow else { break }
            learned.append(entry)
            taken += 1
        }
        return learned
    }

    /// Candidate sorting: best word score first, ties by key (a total order, so the order the
    /// candidates were gathered in never matters).
    private static func byWordScore(_ a: Candidate, _ b: Candidate) -> Bool {
        (a.wordScore, b.key) > (b.wordScore, a.key)
    }

    /// A pack word's key and word score in the current context, computed once per context:
    /// the next word's candidates and those of each prefix of the word overlap.
    private func scoredWord(_ id: Int, _ scores: ContextScores) -> Float {
        if let known = scoredWords[id] { return known }
        let scored = wordProbability(id: id, scores)
        if scoredWords.count >= 8192 { scoredWords.removeAll() }
        scoredWords.set(id, scored)
        return scored
    }

    /// The best `limit` candidates by word score, best first, as `best` gives them, with the
    /// log taken only of candidates that may be among them (their scores are settled in
    /// `candidates`, so a narrowed pool keeps them).
    ///
    /// Why it is exact: the log is monotone and accurate to 1e-15, and a score is at least
    /// −27.7 (`log(1e-12)`), where a `Float` step is under 4e-6. The `limit` candidates with the
    /// highest `max(probability, 1e-12)` and no penalty all score at least `log(floor)`; a
    /// candidate whose `max(probability, 1e-12)` is below `0.999 * floor` scores more than 1e-3
    /// lower than each of them (a penalty only lowers it), so it is strictly behind `limit`
    /// others and never among the best.
    private func window(_ limit: Int, of candidates: inout [Candidate], prunes: Bool) -> [Candidate] {
        var floor: Float = 0
        if prunes, candidates.count > limit {
            // The `limit`-th highest bound among candidates without a penalty (0: fewer of them).
            var highest: [Float] = []
            highest.reserveCapacity(limit + 1)
            for candidate in candidates where candidate.penalty == 0 {
                let bound = max(candidate.probability, 1e-12)
                if highest.count == limit, bound <= highest[limit - 1] { continue }
                let position = highest.firstIndex { $0 < bound } ?? highest.count
                highest.insert(bound, at: position)
                if highest.count > limit { highest.removeLast() }
            }
            if highest.count == limit { floor = highest[limit - 1] }
        }
        let cut = floor * 0.999
        var kept: [Candidate] = []
        kept.reserveCapacity(min(candidates.count, 2 * limit))
        for index in candidates.indices {
            if candidates[index].penalty >= 0, max(candidates[index].probability, 1e-12) < cut { continue }
            candidates[index].settle()
            candidates[index].withKey(pack)  // `best` breaks ties by key
            kept.append(candidates[index])
        }
        return Self.best(limit, of: kept)
    }

    /// The best `limit` candidates by word score, best first: what sorting all of them and
    /// keeping the first `limit` gives (ties keep their order), without sorting all of them.
    private static func best(_ limit: Int, of candidates: [Candidate]) -> [Candidate] {
        if candidates.count <= limit { return candidates.sorted(by: byWordScore) }
        var best: [Candidate] = []
        best.reserveCapacity(limit + 1)
        for candidate in candidates {
            if best.count == limit, !byWordScore(candidate, best[limit - 1]) { continue }
            // After every candidate it does not beat: an equal one that came first stays first.
            var low = 0
            var high = best.count
            while low < high {
                let middle = (low + high) / 2
                if byWordScore(candidate, best[middle]) { high = middle } else { low = middle + 1 }
            }
            best.insert(candidate, at: low)
            if best.count > limit { best.removeLast() }
        }
        return best
    }

    /// Every candidate of a prefix, from the dictionary and the models.
    private func freshCandidates(
        prefixKey: String, partialScalarCount: Int, _ scores: ContextScores
    ) -> CandidatePool {
        var ids: [Int] = []
        var sources: [CandidateSources] = []
        // The table of the last search, emptied (grown afresh from nothing at every search before).
        var position = IDTable<Int>()
        swap(&position, &searchPositions)
        position.removeAll()
        defer { swap(&position, &searchPositions) }
        func add(_ id: Int, _ source: CandidateSources) {
            if let index = position[id] {
                sources[index].formUnion(source)
            } else {
                position.set(id, ids.count)
                ids.append(id)
                sources.append(source)
            }
        }
        let range = prefixKey.isEmpty ? 0..<0 : pack.range(ofPrefix: prefixKey)
        var top: [Int] = []
        if prefixKey.isEmpty {
            for id in pack.topWords.prefix(64) { add(Int(id), []) }
        } else {
            top = bestByPrior(prefixKey: prefixKey, range)
            for id in top { add(id, .range) }
        }
        // Typo-tolerant completions: when the typed prefix is unlikely, the prefixes one
        // neighbouring key or one swap away may hold the word meant (`tge` → `the`).
        var corrections: [Int: Float] = [:]
        if typoCompletionsApply(range: range, top: top, partialScalarCount: partialScalarCount) {
            for (variant, penalty) in prefixVariants(Array(prefixKey.unicodeScalars)) {
                for id in topByPrior(pack.range(ofPrefix: variant), limit: 3) where !range.contains(id) {
                    if corrections[id].map({ $0 < penalty }) ?? true { corrections[id] = penalty }
                    add(id, [])
                }
            }
        }
        scores.trigramProb.forEachID { id in if range.contains(id) || prefixKey.isEmpty { add(id, .range) } }
        scores.bigramProb.forEachID { id in if range.contains(id) || prefixKey.isEmpty { add(id, .range) } }
        var documentOnly: [(key: String, display: String, sources: CandidateSources)] = []
        var documentOnlyKeys = Set<String>()
        for (key, entry) in document.words where key.hasPrefix(prefixKey) {
            if let id = entry.id {
                add(id, .document)
            } else if documentOnlyKeys.insert(key).inserted {
                documentOnly.append((key, entry.display, .document))
            }
        }
        for entry in learnedCandidates(prefixKey: prefixKey, scores) {
            if let id = packID(ofLearnedKey: entry.key) {
                add(id, [])
            } else if documentOnlyKeys.insert(entry.key).inserted {
                documentOnly.append((entry.key, entry.display, []))
            }
        }

        var candidates: [Candidate] = []
        candidates.reserveCapacity(ids.count + documentOnly.count)
        let prefixIsASCII = !prefixKey.utf8.contains { $0 >= 0x80 }
        for (index, id) in ids.enumerated() {
            // The typed text itself is already in the field.
            if packKey(id, equals: prefixKey, keyIsASCII: prefixIsASCII) { continue }
            // The key and the display form are settled later, for the window only.
            var candidate = Candidate(
                id: id, key: "", display: "", probability: scoredWord(id, scores), sources: sources[index])
            if let penalty = corrections[id] {
                candidate.isCorrection = true
                candidate.penalty = penalty
            }
            candidates.append(candidate)
        }
        for (key, display, source) in documentOnly where key != prefixKey {
            candidates.append(
                Candidate(
                    id: nil, key: key, display: display, probability: wordProbability(id: nil, key: key, scores),
                    sources: source))
        }
        // Only a pool without corrections can be narrowed: corrections depend on the whole prefix.
        // The next word's pool narrows too, to the first letter: its sources that a letter's
        // search also has (successors, the document) are all of theirs for the empty prefix.
        return CandidatePool(
            prefixKey: prefixKey, candidates: candidates, topByPrior: top, extensible: corrections.isEmpty)
    }

    /// The candidates of a prefix that extends the previous key's prefix in the same context,
    /// narrowed from the previous key's candidates; nil where that cannot give exactly what
    /// `freshCandidates` gives.
    ///
    /// Why it is exact: every candidate came from a source whose members for the longer prefix
    /// are a subset of its members for the shorter one — the dictionary range and the pack's
    /// successors (`range` shrinks), the document's words (`hasPrefix` on a longer prefix) —
    /// except three bounded lists: the 40 words of the range with the best prior, and the
    /// learned words and successors (12 each). The learned lists are asked again. The best 40 of
    /// the shorter range that lie in the longer one are the best of the longer range, as all its
    /// other words ranked below them; they are all of its best 40 only when there are 40 of them
    /// or the longer range holds no more — otherwise the range is searched again. Typo
    /// corrections depend on the whole prefix: a pool with them is never narrowed, and a prefix
    /// that needs them is computed afresh. Word scores depend on the context only.
    private func narrowedCandidates(
        prefixKey: String, partialScalarCount: Int, _ scores: ContextScores
    ) -> CandidatePool? {
        guard reusesCandidates, let pool = candidatePool, pool.extensible, !prefixKey.isEmpty,
            prefixKey.utf8.starts(with: pool.prefixKey.utf8), prefixKey.hasPrefix(pool.prefixKey)
        else { return nil }
        let range = pack.range(ofPrefix: prefixKey)
        var top = pool.topByPrior.filter { range.contains($0) }
        if top.count < min(Self.priorLimit, range.count) { top = bestByPrior(prefixKey: prefixKey, range) }
        if typoCompletionsApply(range: range, top: top, partialScalarCount: partialScalarCount) { return nil }

        var candidates: [Candidate] = []
        candidates.reserveCapacity(pool.candidates.count)
        // The table of the last key, emptied (a new one per key was allocated and zeroed).
        var presentIDs = IDTable<UInt8>()
        swap(&presentIDs, &narrowingIDs)
        presentIDs.removeAll()
        defer { swap(&presentIDs, &narrowingIDs) }
        /// Whether `id` was not yet present (it is now).
        func insertID(_ id: Int) -> Bool {
            guard presentIDs[id] == nil else { return false }
            presentIDs.set(id, 1)
            return true
        }
        var presentKeys = Set<String>()  // words the pack lacks
        let prefixIsASCII = !prefixKey.utf8.contains { $0 >= 0x80 }
        // `hasPrefix` compares characters: for ASCII on both sides they are the bytes, except
        // that CR LF is one character (a prefix without CR never ends inside one).
        let prefixBytesDecide = prefixIsASCII && !prefixKey.utf8.contains(0x0D)
        for var candidate in pool.candidates {
            var sources: CandidateSources = []
            if candidate.sources.contains(.range), let id = candidate.id, range.contains(id) {
                sources.insert(.range)
            }
            if candidate.sources.contains(.document) {
                if let id = candidate.id, candidate.key.isEmpty, prefixBytesDecide, keyIsASCII(id) {
                    // Most of the document's words leave the pool here: no string made for them.
                    if pack.keyBytes(id).starts(with: prefixKey.utf8) { sources.insert(.document) }
                } else {
                    candidate.withKey(pack)
                    if candidate.key.hasPrefix(prefixKey) { sources.insert(.document) }
                }
            }
            if sources.isEmpty { continue }
            if let id = candidate.id, candidate.key.isEmpty {
                if poolKey(&candidate, id, equals: prefixKey, keyIsASCII: prefixIsASCII) { continue }
            } else if candidate.key == prefixKey {
                continue
            }
            candidate.sources = sources
            if let id = candidate.id { _ = insertID(id) } else { presentKeys.insert(candidate.key) }
            candidates.append(candidate)
        }
        func addWord(_ id: Int, sources: CandidateSources) {
            if packKey(id, equals: prefixKey, keyIsASCII: prefixIsASCII) { return }
            candidates.append(
                Candidate(id: id, key: "", display: "", probability: scoredWord(id, scores), sources: sources))
        }
        for id in top where insertID(id) { addWord(id, sources: .range) }
        for entry in learnedCandidates(prefixKey: prefixKey, scores) {
            if let id = packID(ofLearnedKey: entry.key) {
                if insertID(id) { addWord(id, sources: []) }
            } else if presentKeys.insert(entry.key).inserted, entry.key != prefixKey {
                candidates.append(
                    Candidate(
                        id: nil, key: entry.key, display: entry.display,
                        probability: wordProbability(id: nil, key: entry.key, scores)))
            }
        }
        return CandidatePool(prefixKey: prefixKey, candidates: candidates, topByPrior: top, extensible: true)
    }

    /// Whether the typed prefix is unlikely enough for typo-tolerant completions (`top`: the
    /// best ids of `range` by prior, as `topByPrior` gives them).
    private func typoCompletionsApply(range: Range<Int>, top: [Int], partialScalarCount: Int) -> Bool {
        guard options.typoTolerantCompletions, partialScalarCount >= 3 else { return false }
        if range.isEmpty { return true }
        // The best prior of the range (lowest cost; ties: the first id).
        guard let best = top.min(by: { (pack.priors[$0], $0) < (pack.priors[$1], $1) }) else { return true }
        return pack.logPrior(best) < options.unlikelyPrefixLogPrior
    }

    private func compute(context: Substring, partial: Substring, count: Int) -> [Suggestion] {
        lastAnswerPath = .none
        if WordText.containsDigit(partial) { return [] }
        let prefixKey = WordText.key(partial)
        // After a name's word, words often written with a capital continue the name, and so do
        // words this document has written with one inside a sentence (`Mike Pence`, where the
        // pack knows `pence` the coin).
        let continuesName = partial.isEmpty && document.lastWordIsName
        let scores: ContextScores
        if let known = contextScores {
            scores = known
        } else {
            scores = makeContextScores(context: context)
            contextScores = scores
        }
        let startsSentence = scores.startsSentence
        let partialScalarCount = partial.unicodeScalars.count
        var pool: CandidatePool
        if let narrowed = narrowedCandidates(prefixKey: prefixKey, partialScalarCount: partialScalarCount, scores) {
            pool = narrowed
            narrowedKeys += 1
            lastAnswerPath = .narrowed
        } else {
            pool = freshCandidates(prefixKey: prefixKey, partialScalarCount: partialScalarCount, scores)
            lastAnswerPath = prefixKey.isEmpty ? .nextWord : pool.extensible ? .searched : .corrected
        }
        let windowLimit = prefixKey.isEmpty ? options.nextWordWindowSize : options.windowSize
        var candidates = window(windowLimit, of: &pool.candidates, prunes: reusesCandidates)
        candidatePool = pool  // with the scores settled here, for the next key
        addLikelyWords(to: &candidates, prefixKey: prefixKey, scores)
        let trigramProb = scores.trigramProb
        let bigramProb = scores.bigramProb
        for index in candidates.indices {
            guard let id = candidates[index].id else { continue }
            var display = displayForm(id, key: candidates[index].key, scores)
            if continuesName,
                pack.wordFlags(id).contains(.sometimesCapitalized)
                    || document.words[candidates[index].key]?.isMostlyCapitalizedMidSentence == true
            {
                display = WordText.capitalizingFirst(display)
            }
            if partial.isEmpty, document.lastWordsInCapitals { display = display.uppercased() }
            candidates[index].display = display
        }

        // Re-rank the window with the character model and the savings preference.
        let model = pack.characterModel
        let history =
            options.useCharacterModel
            ? Array(model.symbols(context.unicodeScalars.suffix(model.order * 2)).suffix(model.order - 1)) : []
        // A neutral history: the word after a plain space. Subtracting the word's score there
        // keeps only what the context adds, so the prior is not counted twice.
        let neutral = model.symbols(CollectionOfOne(" "))
        characterScores.use(history: history, keeps: reusesCandidates)
        // The reference computes every score in full.
        if !reusesCandidates { characterScores.inContext.removeAll() }
        for index in candidates.indices {
            var total = candidates[index].wordScore
            if options.useCharacterModel {
                let (id, key) = (candidates[index].id, candidates[index].key)
                let inContext: Float
                let alone: Float
                if let known = characterScores.inContext[id, key], let knownAlone = characterScores.alone[id, key] {
                    (inContext, alone) = (known, knownAlone)
                } else {
                    var symbols = model.symbols(key.unicodeScalars)
                    symbols += neutral  // the space after the word
                    if reusesCandidates {
                        inContext = model.logProb(of: symbols, after: history, memo: &positionScores)
                        alone =
                            characterScores.alone[id, key]
                            ?? model.logProb(of: symbols, after: neutral, memo: &positionScores)
                    } else {
                        // The reference computes every position's score.
                        inContext = model.logProb(of: symbols, after: history)
                        alone = characterScores.alone[id, key] ?? model.logProb(of: symbols, after: neutral)
                    }
                    characterScores.remember(id: id, key: key, inContext: inContext, alone: alone)
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
                    score: candidate.total, isLikelyWord: candidate.isLikelyWord)
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

    /// Adds to the next word's window the pack words that the re-ranker's word model finds most
    /// likely and the dictionary's order left out (`nextWordProposals`), then orders it by word
    /// score again. The model chooses among the dictionary's words, it never makes one: a word
    /// the pack lacks is never proposed, and the re-ranker then orders them all.
    private func addLikelyWords(to candidates: inout [Candidate], prefixKey: String, _ scores: ContextScores) {
        let limit = options.nextWordProposals
        guard prefixKey.isEmpty, limit > 0, let reranker else { return }
        let likely = reranker.likelyWords(after: document.documentKeys)
        var added = 0
        for id in likely where added < limit {
            if candidates.contains(where: { $0.id == id }) { continue }
            var candidate = Candidate(id: id, key: "", display: "", probability: scoredWord(id, scores), sources: [])
            candidate.settle()
            candidate.withKey(pack)
            candidate.isLikelyWord = true
            candidates.append(candidate)
            added += 1
        }
        if added > 0 { candidates.sort(by: Self.byWordScore) }
    }

    /// How a pack word is shown in the current context (before a name's capital), remembered
    /// per context: the keys of a word mostly show the same words.
    private func displayForm(_ id: Int, key: String, _ scores: ContextScores) -> String {
        if reusesCandidates, let known = displayIndex[id] { return displayForms[known] }
        // The document's own spelling wins only for words often written as (part of) a name,
        // in the pack or in this document.
        var display = pack.display(id)
        // The flags and the learned words' bitset first: each rules out a string lookup for most words.
        let mayBeLearned = !(reusesCandidates && !learnedWords.isStale && keyIsASCII(id) && !learnedWords.mayHold(id))
        let known = document.words[key]
        if !pack.wordFlags(id).intersection([.capitalized, .sometimesCapitalized]).isEmpty
            || known?.isWrittenAsName == true,
            let written = known?.display, !WordText.isAllCaps(written)
        {
            display = written
        } else if mayBeLearned, let learned = scores.users.word(key)?.display, !WordText.isAllCaps(learned) {
            // How this user writes the word (`Inkling`, a product, not `inkling`).
            display = learned
        }
        if reusesCandidates {
            if displayForms.count >= 4096 {
                displayIndex.removeAll()
                displayForms.removeAll(keepingCapacity: true)
            }
            displayIndex.set(id, displayForms.count)
            displayForms.append(display)
        }
        return display
    }

    /// The re-ranker's view of one window candidate (`RerankFeature` order).
    private func rerankFeatures(
        of candidate: Candidate, rank: Int, partialLength: Int,
        trigramProb: IDTable<Float>, bigramProb: IDTable<Float>, startsSentence: Bool
    ) -> [Float] {
        var features = [Float](repeating: 0, count: RerankFeature.count)
        func set(_ feature: RerankFeature, _ value: Float) { features[feature.rawValue] = value }
        set(.total, candidate.total)
        set(.wordScore, candidate.wordScore)
        if options.useCharacterModel, let inContext = characterScores.inContext[candidate.id, candidate.key],
            let alone = characterScores.alone[candidate.id, candidate.key]
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

    /// `topByPrior(range, limit: priorLimit)` of a prefix's range, remembered for large ranges:
    /// it depends on the pack only, and a short prefix's range holds thousands of words.
    private func bestByPrior(prefixKey: String, _ range: Range<Int>) -> [Int] {
        guard reusesCandidates, range.count > 512 else { return topByPrior(range, limit: Self.priorLimit) }
        if let known = priorTops[prefixKey] { return known }
        let top = topByPrior(range, limit: Self.priorLimit)
        if priorTops.count >= 1024 { priorTops.removeAll(keepingCapacity: true) }
        priorTops[prefixKey] = top
        return top
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
