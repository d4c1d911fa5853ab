/// Words and word pairs already typed in the current document.
///
/// Names and topic words repeat within a message; this cache makes them candidates and
/// raises them. It is rebuilt from the context only when the context changes (once per
/// word); a context that only lost its first scalars (the predictor's window, at every letter
/// once the text is long) is updated from what it lost.
struct DocumentCache {
    struct Entry: Equatable {
        var id: Int?
        var display: String
        var count: Int
        /// Occurrences not at a sentence start, and those of them written with a capital.
        var midSentence = 0
        var capitalizedMidSentence = 0

        /// Whether this document writes the word as a name: with a capital in most of its
        /// occurrences inside a sentence, at least twice (`Senator`, `Pence`, where the pack
        /// knows `senator` and the coin).
        var isWrittenAsName: Bool { capitalizedMidSentence >= 2 && isMostlyCapitalizedMidSentence }

        /// Whether most of the word's occurrences inside a sentence, one at least, have a capital:
        /// enough after another name's word (`Mike Pence` once, then `Mike `).
        var isMostlyCapitalizedMidSentence: Bool { 2 * capitalizedMidSentence > midSentence }

        /// Counts one more occurrence of the word, written as `token`.
        fileprivate mutating func count(_ token: Token, sentenceStart: Bool) {
            count += 1
            guard !sentenceStart else { return }
            display = token.written
            midSentence += 1
            if token.capitalized { capitalizedMidSentence += 1 }
        }
    }

    private(set) var words: [String: Entry] = [:]
    private(set) var totalWords = 0
    /// Pack ids of the last and second-to-last word before the cursor (nil: none or unknown).
    private(set) var lastWords: (previous: Int?, beforePrevious: Int?) = (nil, nil)
    private var lastContext: Substring? = nil
    /// Whether the last word before the cursor reads as part of a name: written with a capital
    /// inside a sentence (`the White`), or at a sentence start when the pack writes it with a
    /// capital too (`Donald`, not `The`), so a word often capitalised after it continues the name.
    private(set) var lastWordIsName = false
    /// Whether the last two words before the cursor are in capitals, with only spaces between
    /// and after them: the writer is shouting or writing a heading, and in the English corpus
    /// the next word is in capitals three times in four (1,126 of 1,472); after one such word,
    /// once in seven (an acronym: `NASA said`).
    private(set) var lastWordsInCapitals = false

    /// How often each word followed the last word before the cursor, in this document; after
    /// a sentence end, how often each word started a sentence in it, if twice or more (the
    /// pack's bigrams treat a sentence start as a word too: how this writer starts sentences,
    /// `And`, `So`, is the document's own knowledge of what follows it).
    private(set) var lastWordFollowers: [String: Int] = [:]

    /// Keys of up to two words before the cursor in the current sentence (oldest first).
    private(set) var lastKeys: [String] = []

    /// Keys of up to `NeuralContextTracker.historyLimit` words before the cursor, across
    /// sentences but not across a line break (oldest first): the word language model's context
    /// (issue 17). With `readsPunctuation`, the punctuation keys between them and after the last
    /// one count among them (`WordLanguageModel.punctuationKey(between:)`).
    private(set) var documentKeys: [String] = []

    /// Whether `documentKeys` holds punctuation keys (the pack's word model reads them).
    let readsPunctuation: Bool

    init(readsPunctuation: Bool = false) {
        self.readsPunctuation = readsPunctuation
    }

    /// What the cache needs of one written word; none of it depends on where the word stands.
    fileprivate struct Token {
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

    /// `word` of `context` as an occurrence (its token kept in `tokens`); `previousEnd`, the end
    /// of the word before it, moves to this word's end.
    private mutating func readOccurrence(
        _ word: Substring, of context: Substring, after previousEnd: inout Substring.Index, pack: LanguagePack,
        previous: [String: Token]
    ) -> Occurrence {
        let gapBefore = context[previousEnd..<word.startIndex]
        let sentenceStart = previousEnd == context.startIndex || WordText.endsSentence(gapBefore)
        let punctuationBefore = readsPunctuation ? WordLanguageModel.punctuationKey(between: gapBefore) : nil
        let lineStart = gapBefore.unicodeScalars.contains(where: WordText.isLineBreak)
        let spaceBefore = !sentenceStart && WordText.isSpaceOnly(gapBefore)
        previousEnd = word.endIndex
        let surface = String(word)
        let token = token(word, surface: surface, pack: pack, previous: previous)
        tokens[surface] = token
        let count = context.utf8.count
        return Occurrence(
            startFromEnd: count - context.utf8.distance(from: context.startIndex, to: word.startIndex),
            endFromEnd: count - context.utf8.distance(from: context.startIndex, to: word.endIndex),
            token: token, sentenceStart: sentenceStart, lineStart: lineStart, punctuationBefore: punctuationBefore,
            spaceBefore: spaceBefore)
    }

    /// One word of the last context: where it stands, counted in UTF-8 bytes from the context's
    /// end (a context that lost its first scalars keeps these), its token, and whether it starts
    /// a sentence there (after `.`, `!`, `?` or a line break: `WordText.endsSentence`).
    private struct Occurrence {
        var startFromEnd: Int
        var endFromEnd: Int
        var token: Token
        var sentenceStart: Bool
        /// Whether a line break comes before it (after the word before it in this context).
        var lineStart: Bool
        /// The punctuation key of the text before it (nil: none, or `readsPunctuation` is off).
        var punctuationBefore: String?
        /// Whether only spaces separate it from the word before it (none: false).
        var spaceBefore: Bool
    }

    /// The words of the last context, in order (what `words` and the last words are made of).
    private var occurrences: [Occurrence] = []
    /// Whether the text after the last word of the last context ends a sentence.
    private var endsWithSentenceEnd = false
    /// Whether the text after the last word of the last context holds a line break.
    private var endsWithLineBreak = false
    /// The punctuation key of the text after the last word (with `readsPunctuation`).
    private var punctuationAfter: String? = nil
    /// Whether only spaces follow the last word (no mark, no line break: `Donald ` at a
    /// sentence start may go on as a name, `Elaine, ` does not).
    private var endsWithSpaceOnly = false

    /// Rebuilds the cache for a context; returns whether it changed (false: the same scalars).
    ///
    /// A context that is the last one without its first few scalars (the predictor's window of
    /// the last 1,000 scalars moves by one at every letter typed) is updated from the words it
    /// lost and the word cut at its start, not re-read: the result is the same as a rebuild.
    /// A context that is the last one (or the last one without its first few scalars) followed
    /// by more text (a word finished: at every word once the text is long, the window also
    /// moves) is updated from the words it gained: the words before the last one keep their
    /// reading, the last one is read again with what follows it.
    @discardableResult
    mutating func update(context: Substring, pack: LanguagePack) -> Bool {
        if let lastContext, Self.sameScalars(lastContext, context) { return false }
        if let lastContext, Self.isSuffix(context, of: lastContext), dropFront(to: context, pack: pack) {
            self.lastContext = context
            return true
        }
        if let lastContext, let kept = Self.overlap(of: lastContext, with: context) {
            // Nothing changes when dropping the front is refused; a refused extension leaves a
            // half-made update that the rebuild below replaces.
            if kept.utf8.count == lastContext.utf8.count || dropFront(to: kept, pack: pack) {
                self.lastContext = kept
                if extend(to: context, pack: pack) {
                    self.lastContext = context
                    return true
                }
            }
        }
        lastContext = context
        rebuild(context: context, pack: pack)
        return true
    }

    /// The end of `last` that `context` starts with, when `context` is longer than it and `last`
    /// lost at most `maximumDropped` bytes of its start (nil: none, or nothing of `last` left).
    static func overlap(of last: Substring, with context: Substring) -> Substring? {
        let lastCount = last.utf8.count
        let count = context.utf8.count
        guard lastCount > 0 else { return nil }
        func find(_ old: UnsafeBufferPointer<UInt8>, _ new: UnsafeBufferPointer<UInt8>) -> Int? {
            for dropped in 0...min(maximumDropped, lastCount - 1) {
                let kept = lastCount - dropped
                // A suffix starts at a scalar (not a continuation byte) and leaves room for more.
                guard kept < count, old[dropped] & 0xC0 != 0x80 else { continue }
                if UnsafeBufferPointer(rebasing: old[dropped...]).elementsEqual(
                    UnsafeBufferPointer(rebasing: new[..<kept]))
                {
                    return dropped
                }
            }
            return nil
        }
        let contiguous = last.utf8.withContiguousStorageIfAvailable { old in
            context.utf8.withContiguousStorageIfAvailable { new in find(old, new) }
        }
        let found: Int?
        if let both = contiguous, let answer = both {  // both texts contiguous: their answer
            found = answer
        } else {
            let old = Array(last.utf8)
            let new = Array(context.utf8)
            found = old.withUnsafeBufferPointer { old in new.withUnsafeBufferPointer { new in find(old, new) } }
        }
        guard let dropped = found,
            let start = last.utf8.index(last.startIndex, offsetBy: dropped, limitedBy: last.endIndex)
        else { return nil }
        return last[start...]
    }

    /// The most bytes the window may lose at the start while the text grows at the end (a word
    /// and its space, at a time).
    static let maximumDropped = 64

    /// The context is the last one followed by more text: the last word is read again (what
    /// follows may continue it) with the words after it. False when there is nothing to keep.
    private mutating func extend(to context: Substring, pack: LanguagePack) -> Bool {
        guard let lastContext else { return false }
        let added = context.utf8.count - lastContext.utf8.count
        guard added > 0 else { return false }
        let count = context.utf8.count
        for index in occurrences.indices {
            occurrences[index].startFromEnd += added
            occurrences[index].endFromEnd += added
        }
        func position(fromEnd offset: Int) -> Substring.Index {
            context.utf8.index(context.startIndex, offsetBy: count - offset)
        }
        var touchedKeys: [String] = []
        var readFrom = context.startIndex
        var previousEnd = context.startIndex
        if let last = occurrences.last {
            readFrom = position(fromEnd: last.startFromEnd)
            if occurrences.count >= 2 { previousEnd = position(fromEnd: occurrences[occurrences.count - 2].endFromEnd) }
            if !last.token.containsDigit {
                touchedKeys.append(last.token.key)
                totalWords -= 1
            }
            occurrences.removeLast()
        }
        for word in WordText.words(in: context[readFrom...]) {
            let occurrence = readOccurrence(word, of: context, after: &previousEnd, pack: pack, previous: [:])
            occurrences.append(occurrence)
            let token = occurrence.token
            if !token.containsDigit {
                touchedKeys.append(token.key)
                totalWords += 1
            }
        }
        let gap = context[previousEnd...]
        endsWithSentenceEnd =
            previousEnd == context.startIndex || WordText.endsSentence(gap)
        endsWithLineBreak = gap.unicodeScalars.contains(where: WordText.isLineBreak)
        punctuationAfter = readsPunctuation ? WordLanguageModel.punctuationKey(between: gap) : nil
        endsWithSpaceOnly = WordText.isSpaceOnly(gap)
        for (index, key) in touchedKeys.enumerated() where !touchedKeys[..<index].contains(key) { recountWord(key) }
        // The tokens grow by the words read here: bounded like a rebuild's (the words of a context).
        if tokens.count > 4 * occurrences.count + 64 { tokens.removeAll(keepingCapacity: true) }
        updateLastWords(pack: pack)
        return true
    }

    private mutating func rebuild(context: Substring, pack: LanguagePack) {
        let previousTokens = tokens
        tokens.removeAll(keepingCapacity: true)
        words.removeAll(keepingCapacity: true)
        occurrences.removeAll(keepingCapacity: true)
        totalWords = 0
        var previousEnd = context.startIndex
        for word in WordText.words(in: context) {
            let occurrence = readOccurrence(
                word, of: context, after: &previousEnd, pack: pack, previous: previousTokens)
            occurrences.append(occurrence)
            let token = occurrence.token
            let sentenceStart = occurrence.sentenceStart
            if token.containsDigit { continue }
            // Show the word as the user wrote it, unless the only evidence is a sentence-initial capital.
            let key = token.key
            var entry =
                words[key] ?? Entry(id: token.id, display: sentenceStart ? token.fallback : token.written, count: 0)
            entry.count(token, sentenceStart: sentenceStart)
            words[key] = entry
            totalWords += 1
        }
        // A sentence end after the last word starts a new sentence.
        let gap = context[previousEnd...]
        endsWithSentenceEnd =
            previousEnd == context.startIndex || WordText.endsSentence(gap)
        endsWithLineBreak = gap.unicodeScalars.contains(where: WordText.isLineBreak)
        punctuationAfter = readsPunctuation ? WordLanguageModel.punctuationKey(between: gap) : nil
        endsWithSpaceOnly = WordText.isSpaceOnly(gap)
        updateLastWords(pack: pack)
    }

    /// The context lost its first bytes (`context` is a suffix of the last one): the words before
    /// the cut leave, the word the cut runs through leaves for what is left of it, and the first
    /// word left starts a sentence (the first word of a context always does). False when there
    /// is nothing to keep (then a rebuild does the work).
    private mutating func dropFront(to context: Substring, pack: LanguagePack) -> Bool {
        let count = context.utf8.count
        // Occurrences are in order: those that end at or before the cut, then at most one cut by
        // it, then those wholly in the new context.
        guard !occurrences.isEmpty else { return false }
        var firstKept = 0
        while firstKept < occurrences.count, occurrences[firstKept].startFromEnd > count { firstKept += 1 }
        // A few words at a time (a letter moves the window by one scalar); more is left to a rebuild.
        guard firstKept <= 8 else { return false }
        let leaving = occurrences[..<firstKept]
        // What is left of a word the cut runs through is read again (it may start at a joiner,
        // `n't`, or be nothing but one).
        var replacements: [Occurrence] = []
        if let last = leaving.last, last.endFromEnd < count {
            let end = context.utf8.index(context.startIndex, offsetBy: count - last.endFromEnd)
            let remnant = context[context.startIndex..<end]
            var previousEnd = context.startIndex
            for word in WordText.words(in: remnant) {
                replacements.append(
                    readOccurrence(word, of: context, after: &previousEnd, pack: pack, previous: tokens))
            }
            // The rest of a word ends where the word did; anything else is left to a rebuild.
            if let rest = replacements.last, rest.endFromEnd != last.endFromEnd { return false }
        }
        guard !replacements.isEmpty || firstKept < occurrences.count else { return false }
        var touchedKeys: [String] = []
        for occurrence in leaving where !occurrence.token.containsDigit {
            touchedKeys.append(occurrence.token.key)
            totalWords -= 1
        }
        for occurrence in replacements where !occurrence.token.containsDigit {
            touchedKeys.append(occurrence.token.key)
            totalWords += 1
        }
        // The first word kept starts a sentence when nothing is left before it.
        if replacements.isEmpty, !occurrences[firstKept].sentenceStart {
            occurrences[firstKept].sentenceStart = true
            occurrences[firstKept].spaceBefore = false
            if !occurrences[firstKept].token.containsDigit { touchedKeys.append(occurrences[firstKept].token.key) }
        }
        occurrences.replaceSubrange(0..<firstKept, with: replacements)
        // A handful of keys at most: no set needed to visit each once.
        for (index, key) in touchedKeys.enumerated() where !touchedKeys[..<index].contains(key) { recountWord(key) }
        updateLastWords(pack: pack)
        return true
    }

    /// `words[key]` as a rebuild from `occurrences` makes it.
    private mutating func recountWord(_ key: String) {
        var entry: Entry? = nil
        for occurrence in occurrences where !occurrence.token.containsDigit && occurrence.token.key == key {
            let token = occurrence.token
            let firstDisplay = occurrence.sentenceStart ? token.fallback : token.written
            var current = entry ?? Entry(id: token.id, display: firstDisplay, count: 0)
            current.count(token, sentenceStart: occurrence.sentenceStart)
            entry = current
        }
        words[key] = entry
    }

    /// The last words before the cursor, their followers in this document and the word model's
    /// context, from `occurrences`.
    private mutating func updateLastWords(pack: LanguagePack) {
        var previousKey: String? = nil
        var previousID: Int? = nil
        var beforePreviousID: Int? = nil
        var recentKeys: [String] = []
        lastWordIsName = false
        // Only the last word's followers are ever asked for.
        let lastKey = occurrences.last.flatMap { $0.token.containsDigit ? nil : $0.token.key }
        var followers: [String: Int] = [:]
        var sentenceStarters: [String: Int] = [:]
        for occurrence in occurrences {
            let token = occurrence.token
            if occurrence.sentenceStart {
                recentKeys.removeAll()
                previousKey = nil
                previousID = pack.sentenceStartID
                beforePreviousID = nil
            }
            if token.containsDigit {
                recentKeys.removeAll()
                lastWordIsName = false
                previousKey = nil
                beforePreviousID = previousID
                previousID = nil
                continue
            }
            let key = token.key
            if let lastKey, let previousKey, previousKey == lastKey { followers[key, default: 0] += 1 }
            if occurrence.sentenceStart, endsWithSentenceEnd { sentenceStarters[key, default: 0] += 1 }
            recentKeys.append(key)
            if recentKeys.count > 2 { recentKeys.removeFirst() }
            previousKey = key
            // At a sentence start only a name the pack knows (`Donald`), and only before a space
            // (`Elaine, thank`): inside a sentence a comma may still run on to a name (`Pence,
            // Governor`, `Washington, D.C.`).
            lastWordIsName =
                token.capitalized
                && (!occurrence.sentenceStart
                    || endsWithSpaceOnly && token.id.map { pack.wordFlags($0).contains(.capitalized) } == true)
            beforePreviousID = previousID
            previousID = token.id
        }
        lastWordsInCapitals = false
        if endsWithSpaceOnly, occurrences.count >= 2 {
            let last = occurrences[occurrences.count - 1]
            let before = occurrences[occurrences.count - 2]
            lastWordsInCapitals =
                last.spaceBefore && WordText.isAllCaps(last.token.written) && WordText.isAllCaps(before.token.written)
        }
        // The word model's context is the current line: it learned from lines, each after <s>
        // (a message's body after `Hello,` and a blank line starts afresh, as a typesim document).
        let lineWords = endsWithLineBreak ? [] : occurrences[(occurrences.lastIndex { $0.lineStart } ?? 0)...]
        if readsPunctuation {
            // Punctuation between the line's words and after the last one (none before the first:
            // the model learned each line after <s>, whatever came before it).
            let limit = NeuralContextTracker.historyLimit
            var keys: [String] = []
            keys.reserveCapacity(2 * limit + 1)
            for occurrence in lineWords.suffix(limit) {
                if occurrence.startFromEnd != lineWords.first?.startFromEnd, let mark = occurrence.punctuationBefore {
                    keys.append(mark)
                }
                keys.append(occurrence.token.containsDigit ? "" : occurrence.token.key)
            }
            if !lineWords.isEmpty, let mark = punctuationAfter { keys.append(mark) }
            documentKeys = Array(keys.suffix(limit))
        } else {
            documentKeys = lineWords.suffix(NeuralContextTracker.historyLimit).map {
                $0.token.containsDigit ? "" : $0.token.key  // a number: the word model's unknown word
            }
        }
        lastWordFollowers = [:]
        if endsWithSentenceEnd {
            lastWords = (nil, nil)
            lastKeys = []
            lastWordIsName = false
            // Only starts the document repeats: one `Hello,` is no habit (and is not the body's
            // first word after it).
            lastWordFollowers = sentenceStarters.filter { $0.value >= 2 }
        } else {
            lastWords = (previousID, beforePreviousID)
            lastKeys = recentKeys
            if lastKey != nil { lastWordFollowers = followers }
        }
    }

    /// Whether `context` is `last` without some of its first bytes (then it starts at a scalar:
    /// a valid string never starts inside one).
    static func isSuffix(_ context: Substring, of last: Substring) -> Bool {
        let count = context.utf8.count
        let lastCount = last.utf8.count
        guard count < lastCount else { return false }
        let contiguous = context.utf8.withContiguousStorageIfAvailable { new in
            last.utf8.withContiguousStorageIfAvailable { old in
                UnsafeBufferPointer(rebasing: old[(lastCount - count)...]).elementsEqual(new)
            }
        }
        if let result = contiguous ?? nil { return result }
        return last.utf8.suffix(count).elementsEqual(context.utf8)
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
