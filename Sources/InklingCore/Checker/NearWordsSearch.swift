/// How a word's check begins: decided at once, or at its search of near words.
public enum WordCheckStart: Sendable {
    /// Decided: the flag, or nil for a word that is fine.
    case finished(TypoFlag?)
    /// The search of near words is left to run (`WordCheckSearch.advance(work:)`).
    case searching(WordCheckSearch)
}

/// A hyphenated word's check, part by part (`SpellChecker.continueCompound`).
struct CompoundCheck: Sendable {
    /// The whole word and the text before it.
    let word: String
    let before: String
    let exempt: Set<String>
    /// Each part's place in `word`.
    let parts: [Range<String.Index>]
    /// The part to check next.
    var nextPart: Int

    /// A part's flag as the whole word's: its fixes are the word with the part fixed.
    func wholeWordFlag(_ flag: TypoFlag, part: Range<String.Index>) -> TypoFlag {
        let head = word[word.startIndex..<part.lowerBound]
        let tail = word[part.upperBound...]
        return TypoFlag(
            word: word, replacements: flag.replacements.map { head + $0 + tail }, explanation: flag.explanation,
            margin: flag.margin)
    }
}

/// A word's check at its search of near words, run a slice at a time.
///
/// The search walks the vocabulary under the word's first letters: for a long word in a large
/// pack (Russian, 250,000 words) that is ~10^5 keys and 10 ms. Run in one go on the main loop,
/// a key typed meanwhile waited for all of it; in slices, it waits for one slice at most.
public struct WordCheckSearch: Sendable {
    let checker: SpellChecker
    let word: String
    let scalars: [Unicode.Scalar]
    let typedID: Int?
    let typedScore: Float
    let previous: Int?
    let before: String
    var search: NearWordsSearch
    /// For a part of a hyphenated word: the compound's check and the part's place in it.
    var compound: (check: CompoundCheck, part: Range<String.Index>)? = nil
    /// The flag once the search is over (nil: not a typo, or not finished).
    public private(set) var flag: TypoFlag? = nil
    /// Whether the search is over and `flag` is the check's answer.
    public private(set) var isFinished = false

    /// Does at most about `limit` units of the search's work (one per key visited and per cell
    /// of its table filled, so that a unit takes about the same time whatever the word);
    /// returns the units done.
    public mutating func advance(work limit: Int) -> Int {
        var done = 0
        while !isFinished {
            done += search.advance(work: max(1, limit - done), checker: checker)
            guard search.isFinished else { break }
            let found = checker.judge(
                word: Substring(word), scalars: scalars, typedID: typedID, typedScore: typedScore, previous: previous,
                before: Substring(before), nearby: search.result)
            guard let (compound, part) = compound else {
                (flag, isFinished) = (found, true)
                break
            }
            if let found {
                (flag, isFinished) = (compound.wholeWordFlag(found, part: part), true)
                break
            }
            // The part is fine: the compound's next parts, in the work left (at least one key).
            switch checker.continueCompound(compound) {
            case .finished(let answer): (flag, isFinished) = (answer, true)
            case .searching(let next): self = next
            }
            if done >= limit { break }
        }
        return done
    }
}

/// The search of vocabulary words within `maxCost` weighted edits of a typed key, resumable.
///
/// Walks the sorted vocabulary, sharing dynamic-programming rows between keys with a common
/// prefix and skipping every key under a prefix that no longer key can bring back within
/// `maxCost`: its row exceeds it, and so does the row before it plus a swap (a swap of the
/// last two letters builds on that row; skipping on the last row alone lost `time` for `tuem`).
struct NearWordsSearch: Sendable {
    let typed: [Unicode.Scalar]
    let maxCost: Float
    let word: TypedWord
    let allowedFirst: Set<Unicode.Scalar>
    let width: Int
    /// The rows of the dynamic-programming table, one after the other in one buffer: row `i`
    /// (at `i * width`) is the candidate prefix of `i` scalars against the typed word. Rows
    /// up to the prefix a key shares with the one before are kept.
    var table: [Float]
    /// Each kept row's smallest cost (so as many as there are kept rows).
    var minimums: [Float] = [0]
    var previousKey: [Unicode.Scalar] = []
    /// The key's scalars, decoded from the pack's bytes into one reused buffer (a String and
    /// an array for each of the thousands of keys visited were a good part of a check).
    var key: [Unicode.Scalar] = []
    /// The next key to visit.
    var id = 0
    /// The words found so far, in vocabulary order.
    var result: [(id: Int, cost: Float)] = []

    typealias TypedWord = SpellChecker.TypedWord

    init(_ typed: [Unicode.Scalar], maxCost: Float, checker: SpellChecker) {
        self.typed = typed
        self.maxCost = maxCost
        var first = Set<Unicode.Scalar>()
        if let letter = typed.first {
            first = Set(checker.layout.neighbours(of: letter))
            first.insert(letter)
        }
        if typed.count > 1 { first.insert(typed[1]) }
        allowedFirst = first
        word = TypedWord(typed, layout: checker.layout)
        width = typed.count + 1
        table = [Float](repeating: 0, count: 32 * width)
        for j in 0..<width { table[j] = Float(j) }
        if typed.isEmpty { id = checker.pack.wordCount }  // nothing is near an empty word
    }

    /// Whether every key has been visited (or skipped).
    private(set) var isFinished = false

    /// Does at most about `limit` units of work (a unit: one key visited, or one cell of the
    /// table filled; a key's rows are filled whole, so a call may go over by one key's rows);
    /// returns the units done.
    mutating func advance(work limit: Int, checker: SpellChecker) -> Int {
        let pack = checker.pack
        let count = pack.wordCount
        var work = 0
        while id < count && work < limit {
            work += 1
            SpellChecker.decodeScalars(pack.keyBytes(id), into: &key)
            var common = 0
            let limit = min(previousKey.count, key.count, minimums.count - 1)
            while common < limit && previousKey[common] == key[common] { common += 1 }
            minimums.removeLast(minimums.count - (common + 1))
            if table.count < (key.count + 1) * width {
                table += repeatElement(0, count: (key.count + 1) * width - table.count)
            }
            var pruned = false
            if common == 0, let first = key.first, !allowedFirst.contains(first) {
                for j in 0..<width { table[width + j] = .infinity }
                minimums.append(.infinity)
                previousKey = [first]
                // Always forward, whatever the prefix search answers.
                id = max(id + 1, pack.endOfRange(sharingPrefixOf: id, length: UTF8.width(first)))
                continue
            }
            for position in common..<key.count {
                work += width
                let rowMinimum = checker.fillRow(&table, width: width, word: word, key: key, position: position)
                minimums.append(rowMinimum)
                // No longer key under this prefix can come within the cost: every later row
                // builds on this one, or (a swap of two letters, 0.6) on the row before it.
                if rowMinimum > maxCost, minimums[position] + SpellChecker.swapCost > maxCost {
                    let prefixLength = key[0...position].reduce(0) { $0 + UTF8.width($1) }
                    previousKey = Array(key[0...position])
                    id = max(id + 1, pack.endOfRange(sharingPrefixOf: id, length: prefixLength))
                    pruned = true
                    break
                }
            }
            if !pruned {
                let cost = table[key.count * width + typed.count]
                if cost <= maxCost { result.append((id, cost)) }
                previousKey = key
                id += 1
            }
        }
        isFinished = id >= count
        return work
    }
}
