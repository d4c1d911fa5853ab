/// Words and word pairs already typed in the current document.
///
/// Names and topic words repeat within a message; this cache makes them candidates and
/// raises them. It is rebuilt from the context only when the context changes (once per
/// word), never per keystroke.
struct DocumentCache {
    struct Entry {
        var id: Int?
        var display: String
        var count: Int
    }

    private(set) var words: [String: Entry] = [:]
    private(set) var totalWords = 0
    /// Pack ids of the last and second-to-last word before the cursor (nil: none or unknown).
    private(set) var lastWords: (previous: Int?, beforePrevious: Int?) = (nil, nil)
    private var lastContext: Substring? = nil
    /// Whether the last word before the cursor was written with a capital inside a sentence.
    private(set) var lastWordCapitalizedMidSentence = false

    /// How often each word followed the last word before the cursor, in this document.
    private(set) var lastWordFollowers: [String: Int] = [:]

    /// Keys of up to two words before the cursor in the current sentence (oldest first).
    private(set) var lastKeys: [String] = []

    /// Keys of up to `NeuralContextTracker.historyLimit` words before the cursor, across
    /// sentences (oldest first): the word language model's context (issue 17).
    private(set) var documentKeys: [String] = []

    /// What the cache needs of one written word; none of it depends on where the word stands.
    private struct Token {
        var key: String
        var id: Int?
        /// As written, with typographic apostrophes folded.
        var written: String
        /// The pack's usual spelling, else `written` (used after a sentence-initial capital).
        var fallback: String
        var containsDigit: Bool
        /// Starts with a capital and is not `I` or `I'…`.
        var capitalized: Bool
    }

    /// The tokens of the last rebuild by written form: the context changes by a word at a time,
    /// so nearly every word of the next rebuild is found here instead of being folded, searched
    /// in the pack and copied again. Bounded by the words of one context.
    private var tokens: [String: Token] = [:]

    private func token(_ word: Substring, surface: String, pack: LanguagePack, previous: [String: Token]) -> Token {
        if let known = previous[surface] ?? tokens[surface] { return known }
        if WordText.containsDigit(word) {
            return Token(key: "", id: nil, written: "", fallback: "", containsDigit: true, capitalized: false)
        }
        let key = WordText.key(word)
        let id = pack.id(ofKey: key)
        let written = surface.replacingApostrophes()
        return Token(
            key: key, id: id, written: written, fallback: id.map { pack.display($0) } ?? written, containsDigit: false,
            capitalized: WordText.startsUppercase(word) && key != "i" && !key.hasPrefix("i'"))
    }

    /// Rebuilds the cache for a context; returns whether it changed (false: the same scalars).
    @discardableResult
    mutating func update(context: Substring, pack: LanguagePack) -> Bool {
        if let lastContext, Self.sameScalars(lastContext, context) { return false }
        lastContext = context
        let previousTokens = tokens
        tokens.removeAll(keepingCapacity: true)
        words.removeAll(keepingCapacity: true)
        totalWords = 0
        lastWordCapitalizedMidSentence = false
        // Word pairs in order; only the last word's followers are ever asked for.
        var pairs: [(previous: String, next: String)] = []
        var previousKey: String? = nil
        var previousID: Int? = nil
        var beforePreviousID: Int? = nil
        var previousEnd = context.startIndex
        var lastKey: String? = nil
        var recentKeys: [String] = []
        var recentDocumentKeys: [String] = []
        for word in WordText.words(in: context) {
            let gap = context[previousEnd..<word.startIndex]
            let sentenceStart =
                previousEnd == context.startIndex || gap.contains { $0 == "." || $0 == "!" || $0 == "?" }
            if sentenceStart {
                recentKeys.removeAll()
                previousKey = nil
                previousID = pack.sentenceStartID
                beforePreviousID = nil
            }
            previousEnd = word.endIndex
            let surface = String(word)
            let token = token(word, surface: surface, pack: pack, previous: previousTokens)
            tokens[surface] = token
            if token.containsDigit {
                recentKeys.removeAll()
                recentDocumentKeys.append("")  // a number: the word model's unknown word
                lastWordCapitalizedMidSentence = false
                previousKey = nil
                beforePreviousID = previousID
                previousID = nil
                lastKey = nil
                continue
            }
            let key = token.key
            let id = token.id
            // Show the word as the user wrote it, unless the only evidence is a sentence-initial capital.
            var entry = words[key] ?? Entry(id: id, display: sentenceStart ? token.fallback : token.written, count: 0)
            entry.count += 1
            if !sentenceStart { entry.display = token.written }
            words[key] = entry
            totalWords += 1
            if let previousKey { pairs.append((previousKey, key)) }
            recentKeys.append(key)
            recentDocumentKeys.append(key)
            if recentKeys.count > 2 { recentKeys.removeFirst() }
            previousKey = key
            lastWordCapitalizedMidSentence = !sentenceStart && token.capitalized
            beforePreviousID = previousID
            previousID = id
            lastKey = key
        }
        documentKeys = Array(recentDocumentKeys.suffix(NeuralContextTracker.historyLimit))
        // A sentence end after the last word starts a new sentence.
        let gap = context[previousEnd...]
        lastWordFollowers = [:]
        if previousEnd == context.startIndex || gap.contains(where: { $0 == "." || $0 == "!" || $0 == "?" }) {
            lastWords = (nil, nil)
            lastKeys = []
            lastWordCapitalizedMidSentence = false
        } else {
            lastWords = (previousID, beforePreviousID)
            lastKeys = recentKeys
            if let lastKey {
                for pair in pairs where pair.previous == lastKey { lastWordFollowers[pair.next, default: 0] += 1 }
            }
        }
        return true
    }

    /// Whether two texts have the same Unicode scalars (canonically equivalent texts differ);
    /// compared as UTF-8 bytes, which are the same exactly when the scalars are.
    static func sameScalars(_ a: Substring, _ b: Substring) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let contiguous = a.utf8.withContiguousStorageIfAvailable { first in
            b.utf8.withContiguousStorageIfAvailable { second in first.elementsEqual(second) }
        }
        if let result = contiguous ?? nil { return result }
        return a.utf8.elementsEqual(b.utf8)
    }
}

extension String {
    /// The string with typographic apostrophes folded to `'`.
    func replacingApostrophes() -> String {
        guard unicodeScalars.contains("\u{2019}") else { return self }
        return String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{2019}" ? "'" : $0 }))
    }
}
