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
        switch startCheck(word: word, before: before, after: after, exempt: exempt) {
        case .finished(let flag): return flag
        case .searching(var search):
            _ = search.advance(work: .max)
            return search.flag
        }
    }

    /// Starts `check(word:before:after:exempt:)`: decided at once, or at its search of near
    /// words, which `WordCheckSearch.advance(work:)` runs a slice at a time so that a long
    /// search never holds up a key (a long Russian word visits ~10^5 keys, 10 ms).
    public func startCheck(word: Substring, before: Substring, after: Substring = "", exempt: Set<String> = [])
        -> WordCheckStart
    {
        let key = WordText.key(word)
        guard !exempt.contains(key), !Self.looksLikeNonWord(word: word, before: before, after: after) else {
            return .finished(nil)
        }
        if pack.id(ofKey: key) == nil, word.contains("-") {
            return startCompound(word: word, before: before, exempt: exempt)
        }
        return startSingle(word: word, key: key, before: before)
    }

    /// A hyphenated word the pack does not know: fine if its parts (or the word without hyphens,
    /// `e-mails`) are words; otherwise the first doubtful part is flagged and the whole word fixed.
    private func startCompound(word: Substring, before: Substring, exempt: Set<String>) -> WordCheckStart {
        let key = WordText.key(word)
        if pack.id(ofKey: key.replacing("-", with: "")) != nil { return .finished(nil) }
        let whole = String(word)
        let parts = whole.split(separator: "-", omittingEmptySubsequences: false).map { $0.startIndex..<$0.endIndex }
        return continueCompound(
            CompoundCheck(word: whole, before: String(before), exempt: exempt, parts: parts, nextPart: 0))
    }

    /// The parts of a hyphenated word from `compound.nextPart` on: the answer, or the first part
    /// whose check reaches its search of near words (the search then carries the compound on).
    func continueCompound(_ compound: CompoundCheck) -> WordCheckStart {
        var compound = compound
        while compound.nextPart < compound.parts.count {
            let range = compound.parts[compound.nextPart]
            compound.nextPart += 1
            let part = compound.word[range]
            let partKey = WordText.key(part)
            guard !compound.exempt.contains(partKey) else { continue }
            let partBefore = compound.before + compound.word[compound.word.startIndex..<range.lowerBound]
            switch startSingle(word: part, key: partKey, before: Substring(partBefore)) {
            case .finished(nil): continue
            case .finished(let flag?): return .finished(compound.wholeWordFlag(flag, part: range))
            case .searching(var search):
                search.compound = (compound, range)
                return .searching(search)
            }
        }
        return .finished(nil)
    }

    /// Decides one word without hyphens up to its search of near words.
    private func startSingle(word: Substring, key: String, before: Substring) -> WordCheckStart {
        let scalars = Array(key.unicodeScalars)
        guard scalars.count >= 2, scalars.count <= 24 else { return .finished(nil) }
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
            return .finished(nil)
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
                return .finished(nil)
            }
        }
        // Short words get fewer edits: two edits turn almost any short string into some word.
        let lengthCost: Float = scalars.count <= 4 ? 1.0 : (scalars.count <= 6 ? 1.5 : 2.0)
        let search = NearWordsSearch(scalars, maxCost: min(maxCost, lengthCost), checker: self)
        return .searching(
            WordCheckSearch(
                checker: self, word: String(word), scalars: scalars, typedID: typedID, typedScore: typedScore,
                previous: previous, before: String(before), search: search))
    }

    /// The flag, if any, once the near words of a word are known (`startSingle` decided the rest).
    func judge(
        word: Substring, scalars: [Unicode.Scalar], typedID: Int?, typedScore: Float, previous: Int?,
        before: Substring, nearby found: [(id: Int, cost: Float)]
    ) -> TypoFlag? {
        var nearby = found
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
        guard let last = WordText.lastWord(in: before) else { return pack.sentenceStartID }
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

    /// Vocabulary words within `maxCost` weighted edits of `typed` (a lower-case key), in
    /// vocabulary order: `NearWordsSearch` run to its end.
    public func nearWords(_ typed: [Unicode.Scalar], maxCost: Float) -> [(id: Int, cost: Float)] {
        var search = NearWordsSearch(typed, maxCost: maxCost, checker: self)
        _ = search.advance(work: .max, checker: self)
        return search.result
    }

    /// Units of work (`WordCheckSearch.advance(work:)`) of a finished word's check per slice
    /// where the engine runs it between keys: a key waits for one slice at most, never a whole
    /// search (up to 10 ms for a long Russian word; issue 18). `check-bench` prints the longest.
    public static let searchSliceWork = 10_000

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
    func fillRow(
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
        return baseLetters[scalar] ?? scalar
    }

    /// The common accented letters and their base letters, by table instead of ICU's
    /// decomposition. Built once: built on every call, as it was, it took 60 % of a Russian
    /// check (every Cyrillic letter is above U+00C0), up to 10 ms for a long word.
    private static let baseLetters: [Unicode.Scalar: Unicode.Scalar] = [
        "à": "a", "á": "a", "â": "a", "ã": "a", "ä": "a", "å": "a", "ç": "c", "è": "e", "é": "e", "ê": "e",
        "ë": "e", "ì": "i", "í": "i", "î": "i", "ï": "i", "ñ": "n", "ò": "o", "ó": "o", "ô": "o", "õ": "o",
        "ö": "o", "ù": "u", "ú": "u", "û": "u", "ü": "u", "ý": "y", "ÿ": "y", "ą": "a", "ć": "c", "ę": "e",
        "ł": "l", "ń": "n", "ś": "s", "ź": "z", "ż": "z", "ё": "е", "й": "и",
    ]

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
}
