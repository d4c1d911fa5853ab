/// A likely typo: the word as typed, what was probably meant, and why.
public struct TypoFlag: Equatable, Sendable {
    /// The word as the user typed it.
    public var word: String
    /// Likely intended words, best first, cased like the typed word.
    public var replacements: [String]
    /// A short explanation of the mistake (`neighbouring keys g/h`, `swapped letters`).
    public var explanation: String
    /// How much more likely the best replacement is than the typed word (natural log).
    public var margin: Float
    public init(word: String, replacements: [String], explanation: String, margin: Float) {
        self.word = word
        self.replacements = replacements
        self.explanation = explanation
        self.margin = margin
    }
}

/// The local checker: flags a finished word that the pack does not know when a word within two
/// keyboard-weighted edits is much more likely in context (a noisy-channel decision).
public struct SpellChecker: Sendable {
    public let pack: LanguagePack
    public let layout: KeyboardLayout
    /// Log-probability cost of one unit of edit (the channel model).
    public var costPerEdit: Float = 3.2
    /// The best replacement must beat the typed word by this much (natural log).
    public var margin: Float = 2.5
    /// Extra margin for a capitalised word inside a sentence (probably a name).
    public var nameMargin: Float = 5.0
    /// Words of the pack above this prior (as −log) need extra margin to be flagged…
    public var frequentWordLogPrior: Float = 15
    /// …this much per nat above it.
    public var frequentWordBonus: Float = 0.8
    /// The log probability given to a typed word the pack does not know.
    public var unknownWordLogProb: Float = -20
    /// Largest weighted edit cost considered.
    public var maxCost: Float = 2.0

    public init(pack: LanguagePack, layout: KeyboardLayout = .qwerty) {
        self.pack = pack
        self.layout = layout
    }

    /// Checks a finished word given the text before it.
    ///
    /// - Parameters:
    ///   - word: the word as typed.
    ///   - before: the text before the word (context).
    ///   - after: the text right after the word, up to the next space (for URL, path and e-mail detection).
    ///   - exempt: words never flagged (used earlier in the document, kept by the user, learned).
    public func check(word: Substring, before: Substring, after: Substring = "", exempt: Set<String> = []) -> TypoFlag?
    {
        let key = WordText.key(word)
        guard !exempt.contains(key), !Self.looksLikeNonWord(word: word, before: before, after: after) else {
            return nil
        }
        if pack.id(ofKey: key) == nil, word.contains("-") {
            return checkCompound(word: word, before: before, exempt: exempt)
        }
        return checkSingle(word: word, key: key, before: before)
    }

    /// A hyphenated word the pack does not know: fine if its parts (or the word without hyphens,
    /// `e-mails`) are words; otherwise the first doubtful part is flagged and the whole word fixed.
    private func checkCompound(word: Substring, before: Substring, exempt: Set<String>) -> TypoFlag? {
        let key = WordText.key(word)
        if pack.id(ofKey: key.replacing("-", with: "")) != nil { return nil }
        let parts = word.split(separator: "-", omittingEmptySubsequences: false)
        var start = word.startIndex
        for part in parts {
            defer { start = word.index(part.endIndex, offsetBy: 1, limitedBy: word.endIndex) ?? word.endIndex }
            let partKey = WordText.key(part)
            guard !exempt.contains(partKey),
                let flag = checkSingle(word: part, key: partKey, before: before + word[word.startIndex..<start])
            else { continue }
            let head = word[word.startIndex..<part.startIndex]
            let tail = word[part.endIndex...]
            return TypoFlag(
                word: String(word), replacements: flag.replacements.map { head + $0 + tail },
                explanation: flag.explanation, margin: flag.margin)
        }
        return nil
    }

    /// Checks one word without hyphens (or one part of a hyphenated word).
    private func checkSingle(word: Substring, key: String, before: Substring) -> TypoFlag? {
        let scalars = Array(key.unicodeScalars)
        guard scalars.count >= 2, scalars.count <= 24 else { return nil }
        let typedID = pack.id(ofKey: key)
        // An English word the pack lacks but that regularly inflects a spelled word (`snidely`,
        // `polarizes`) is a word, not a typo.
        if typedID == nil, pack.language == "en",
            EnglishInflection.isInflection(
                key,
                of: { stem in
                    pack.id(ofKey: stem).map { pack.wordFlags($0).contains(.spelledInLowercase) } ?? false
                })
        {
            return nil
        }
        let previous = previousWordID(before)
        let typedScore: Float = typedID.map { contextLogProb($0, previous: previous) } ?? unknownWordLogProb
        // A word the spelling dictionary lists is never a typo on its own, unless the dictionary
        // only knows it capitalised and it was typed in lower case (`te` is not `Te`, tellurium).
        if let typedID {
            let flags = pack.wordFlags(typedID)
            if flags.contains(.spelledInLowercase)
                || (flags.contains(.spelled) && (!WordText.isAllLowercase(word) || !pack.marksLowercaseSpellings))
            {
                return nil
            }
        }
        // Short words get fewer edits: two edits turn almost any short string into some word.
        let lengthCost: Float = scalars.count <= 4 ? 1.0 : (scalars.count <= 6 ? 1.5 : 2.0)
        var nearby = nearWords(scalars, maxCost: min(maxCost, lengthCost))
        if scalars.count == 2 {
            // Two letters are one edit from dozens of words; only a dropped letter (`te` for
            // `the`, `fo` for `for`) or swapped letters (`ot` for `to`) are common enough to flag.
            let swapped = String(String.UnicodeScalarView(scalars.reversed()))
            nearby.removeAll { candidate in
                let key = pack.key(candidate.id)
                return key.unicodeScalars.count != 3 && key != swapped
            }
        }
        guard !nearby.isEmpty else { return nil }
        var scored: [(id: Int, cost: Float, score: Float)] = []
        for (id, cost) in nearby where id != typedID {
            scored.append((id, cost, contextLogProb(id, previous: previous) - costPerEdit * cost))
        }
        scored.sort { ($0.score, $1.id) > ($1.score, $0.id) }
        guard let best = scored.first else { return nil }
        let capitalizedInSentence = WordText.startsUppercase(word) && !WordText.isSentenceStart(before)
        // A capitalised word inside a sentence is probably a name: flag it only for another name
        // or with much more evidence.
        let bestIsName = pack.wordFlags(best.id).contains(.capitalized)
        var required = capitalizedInSentence && !bestIsName ? nameMargin + margin : margin
        // A frequent word the pack knows (slang, names, technical words) needs more evidence.
        if let typedID { required += max(0, pack.logPrior(typedID) + frequentWordLogPrior) * frequentWordBonus }
        let gain = best.score - typedScore
        guard gain > required else { return nil }
        let replacements = scored.prefix(3).filter { $0.score > best.score - 3 }.map {
            caseLike(word, pack.display($0.id))
        }
        return TypoFlag(
            word: String(word), replacements: replacements,
            explanation: Self.explain(
                typed: scalars, intended: Array(pack.key(best.id).unicodeScalars), layout: layout),
            margin: gain)
    }

    /// Words that are not prose: numbers, identifiers, URLs, paths, e-mail addresses, acronyms.
    static func looksLikeNonWord(word: Substring, before: Substring, after: Substring) -> Bool {
        if WordText.containsDigit(word) || WordText.isAllCaps(word) { return true }
        // camelCase and other inner capitals (`iPhone`, `XFree`, `McKinney`): names and identifiers.
        if word.unicodeScalars.dropFirst().contains(where: { $0.properties.isUppercase }) { return true }
        // The whitespace-delimited chunk around the word.
        let left = before.unicodeScalars.reversed().prefix { !$0.properties.isWhitespace }
        let right = after.unicodeScalars.prefix { !$0.properties.isWhitespace }
        let chunk = String(String.UnicodeScalarView(left.reversed())) + word + String(String.UnicodeScalarView(right))
        if chunk.contains("/") || chunk.contains("\\") || chunk.contains("@") || chunk.contains("_")
            || chunk.contains("://")
        {
            return true
        }
        // `example.com`, `file.txt`: a dot between letters. A capitalised word after the dot
        // (`nation.For`) is a new sentence whose space was left out.
        let trimmed = chunk.trimmingTrailingPunctuation()
        if let dot = trimmed.lastIndex(of: "."), dot != trimmed.startIndex,
            trimmed.index(after: dot) != trimmed.endIndex
        {
            let rest = trimmed[trimmed.index(after: dot)...].unicodeScalars
            let newSentence =
                (rest.first?.properties.isUppercase ?? false) && rest.dropFirst().contains { $0.properties.isLowercase }
            if !newSentence { return true }
        }
        if right.first == ":" || left.first == ":" { return true }
        return false
    }

    private func previousWordID(_ before: Substring) -> Int? {
        if WordText.isSentenceStart(before) { return pack.sentenceStartID }
        guard let last = WordText.words(in: before).last else { return pack.sentenceStartID }
        return pack.id(ofKey: WordText.key(last))
    }

    /// log P(word | previous word) with back-off to the prior.
    func contextLogProb(_ id: Int, previous: Int?) -> Float {
        let unigram = Math.exp(pack.logPrior(id))
        guard let previous else { return Math.log(unigram) }
        let successors = pack.bigramSuccessors(of: previous)
        var p = successors.weight * unigram
        for entry in successors.entries {
            let (candidate, logProb) = LanguagePack.decodeSuccessor(entry)
            if candidate == id {
                p += Math.exp(logProb)
                break
            }
        }
        return Math.log(max(p, 1e-12))
    }

    private func caseLike(_ typed: Substring, _ display: String) -> String {
        if WordText.isAllCaps(typed) { return display.uppercased() }
        if WordText.startsUppercase(typed) { return WordText.capitalizingFirst(display) }
        return display
    }

    // MARK: Candidate search

    /// Vocabulary words within `maxCost` weighted edits of `typed` (a lower-case key).
    ///
    /// Walks the sorted vocabulary, sharing dynamic-programming rows between keys with a common
    /// prefix and skipping every key under a prefix that no longer key can bring back within
    /// `maxCost`: its row exceeds it, and so does the row before it plus a swap (a swap of the
    /// last two letters builds on that row; skipping on the last row alone lost `time` for `tuem`).
    public func nearWords(_ typed: [Unicode.Scalar], maxCost: Float) -> [(id: Int, cost: Float)] {
        guard !typed.isEmpty else { return [] }
        var allowedFirst = Set(layout.neighbours(of: typed[0]))
        allowedFirst.insert(typed[0])
        if typed.count > 1 { allowedFirst.insert(typed[1]) }
        let word = TypedWord(typed, layout: layout)
        var result: [(Int, Float)] = []
        let width = typed.count + 1
        // The rows of the dynamic-programming table, one after the other in one buffer: row `i`
        // (at `i * width`) is the candidate prefix of `i` scalars against the typed word. Rows
        // up to the prefix a key shares with the one before are kept.
        var table = [Float](repeating: 0, count: 32 * width)
        for j in 0..<width { table[j] = Float(j) }
        // Each kept row's smallest cost (so as many as there are kept rows).
        var minimums: [Float] = [0]
        var previousKey: [Unicode.Scalar] = []
        // The key's scalars, decoded from the pack's bytes into one reused buffer (a String and
        // an array for each of the thousands of keys visited were a good part of a check).
        var key: [Unicode.Scalar] = []
        var id = 0
        let count = pack.wordCount
        while id < count {
            Self.decodeScalars(pack.keyBytes(id), into: &key)
            var common = 0
            let limit = min(previousKey.count, key.count, minimums.count - 1)
            while common < limit && previousKey[common] == key[common] { common += 1 }
            minimums.removeLast(minimums.count - (common + 1))
            if table.count < (key.count + 1) * width {
                table += repeatElement(0, count: (key.count + 1) * width - table.count)
            }
            var pruned = false
            if common == 0, let first = key.first, !allowedFirst.contains(first) {
                pruned = true
                for j in 0..<width { table[width + j] = .infinity }
                minimums.append(.infinity)
                previousKey = [first]
                // Always forward, whatever the prefix search answers.
                id = max(id + 1, pack.endOfRange(sharingPrefixOf: id, length: UTF8.width(first)))
                continue
            }
            for position in common..<key.count {
                let rowMinimum = fillRow(&table, width: width, word: word, key: key, position: position)
                minimums.append(rowMinimum)
                // No longer key under this prefix can come within the cost: every later row
                // builds on this one, or (a swap of two letters, 0.6) on the row before it.
                if rowMinimum > maxCost, minimums[position] + Self.swapCost > maxCost {
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
        return result
    }

    /// The cost of two neighbouring letters typed in the wrong order (`teh`).
    static let swapCost: Float = 0.6

    /// The typed word with what the edit costs ask of each of its letters, found once per
    /// check rather than in every cell of the table (issue 18: the layout's dictionary lookups
    /// and accent decompositions per cell made a check of a long word the pack does not spell
    /// take milliseconds, on the main loop, between two keys).
    struct TypedWord {
        let scalars: [Unicode.Scalar]
        /// `baseLetter` of each letter.
        let baseLetters: [Unicode.Scalar]
        /// The keys touching each letter's key (`KeyboardLayout.neighbours(of:)`, a handful).
        let neighbours: [[Unicode.Scalar]]

        init(_ scalars: [Unicode.Scalar], layout: KeyboardLayout) {
            self.scalars = scalars
            baseLetters = scalars.map { SpellChecker.baseLetter($0) }
            neighbours = scalars.map { layout.neighbours(of: $0) }
        }

        /// `layout.areAdjacent(scalar, scalars[index])`: adjacency is symmetric, and a key
        /// touches only the keys `neighbours(of:)` lists.
        @inline(__always)
        func isAdjacent(_ scalar: Unicode.Scalar, toLetterAt index: Int) -> Bool {
            neighbours[index].contains(scalar)
        }
    }

    /// The scalars of a pack key's UTF-8 bytes (invalid bytes, which a validated pack does not
    /// have, become U+FFFD as `String(decoding:as:)` makes them).
    static func decodeScalars(_ bytes: UnsafeRawBufferPointer, into scalars: inout [Unicode.Scalar]) {
        scalars.removeAll(keepingCapacity: true)
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return
            case .error: scalars.append("\u{FFFD}")
            }
        }
    }

    /// Fills the table's row for candidate prefix `key[0...position]` against the typed word
    /// (from the two rows above it) and returns the row's smallest cost.
    private func fillRow(
        _ table: inout [Float], width: Int, word: TypedWord, key: [Unicode.Scalar], position: Int
    ) -> Float {
        let typed = word.scalars
        let i = position + 1
        let row = i * width
        let above = row - width
        let character = key[position]
        let characterBase = Self.baseLetter(character)
        table[row] = table[above] + 1
        var minimum = table[row]
        for j in 1...typed.count {
            let typedCharacter = typed[j - 1]
            let substitution =
                table[above + j - 1]
                + substitutionCost(
                    intended: character, intendedBase: characterBase, typed: typedCharacter, at: j - 1, in: word)
            let omission = table[above + j] + 1.0  // the user left out `character`
            let extra = table[row + j - 1] + insertionCost(typed: typed, at: j - 1, intended: character, in: word)
            var best = min(substitution, omission, extra)
            if i >= 2, j >= 2, character == typed[j - 2], key[position - 1] == typedCharacter {
                best = min(best, table[above - width + j - 2] + Self.swapCost)
            }
            table[row + j] = best
            minimum = min(minimum, best)
        }
        return minimum
    }

    @inline(__always)
    private func substitutionCost(
        intended: Unicode.Scalar, intendedBase: Unicode.Scalar, typed: Unicode.Scalar, at index: Int, in word: TypedWord
    ) -> Float {
        if intended == typed { return 0 }
        if intendedBase == word.baseLetters[index] { return 0.4 }
        return word.isAdjacent(intended, toLetterAt: index) ? 0.7 : 1.2
    }

    @inline(__always)
    private func insertionCost(
        typed: [Unicode.Scalar], at index: Int, intended: Unicode.Scalar, in word: TypedWord
    ) -> Float {
        let character = typed[index]
        if index > 0 && typed[index - 1] == character { return 0.5 }  // doubled key
        if word.isAdjacent(intended, toLetterAt: index) { return 0.8 }  // brushed a neighbouring key
        return 1.0
    }

    /// The letter without accents, for cheap accent mistakes (`cafe` → `café`).
    static func baseLetter(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        guard scalar.value >= 0xC0 else { return scalar }
        let decomposed = String(scalar).decomposedStringWithCanonicalMappingIfAvailable
        return decomposed.unicodeScalars.first ?? scalar
    }

    // MARK: Explanations

    /// Describes the difference between what was typed and what was probably meant.
    public static func explain(typed: [Unicode.Scalar], intended: [Unicode.Scalar], layout: KeyboardLayout) -> String {
        func s(_ scalar: Unicode.Scalar) -> String { String(scalar) }
        if typed.count == intended.count {
            let differing = typed.indices.filter { typed[$0] != intended[$0] }
            if differing.count == 1 {
                let i = differing[0]
                if layout.areAdjacent(typed[i], intended[i]) {
                    return tr(
                        "neighbouring key: {typed} typed for {intended}",
                        ["typed": s(typed[i]), "intended": s(intended[i])])
                }
                return tr("wrong letter: {typed} for {intended}", ["typed": s(typed[i]), "intended": s(intended[i])])
            }
            if differing.count == 2, differing[1] == differing[0] + 1,
                typed[differing[0]] == intended[differing[1]], typed[differing[1]] == intended[differing[0]]
            {
                return tr("swapped letters: {letters}", ["letters": s(typed[differing[0]]) + s(typed[differing[1]])])
            }
        }
        if typed.count + 1 == intended.count {
            for i in intended.indices where Array(intended[..<i] + intended[(i + 1)...]) == typed {
                return tr("missing letter: {letter}", ["letter": s(intended[i])])
            }
        }
        if typed.count == intended.count + 1 {
            // Prefer a doubled key (`thee`) over an extra one when both explain the word.
            let extras = typed.indices.filter { Array(typed[..<$0] + typed[($0 + 1)...]) == intended }
            if let i = extras.first(where: { $0 > 0 && typed[$0 - 1] == typed[$0] }) {
                return tr("doubled letter: {letter}", ["letter": s(typed[i])])
            }
            if let i = extras.first { return tr("extra letter: {letter}", ["letter": s(typed[i])]) }
        }
        return tr("unknown word; a similar word is much more likely here")
    }
}

extension String {
    /// The string without trailing sentence punctuation.
    func trimmingTrailingPunctuation() -> Substring {
        var end = endIndex
        while end > startIndex {
            let previous = index(before: end)
            guard ".,;:!?)\"'".contains(self[previous]) else { break }
            end = previous
        }
        return self[..<end]
    }

    /// Canonical decomposition where the standard library provides it (NFD of one scalar).
    var decomposedStringWithCanonicalMappingIfAvailable: String {
        // Character comparison in Swift is canonical-equivalence based; decompose the common
        // Latin accents by table instead of pulling in ICU.
        let table: [Unicode.Scalar: Unicode.Scalar] = [
            "à": "a", "á": "a", "â": "a", "ã": "a", "ä": "a", "å": "a", "ç": "c", "è": "e", "é": "e", "ê": "e",
            "ë": "e", "ì": "i", "í": "i", "î": "i", "ï": "i", "ñ": "n", "ò": "o", "ó": "o", "ô": "o", "õ": "o",
            "ö": "o", "ù": "u", "ú": "u", "û": "u", "ü": "u", "ý": "y", "ÿ": "y", "ą": "a", "ć": "c", "ę": "e",
            "ł": "l", "ń": "n", "ś": "s", "ź": "z", "ż": "z", "ё": "е", "й": "и",
        ]
        guard let scalar = unicodeScalars.first, let base = table[scalar] else { return self }
        return String(base)
    }
}
