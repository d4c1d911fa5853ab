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
    private var pairs: [String: [String: Int]] = [:]
    /// Pack ids of the last and second-to-last word before the cursor (nil: none or unknown).
    private(set) var lastWords: (previous: Int?, beforePrevious: Int?) = (nil, nil)
    private var lastContext: Substring? = nil
    /// Whether the last word before the cursor was written with a capital inside a sentence.
    private(set) var lastWordCapitalizedMidSentence = false

    /// How often each word followed the last word before the cursor, in this document.
    var lastWordFollowers: [String: Int] {
        guard let lastWordKey else { return [:] }
        return pairs[lastWordKey] ?? [:]
    }

    private var lastWordKey: String? = nil
    /// Keys of up to two words before the cursor in the current sentence (oldest first).
    private(set) var lastKeys: [String] = []

    mutating func update(context: Substring, pack: LanguagePack) {
        if let lastContext, lastContext.unicodeScalars.elementsEqual(context.unicodeScalars) { return }
        lastContext = context
        words.removeAll(keepingCapacity: true)
        pairs.removeAll(keepingCapacity: true)
        totalWords = 0
        lastWordCapitalizedMidSentence = false
        var previousKey: String? = nil
        var previousID: Int? = nil
        var beforePreviousID: Int? = nil
        var previousEnd = context.startIndex
        var lastKey: String? = nil
        var recentKeys: [String] = []
        for word in WordText.words(in: context) {
            let gap = context[previousEnd..<word.startIndex]
            let sentenceStart = previousEnd == context.startIndex || gap.contains { $0 == "." || $0 == "!" || $0 == "?" }
            if sentenceStart {
                recentKeys.removeAll()
                previousKey = nil
                previousID = pack.sentenceStartID
                beforePreviousID = nil
            }
            previousEnd = word.endIndex
            if WordText.containsDigit(word) {
                recentKeys.removeAll()
                lastWordCapitalizedMidSentence = false
                previousKey = nil
                beforePreviousID = previousID
                previousID = nil
                lastKey = nil
                continue
            }
            let key = WordText.key(word)
            let id = pack.id(ofKey: key)
            // Show the word as the user wrote it, unless the only evidence is a sentence-initial capital.
            let written = String(word).replacingApostrophes()
            let fallback = id.map { pack.display($0) } ?? written
            var entry = words[key] ?? Entry(id: id, display: sentenceStart ? fallback : written, count: 0)
            entry.count += 1
            if !sentenceStart { entry.display = written }
            words[key] = entry
            totalWords += 1
            if let previousKey { pairs[previousKey, default: [:]][key, default: 0] += 1 }
            recentKeys.append(key)
            if recentKeys.count > 2 { recentKeys.removeFirst() }
            previousKey = key
            lastWordCapitalizedMidSentence = !sentenceStart && WordText.startsUppercase(word) && key != "i" && !key.hasPrefix("i'")
            beforePreviousID = previousID
            previousID = id
            lastKey = key
        }
        // A sentence end after the last word starts a new sentence.
        let gap = context[previousEnd...]
        if previousEnd == context.startIndex || gap.contains(where: { $0 == "." || $0 == "!" || $0 == "?" }) {
            lastWords = (nil, nil)
            lastWordKey = nil
            lastKeys = []
            lastWordCapitalizedMidSentence = false
        } else {
            lastWords = (previousID, beforePreviousID)
            lastWordKey = lastKey
            lastKeys = recentKeys
        }
    }
}

extension String {
    /// The string with typographic apostrophes folded to `'`.
    func replacingApostrophes() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{2019}" ? "'" : $0 }))
    }
}
