import FoundationEssentials

/// Builds a language pack from prepared, plain-text inputs (see `scripts/prepare_data.py`).
///
/// The builder is the single owner of the pack format: the fetch and preparation scripts only
/// produce word lists and running text; every modelling decision is made here.
public struct PackBuilder {
    /// The prepared inputs, as file contents.
    public struct Inputs {
        /// `word<TAB>frequency` lines (wordfreq): the unigram prior.
        public var wordFrequencies: String
        /// `form<TAB>count` lines: case-sensitive surface forms.
        public var surfaceForms: String = ""
        /// `w1<TAB>w2<TAB>count` lines: extra bigram counts from larger corpora.
        public var bigrams: String = ""
        /// One valid spelling per line (hunspell stems).
        public var spellings: String = ""
        /// Running text, one document per line.
        public var corpus: String
        /// Trained neural re-ranker sections (`NGRU`, `NRRK`; issue 17), already validated, copied as is.
        public var neuralSections: [(tag: String, bytes: [UInt8])] = []
        public init(wordFrequencies: String, corpus: String) {
            self.wordFrequencies = wordFrequencies
            self.corpus = corpus
        }
    }

    /// Size and modelling parameters.
    public struct Parameters: Sendable {
        /// Language tag written into the pack.
        public var language = "en"
        /// Human-readable name.
        public var displayName = "English"
        /// Pack version string.
        public var version = "1"
        /// Words taken from the frequency list, most frequent first.
        public var vocabularySize = 100_000
        /// Corpus words outside the frequency list are added from this many occurrences.
        public var corpusWordMinimumCount = 4
        /// Successors kept per one-word context.
        public var bigramSuccessors = 128
        /// Successors kept per two-word context.
        public var trigramSuccessors = 48
        /// Minimum corpus count of a two-word context.
        public var trigramContextMinimumCount = 3
        /// Successors of a two-word context seen fewer times are left to the bigram.
        public var trigramMinimumSuccessorCount = 2.0
        /// Weight of the external bigram counts relative to the corpus (by total mass).
        public var externalBigramWeight = 1.0
        /// Absolute discount subtracted from every n-gram count.
        public var discount = 0.75
        /// Successors seen fewer times than this (in corpus units) are left to the back-off.
        public var minimumSuccessorCount = 1.0
        /// Character model order.
        public var characterOrder = 6
        /// Character model hash table size in bytes (a power of two).
        public var characterTableBytes = 4 << 20
        /// Every n-th corpus document is held out (not trained on); 0 keeps all.
        public var holdOutEvery = 0
        public init() {}
    }

    public var inputs: Inputs
    public var parameters: Parameters
    /// Progress messages (to stderr in the CLI).
    public var progress: (String) -> Void = { _ in }

    public init(inputs: Inputs, parameters: Parameters = Parameters()) {
        self.inputs = inputs
        self.parameters = parameters
    }

    /// The documents held out from training (for tuning without touching the dev text).
    public func heldOutDocuments() -> [Substring] {
        guard parameters.holdOutEvery > 0 else { return [] }
        return inputs.corpus.split(separator: "\n").enumerated()
            .filter { $0.offset % parameters.holdOutEvery == 0 }.map(\.element)
    }

    private func trainingDocuments() -> [Substring] {
        let all = inputs.corpus.split(separator: "\n")
        guard parameters.holdOutEvery > 0 else { return all }
        return all.enumerated().filter { $0.offset % parameters.holdOutEvery != 0 }.map(\.element)
    }

    /// Builds the pack and returns its bytes.
    public func build() -> [UInt8] {
        let documents = trainingDocuments()
        progress("corpus: \(documents.count) documents")
        let vocabulary = buildVocabulary(documents: documents)
        progress("vocabulary: \(vocabulary.keys.count) words")
        var writer = PackWriter()
        writeVocabulary(vocabulary, into: &writer)
        writeNGrams(vocabulary: vocabulary, documents: documents, into: &writer)
        CharacterModelBuilder(
            order: parameters.characterOrder, tableBytes: parameters.characterTableBytes, log: progress
        )
        .build(documents: documents, into: &writer)
        let meta = [
            "language=\(parameters.language)",
            "name=\(parameters.displayName)",
            "version=\(parameters.version)",
            "words=\(vocabulary.keys.count)",
            "characterOrder=\(parameters.characterOrder)",
            // Packs from older builders lack the lower-case spelling flag; the checker asks.
            "wordFlags=spelled,capitalized,sometimesCapitalized,spelledInLowercase",
        ].joined(separator: "\n")
        writer.add("META", bytes: Array(meta.utf8))
        for section in inputs.neuralSections { writer.add(section.tag, bytes: section.bytes) }
        return writer.serialize()
    }

    // MARK: Vocabulary

    struct Vocabulary {
        var keys: [String] = []  // sorted by UTF-8 bytes
        var displays: [String] = []
        var logPriors: [Double] = []
        var flags: [UInt8] = []
        var ids: [String: Int] = [:]
    }

    /// Whether a string is exactly one word with no digits (the only words a pack predicts).
    static func isPredictableWord(_ text: Substring) -> Bool {
        guard !text.isEmpty, !WordText.containsDigit(text) else { return false }
        let words = WordText.words(in: text)
        return words.count == 1 && words[0].count == text.count
    }

    private func buildVocabulary(documents: [Substring]) -> Vocabulary {
        var probability: [String: Double] = [:]
        var order: [String] = []
        for line in inputs.wordFrequencies.split(separator: "\n") {
            guard order.count < parameters.vocabularySize else { break }
            let fields = line.split(separator: "\t")
            guard fields.count >= 2, let frequency = Double(fields[1]), frequency > 0,
                Self.isPredictableWord(fields[0])
            else { continue }
            let key = WordText.key(fields[0])
            if probability[key] == nil {
                probability[key] = frequency
                order.append(key)
            }
        }
        // Corpus counts: case-insensitive, for words the frequency list lacks.
        var corpusCounts: [String: Int] = [:]
        var corpusTotal = 0
        var afterNames: [String: NameContextCounts] = [:]
        for document in documents {
            var previous: (word: Substring, sentenceStart: Bool)? = nil
            for word in WordText.words(in: document) {
                let gap = document[(previous?.word.endIndex ?? document.startIndex)..<word.startIndex]
                let sentenceStart = previous == nil || WordText.endsSentence(gap)
                defer { previous = (word, sentenceStart) }
                guard !WordText.containsDigit(word) else { continue }
                let key = WordText.key(word)
                corpusCounts[key, default: 0] += 1
                corpusTotal += 1
                if let previous, Self.isNameWord(previous.word), !previous.sentenceStart, WordText.isSpaceOnly(gap) {
                    afterNames[key, default: NameContextCounts()].count(word)
                }
            }
        }
        // Frequency-list words seen in the corpus calibrate corpus counts to the list's scale.
        var sharedList = 0.0
        var sharedCorpus = 0
        for (key, count) in corpusCounts.sorted(by: { $0.key < $1.key }) {
            guard let listProbability = probability[key] else { continue }
            sharedList += listProbability
            sharedCorpus += count
        }
        let scale = sharedCorpus > 0 ? sharedList / Double(sharedCorpus) : 1.0 / Double(max(1, corpusTotal))
        var added = 0
        for (key, count) in corpusCounts.sorted(by: { $0.key < $1.key })
        where count >= parameters.corpusWordMinimumCount && probability[key] == nil {
            probability[key] = Double(count) * scale * 0.5
            added += 1
        }
        progress("vocabulary: \(added) words added from the corpus")
        // Spelling dictionary and surface forms decide flags and display case.
        var spelled: Set<String> = []
        var spelledLower: Set<String> = []
        for line in inputs.spellings.split(separator: "\n") {
            spelled.insert(String(line))
            if let first = line.unicodeScalars.first, !first.properties.isUppercase {
                spelledLower.insert(WordText.key(line))
            }
        }
        var forms: [String: [(form: String, count: Double)]] = [:]
        for line in inputs.surfaceForms.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count >= 2, let count = Double(fields[1]) else { continue }
            let key = WordText.key(fields[0])
            guard probability[key] != nil else { continue }
            var form = String(fields[0])
            form = String(String.UnicodeScalarView(form.unicodeScalars.map { $0 == "\u{2019}" ? "'" : $0 }))
            forms[key, default: []].append((form, count))
        }
        var vocabulary = Vocabulary()
        let mass = probability.sorted(by: { $0.key < $1.key }).reduce(0) { $0 + $1.value }
        vocabulary.keys = probability.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        for (index, key) in vocabulary.keys.enumerated() {
            vocabulary.ids[key] = index
            vocabulary.logPriors.append(Math.log((probability[key] ?? 0) / mass))  // every key is one of probability's
            let display = chooseDisplay(key: key, forms: forms[key] ?? [], spelled: spelled, spelledLower: spelledLower)
            vocabulary.displays.append(display)
            var flags = WordFlags()
            let inflection = parameters.language == "en" && Self.isInflection(key, of: spelledLower)
            if spelled.contains(key) || spelled.contains(display) || inflection {
                flags.insert(.spelled)
            }
            if spelledLower.contains(key) || inflection { flags.insert(.spelledInLowercase) }
            if display != key { flags.insert(.capitalized) }
            if Self.isSometimesCapitalized(key: key, forms: forms[key] ?? [], afterNames: afterNames[key]) {
                flags.insert(.sometimesCapitalized)
            }
            vocabulary.flags.append(flags.rawValue)
        }
        return vocabulary
    }

    /// Picks how a word is shown when the user has not typed any of it.
    ///
    /// A capitalised form wins only when it clearly dominates the lower-case one, because
    /// sentence-initial capitals inflate every word's capitalised count.
    private func chooseDisplay(
        key: String, forms: [(form: String, count: Double)], spelled: Set<String>, spelledLower: Set<String>
    ) -> String {
        // English capitalises its first-person pronoun everywhere (`I`, `I'm`); no other pack does.
        if parameters.language == "en", key == "i" || key.hasPrefix("i'") { return "I" + key.dropFirst() }
        var lowerCount = 0.0
        var best: (form: String, count: Double)? = nil
        for entry in forms {
            if entry.form == key {
                lowerCount += entry.count
            } else if best.map({ entry.count > $0.count }) ?? true {
                best = entry
            }
        }
        let hunspellProper = !spelledLower.contains(key) && spelled.contains(WordText.capitalizingFirst(key))
        if let best {
            let ratio = spelledLower.contains(key) ? 8.0 : 2.0
            if best.count >= 3, best.count > ratio * lowerCount { return best.form }
        }
        if hunspellProper, lowerCount == 0 { return WordText.capitalizingFirst(key) }
        return key
    }

    /// Whether a word is a regular inflection of a spelling-dictionary stem (`donors`, `passes`,
    /// `making`, `running`, `tried`, `mate's`); hunspell lists stems with affix rules, and these
    /// are the rules that matter for not flagging valid words.
    static func isInflection(_ word: String, of stems: Set<String>) -> Bool {
        EnglishInflection.isInflection(word, of: { stems.contains($0) })
    }

    /// How often a word followed a name's word in the corpus (a capitalised word inside a
    /// sentence, then a space), written with a capital and without.
    struct NameContextCounts {
        var capitalized = 0
        var lowercase = 0

        mutating func count(_ word: Substring) {
            if WordText.startsUppercase(word) { capitalized += 1 } else { lowercase += 1 }
        }
    }

    /// Whether a word could be a name's (capitalised, not `I` or `I'…`).
    static func isNameWord(_ word: Substring) -> Bool {
        guard WordText.startsUppercase(word), !WordText.containsDigit(word) else { return false }
        let key = WordText.key(word)
        return key != "i" && !key.hasPrefix("i'")
    }

    /// Whether the word is likely part of a name after another name's word (`Donald Trump`,
    /// `White House`, `New York Times`, `Mike Pence`).
    ///
    /// The corpus's own evidence decides when it has seen the word after names three times or
    /// more: most of them capitalised (`pence` is mostly the coin, `Pence` after `Mike`).
    /// Otherwise a capitalised form common enough in the surface forms does.
    static func isSometimesCapitalized(
        key: String, forms: [(form: String, count: Double)], afterNames: NameContextCounts? = nil
    ) -> Bool {
        if let afterNames, afterNames.capitalized + afterNames.lowercase >= 3 {
            return afterNames.capitalized > afterNames.lowercase
        }
        var lower = 0.0
        var capital = 0.0
        for entry in forms {
            if entry.form == key {
                lower += entry.count
            } else if WordText.startsUppercase(entry.form) {
                capital += entry.count
            }
        }
        return capital >= 3 && capital >= 0.2 * lower
    }

    private func writeVocabulary(_ vocabulary: Vocabulary, into writer: inout PackWriter) {
        var keyBlob: [UInt8] = []
        var keyOffsets: [UInt32] = [0]
        var displayBlob: [UInt8] = []
        var displayOffsets: [UInt32] = [0]
        for (key, display) in zip(vocabulary.keys, vocabulary.displays) {
            keyBlob.append(contentsOf: key.utf8)
            keyOffsets.append(UInt32(keyBlob.count))
            if display != key { displayBlob.append(contentsOf: display.utf8) }
            displayOffsets.append(UInt32(displayBlob.count))
        }
        writer.add("VKEY", bytes: keyBlob)
        writer.add("VKOF", integers: keyOffsets)
        writer.add("VDSP", bytes: displayBlob)
        writer.add("VDOF", integers: displayOffsets)
        writer.add("VPRI", integers: vocabulary.logPriors.map { Quantize.unigramCost(-$0) })
        writer.add("VFLG", integers: vocabulary.flags)
        let top = vocabulary.logPriors.indices.sorted {
            (vocabulary.logPriors[$0], $1) > (vocabulary.logPriors[$1], $0)
        }.prefix(256).map { UInt32($0) }
        writer.add("VTOP", integers: Array(top))
    }

    // MARK: Word n-grams

    /// One sentence of the corpus: word ids, `nil` for unknown words and numbers.
    private struct Sentence {
        var ids: [Int?] = []
        /// Whether its first word may follow the sentence-start context: not written with a
        /// lower-case initial. A text that starts in lower case is a fragment (a dictionary's
        /// usage example "the dog barked", words after "e.g."), not how sentences begin; counted
        /// as starts they pushed "the", "a" and "he" ahead of "I" at the start of a message.
        var followsStart = true
    }

    /// The sentences of the corpus's documents, split at `.`, `!` and `?`.
    private func sentences(_ documents: [Substring], vocabulary: Vocabulary) -> [Sentence] {
        var result: [Sentence] = []
        for document in documents {
            var current = Sentence()
            var previousEnd = document.startIndex
            for word in WordText.words(in: document) {
                let gap = document[previousEnd..<word.startIndex]
                if gap.contains(where: { $0 == "." || $0 == "!" || $0 == "?" }), !current.ids.isEmpty {
                    result.append(current)
                    current = Sentence()
                }
                if current.ids.isEmpty {
                    current.followsStart = !(word.unicodeScalars.first?.properties.isLowercase ?? false)
                }
                current.ids.append(vocabulary.ids[WordText.key(word)])
                previousEnd = word.endIndex
            }
            if !current.ids.isEmpty { result.append(current) }
        }
        return result
    }

    private func writeNGrams(vocabulary: Vocabulary, documents: [Substring], into writer: inout PackWriter) {
        let wordCount = vocabulary.keys.count
        let start = wordCount  // sentence-start context id
        var bigramCounts: [UInt64: Double] = [:]
        var trigramCounts: [UInt64: [Int: Double]] = [:]
        var pairCounts: [UInt64: Int] = [:]
        var corpusMass = 0.0
        for sentence in sentences(documents, vocabulary: vocabulary) {
            var previous: Int? = sentence.followsStart ? start : nil
            var beforePrevious: Int? = nil
            for id in sentence.ids {
                if let id, let previous {
                    bigramCounts[UInt64(previous) << 32 | UInt64(id), default: 0] += 1
                    corpusMass += 1
                    if let beforePrevious {
                        let pair = UInt64(beforePrevious) << 32 | UInt64(previous)
                        trigramCounts[pair, default: [:]][id, default: 0] += 1
                        pairCounts[pair, default: 0] += 1
                    }
                }
                beforePrevious = previous
                previous = id
            }
        }
        progress("bigrams from corpus: \(bigramCounts.count) types")
        // External bigrams, scaled so their total mass is a fixed share of the corpus mass.
        var external: [UInt64: Double] = [:]
        var externalMass = 0.0
        for line in inputs.bigrams.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count >= 3, let count = Double(fields[2]),
                let first = vocabulary.ids[WordText.key(fields[0])],
                let second = vocabulary.ids[WordText.key(fields[1])]
            else { continue }
            external[UInt64(first) << 32 | UInt64(second), default: 0] += count
            externalMass += count
        }
        if externalMass > 0 {
            let scale = parameters.externalBigramWeight * corpusMass / externalMass
            for (key, count) in external.sorted(by: { $0.key < $1.key }) {
                bigramCounts[key, default: 0] += count * scale
            }
        }
        progress("bigrams merged: \(bigramCounts.count) types")
        // Group by context.
        var successors = [[(id: Int, count: Double)]](repeating: [], count: wordCount + 1)
        for (key, count) in bigramCounts {
            successors[Int(key >> 32)].append((Int(key & 0xFFFF_FFFF), count))
        }
        var offsets: [UInt32] = [0]
        var entries: [UInt32] = []
        var weights: [UInt8] = []
        let discount = parameters.discount
        for context in 0...wordCount {
            var list = successors[context]
            list.sort { ($0.count, $1.id) > ($1.count, $0.id) }
            let total = list.reduce(0) { $0 + $1.count }
            // Absolute discounting; the back-off mass is whatever the kept entries leave.
            var kept = 0.0
            for entry in list.prefix(parameters.bigramSuccessors) where entry.count >= parameters.minimumSuccessorCount
            {
                let probability = (entry.count - min(discount, entry.count / 2)) / total
                kept += probability
                entries.append(Quantize.successor(id: UInt32(entry.id), cost: -Math.log(probability)))
            }
            offsets.append(UInt32(entries.count))
            weights.append(Quantize.backoffMass(total > 0 ? max(1 - kept, 0.001) : 1))
        }
        writer.add("BGOF", integers: offsets)
        writer.add("BGSU", integers: entries)
        writer.add("BGWT", integers: weights)
        progress("bigram successors kept: \(entries.count)")
        // Trigrams: corpus only, frequent contexts only.
        var keys: [UInt64] = []
        var trigramOffsets: [UInt32] = [0]
        var trigramEntries: [UInt32] = []
        var trigramWeights: [UInt8] = []
        for (pair, pairCount) in pairCounts.sorted(by: { $0.key < $1.key })
        where pairCount >= parameters.trigramContextMinimumCount {
            guard let list = trigramCounts[pair] else { continue }  // every counted pair has its successors
            let total = list.values.reduce(0, +)
            let kept = list.filter { $0.value >= parameters.trigramMinimumSuccessorCount }.sorted {
                ($0.value, $1.key) > ($1.value, $0.key)
            }
            .prefix(parameters.trigramSuccessors)
            guard !kept.isEmpty else { continue }
            keys.append(pair)
            var keptMass = 0.0
            for (id, count) in kept {
                let probability = (count - min(discount, count / 2)) / total
                keptMass += probability
                trigramEntries.append(Quantize.successor(id: UInt32(id), cost: -Math.log(probability)))
            }
            trigramOffsets.append(UInt32(trigramEntries.count))
            trigramWeights.append(Quantize.backoffMass(max(1 - keptMass, 0.001)))
        }
        writer.add("TGKY", integers: keys)
        writer.add("TGOF", integers: trigramOffsets)
        writer.add("TGSU", integers: trigramEntries)
        writer.add("TGWT", integers: trigramWeights)
        progress("trigram contexts kept: \(keys.count), successors: \(trigramEntries.count)")
    }
}
