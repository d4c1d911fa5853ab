/// One candidate of the predictor's window as a re-ranker sees it.
public struct RerankCandidate: Sendable, Equatable {
    /// The word's key (lower case, typographic apostrophe folded).
    public var key: String
    /// Numeric features, in `RerankFeature` order (`RerankFeature.count` values).
    public var features: [Float]
    /// The predictor's combined score on input; the re-ranker's score on output (higher is better).
    public var score: Float
    /// Whether the word joined the window as one of the re-ranker's `likelyWords`, not by the
    /// dictionary's order.
    public var isLikelyWord: Bool

    public init(key: String, features: [Float], score: Float, isLikelyWord: Bool = false) {
        self.key = key
        self.features = features
        self.score = score
        self.isLikelyWord = isLikelyWord
    }
}

/// What the re-ranker knows about the text before the candidates.
public struct RerankContext: Sendable, Equatable {
    /// Keys of the previous words of the sentence, oldest first (at most two).
    public var previousKeys: [String]
    /// The letters of the word typed so far (empty: predicting the next word).
    public var partialKey: String
    /// Whether the word starts a sentence.
    public var startsSentence: Bool
    /// Keys of the last words of the document, across sentences but not across a line break,
    /// oldest first (at most `NeuralContextTracker.historyLimit`; empty at the start of the
    /// document or of a line).
    public var documentKeys: [String]

    public init(previousKeys: [String], partialKey: String, startsSentence: Bool, documentKeys: [String] = []) {
        self.previousKeys = previousKeys
        self.partialKey = partialKey
        self.startsSentence = startsSentence
        self.documentKeys = documentKeys
    }
}

/// Re-orders the predictor's candidate window (the dictionary proposes, the re-ranker orders).
///
/// The predictor calls it once per query with its best `windowSize` candidates, plus the pack
/// words among `likelyWords` that the dictionary's order left out; the re-ranker rewrites their
/// `score`s and the predictor sorts by them. Every word it sees is a pack (or learned) word.
public protocol CandidateReranker: AnyObject {
    /// Rewrites `score` of every candidate.
    func rerank(_ candidates: inout [RerankCandidate], context: RerankContext)
    /// Pack ids of the words the re-ranker's model finds most likely after the document's last
    /// keys (`RerankContext.documentKeys`), best first; empty: it has no such opinion.
    func likelyWords(after documentKeys: [String]) -> [Int]
}

extension CandidateReranker {
    /// No likely words of its own: the window is the dictionary's order alone.
    public func likelyWords(after documentKeys: [String]) -> [Int] { [] }
}

/// The features the predictor hands a re-ranker, by index into `RerankCandidate.features`.
public enum RerankFeature: Int, CaseIterable, Sendable {
    /// The predictor's combined score (word model + character model).
    case total
    /// Interpolated word n-gram log probability (with document cache and learned words).
    case wordScore
    /// What the context adds to the character model's log probability of the word.
    case characterContext
    /// The character model's context-free log probability of the word.
    case characterAlone
    /// The pack's unigram log prior (−20 for a word the pack lacks).
    case logPrior
    /// log(p + 1e−6) of the word after the previous two words (pack trigrams).
    case trigramLog
    /// log(p + 1e−6) of the word after the previous word (pack bigrams).
    case bigramLog
    /// 1 when the word assumes a typo in the typed prefix.
    case isCorrection
    /// Letters typed of the word.
    case typedLength
    /// Letters the candidate adds to what was typed.
    case remainingLength
    /// log(1 + times the word occurs in this document).
    case documentCount
    /// log(1 + times the user typed the word).
    case learnedCount
    /// Position in the window by word score, divided by the typing window's size (`windowSize`).
    case windowRank
    /// 1 when nothing of the word is typed yet.
    case nextWord
    /// 1 at the start of a sentence.
    case sentenceStart

    /// Number of features.
    public static var count: Int { allCases.count }
}
