import FoundationEssentials

/// Quantisation shared by the pack builder and reader.
///
/// Costs are negative natural logarithms of probabilities, stored in fixed point.
public enum Quantize {
    /// Unigram costs: u16 in units of 1/100 nat.
    public static func unigramCost(_ cost: Double) -> UInt16 { UInt16(clamping: Int((cost * 100).rounded())) }
    @inline(__always) static func unigramLogProb(_ stored: UInt16) -> Float { -Float(stored) / 100 }

    /// Successor costs: 12 bits in units of 1/128 nat (up to 32 nats).
    public static func successorCost(_ cost: Double) -> UInt32 {
        UInt32(max(0, min(4095, Int((cost * 128).rounded()))))
    }
    @inline(__always) static func successorLogProb(_ stored: UInt32) -> Float { -Float(stored) / 128 }

    /// Successor entries pack a word id (20 bits) and a cost (12 bits).
    public static func successor(id: UInt32, cost: Double) -> UInt32 { (successorCost(cost) << 20) | (id & 0xFFFFF) }

    /// Back-off masses: u8 holding −ln(mass) in units of 1/16 (masses down to e^−16).
    public static func backoffMass(_ value: Double) -> UInt8 {
        UInt8(max(0, min(255, Int((-Math.log(max(value, 1e-9)) * 16).rounded()))))
    }
    @inline(__always) static func backoffMassValue(_ stored: UInt8) -> Float { Math.exp(-Float(stored) / 16) }
}

/// Flags stored per vocabulary word.
public struct WordFlags: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Listed by the spelling dictionary.
    public static let spelled = WordFlags(rawValue: 1)
    /// Usually written with a capital (a name, `I`).
    public static let capitalized = WordFlags(rawValue: 2)
    /// Often written with a capital, as part of a name (`Trump`, `House`), though not usually.
    public static let sometimesCapitalized = WordFlags(rawValue: 4)
    /// Listed by the spelling dictionary in lower case (`ism`), not only capitalised (`Te`, `WA`).
    public static let spelledInLowercase = WordFlags(rawValue: 8)
}

/// A language pack: vocabulary with prior, word n-gram successors and a character model.
///
/// Everything is read in place from the file's bytes in private memory; opening validates every
/// structural invariant so that later reads cannot go out of bounds.
public final class LanguagePack: @unchecked Sendable {
    /// Where the pack was read from (empty for in-memory packs).
    public let path: String
    /// The underlying file.
    public let file: PackFile
    /// Metadata: language, name, version, build parameters.
    public let metadata: [String: String]
    /// The language tag, e.g. `en`.
    public var language: String { metadata["language"] ?? "und" }
    /// Whether the builder marked words spelled in lower case (`WordFlags.spelledInLowercase`).
    public let marksLowercaseSpellings: Bool

    let keyBlob: UnsafeRawBufferPointer
    let keyOffsets: PackArray<UInt32>
    let displayBlob: UnsafeRawBufferPointer
    let displayOffsets: PackArray<UInt32>
    let priors: PackArray<UInt16>
    let flags: PackArray<UInt8>
    /// Word ids in order of decreasing prior (the most frequent words).
    let topWords: PackArray<UInt32>
    let bigramOffsets: PackArray<UInt32>
    let bigramEntries: PackArray<UInt32>
    let bigramWeights: PackArray<UInt8>
    let trigramKeys: PackArray<UInt64>
    let trigramOffsets: PackArray<UInt32>
    let trigramEntries: PackArray<UInt32>
    let trigramWeights: PackArray<UInt8>
    /// The character model.
    public let characterModel: CharacterModel
    /// The learned re-ranker of the candidate window (`NRRK` section), if the pack has one.
    public let rerankerNetwork: RerankerNetwork?
    /// The word GRU language model the re-ranker reads (`NGRU` section), if the pack has one.
    public let wordLanguageModel: WordLanguageModel?

    /// The number of words in the vocabulary.
    public var wordCount: Int { priors.count }

    /// Opens the pack at `path`.
    public convenience init(path: String) throws(PackError) {
        try self.init(file: PackFile(path: path), path: path)
    }

    /// Opens pack bytes already in memory (read with `PackFile.read(path:)` and checked
    /// against a manifest, say); `path` is where they came from, empty for none.
    public convenience init(data: Data, path: String = "", check: PackCheck = .full) throws(PackError) {
        try self.init(file: PackFile(data: data, check: check), path: path)
    }

    /// Runs the checks a pack opened with `PackCheck.deferred` skipped (the payload checksum,
    /// the character model's occupancy, every structural invariant); reads every byte.
    public func verifyDeferredChecks() throws(PackError) {
        guard file.checksumMatches() else { throw .checksumMismatch }
        _ = try CharacterModel.checkOccupancy(characterModel.slots)
        try validate()
    }

    init(file: PackFile, path: String) throws(PackError) {
        self.file = file
        self.path = path
        var meta: [String: String] = [:]
        // Metadata reaches logs, notices and `inkling pack info`: refuse bytes that are not
        // text, and characters that could rewrite a terminal line or reorder what is shown.
        guard let metaText = String(validating: try file.bytes("META"), as: UTF8.self) else {
            throw .malformed(tag: "META", reason: "not UTF-8")
        }
        for scalar in metaText.unicodeScalars where scalar != "\n" && Self.isControlOrBidi(scalar) {
            throw .malformed(
                tag: "META", reason: "control character U+\(String(scalar.value, radix: 16, uppercase: true))")
        }
        for line in metaText.split(separator: "\n") {
            if let eq = line.firstIndex(of: "=") {
                meta[String(line[..<eq])] = String(line[line.index(after: eq)...])
            }
        }
        metadata = meta
        marksLowercaseSpellings = meta["wordFlags"]?.split(separator: ",").contains("spelledInLowercase") ?? false
        keyBlob = try file.bytes("VKEY")
        keyOffsets = try file.array("VKOF", of: UInt32.self)
        displayBlob = try file.bytes("VDSP")
        displayOffsets = try file.array("VDOF", of: UInt32.self)
        priors = try file.array("VPRI", of: UInt16.self)
        flags = try file.array("VFLG", of: UInt8.self)
        topWords = try file.array("VTOP", of: UInt32.self)
        bigramOffsets = try file.array("BGOF", of: UInt32.self)
        bigramEntries = try file.array("BGSU", of: UInt32.self)
        bigramWeights = try file.array("BGWT", of: UInt8.self)
        trigramKeys = try file.array("TGKY", of: UInt64.self)
        trigramOffsets = try file.array("TGOF", of: UInt32.self)
        trigramEntries = try file.array("TGSU", of: UInt32.self)
        trigramWeights = try file.array("TGWT", of: UInt8.self)
        characterModel = try CharacterModel(file: file)
        // Optional (issue 17): packs built before it have no NRRK section and still open.
        rerankerNetwork = file.has("NRRK") ? try RerankerNetwork(section: file.bytes("NRRK")) : nil
        wordLanguageModel =
            file.has(WordLanguageModel.tag)
            ? try WordLanguageModel(section: file.bytes(WordLanguageModel.tag), owner: file) : nil
        // Deferred: a record vouches for these bytes; verifyDeferredChecks() runs it later.
        if file.check == .full { try validate() }
    }

    /// Control characters (Cc) and the bidirectional formatting characters.
    static func isControlOrBidi(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.generalCategory == .control { return true }
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    private func validate() throws(PackError) {
        let count = priors.count
        guard count > 0, count < (1 << 20) else { throw .malformed(tag: "VPRI", reason: "bad word count \(count)") }
        try Self.checkOffsets(keyOffsets, entries: count, limit: keyBlob.count, tag: "VKOF")
        try Self.checkOffsets(displayOffsets, entries: count, limit: displayBlob.count, tag: "VDOF")
        guard flags.count == count else { throw .malformed(tag: "VFLG", reason: "count mismatch") }
        for id in topWords where Int(id) >= count { throw .malformed(tag: "VTOP", reason: "word id out of range") }
        // Keys must be strictly sorted so that binary search is sound.
        for id in 1..<count where compareKey(id - 1, id) >= 0 {
            throw .malformed(tag: "VKEY", reason: "keys not sorted at \(id)")
        }
        try Self.checkOffsets(bigramOffsets, entries: count + 1, limit: bigramEntries.count, tag: "BGOF")
        guard bigramWeights.count == count + 1 else { throw .malformed(tag: "BGWT", reason: "count mismatch") }
        for entry in bigramEntries where Int(entry & 0xFFFFF) >= count {
            throw .malformed(tag: "BGSU", reason: "word id out of range")
        }
        try Self.checkOffsets(trigramOffsets, entries: trigramKeys.count, limit: trigramEntries.count, tag: "TGOF")
        guard trigramWeights.count == trigramKeys.count else { throw .malformed(tag: "TGWT", reason: "count mismatch") }
        for index in trigramKeys.indices.dropFirst() where trigramKeys[index - 1] >= trigramKeys[index] {
            throw .malformed(tag: "TGKY", reason: "keys not sorted")
        }
        for entry in trigramEntries where Int(entry & 0xFFFFF) >= count {
            throw .malformed(tag: "TGSU", reason: "word id out of range")
        }
    }

    private static func checkOffsets(
        _ offsets: PackArray<UInt32>, entries: Int, limit: Int, tag: String
    ) throws(PackError) {
        guard offsets.count == entries + 1 else {
            throw .malformed(tag: tag, reason: "expected \(entries + 1) offsets, found \(offsets.count)")
        }
        var previous: UInt32 = 0
        for offset in offsets {
            guard offset >= previous, Int(offset) <= limit else {
                throw .malformed(tag: tag, reason: "offsets out of order or out of bounds")
            }
            previous = offset
        }
    }

    // MARK: Vocabulary

    /// The bytes of a word's key (lower case).
    @inline(__always)
    func keyBytes(_ id: Int) -> UnsafeRawBufferPointer {
        let start = Int(keyOffsets[id])
        let end = Int(keyOffsets[id + 1])
        return UnsafeRawBufferPointer(rebasing: keyBlob[start..<end])
    }

    /// The key of a word: its lower-case form.
    public func key(_ id: Int) -> String { String(decoding: keyBytes(id), as: UTF8.self) }

    /// How the word is usually written (`I`, `Obama`, `the`).
    public func display(_ id: Int) -> String {
        let start = Int(displayOffsets[id])
        let end = Int(displayOffsets[id + 1])
        if start == end { return key(id) }
        return String(decoding: UnsafeRawBufferPointer(rebasing: displayBlob[start..<end]), as: UTF8.self)
    }

    /// The natural log of the word's unigram probability.
    @inline(__always)
    public func logPrior(_ id: Int) -> Float { Quantize.unigramLogProb(priors[id]) }

    /// The word's flags.
    public func wordFlags(_ id: Int) -> WordFlags { WordFlags(rawValue: flags[id]) }

    private func compareKey(_ a: Int, _ b: Int) -> Int {
        Self.compare(keyBytes(a), keyBytes(b))
    }

    private static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let n = min(a.count, b.count)
        for index in 0..<n where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// The id of a word by its key, if the vocabulary has it.
    public func id(ofKey key: String) -> Int? {
        var key = key
        return key.withUTF8 { utf8 -> Int? in
            let probe = UnsafeRawBufferPointer(utf8)
            var low = 0
            var high = wordCount
            while low < high {
                let mid = (low + high) / 2
                let order = Self.compare(keyBytes(mid), probe)
                if order == 0 { return mid }
                if order < 0 { low = mid + 1 } else { high = mid }
            }
            return nil
        }
    }

    /// The ids of all words whose key starts with `prefix` (a contiguous range).
    public func range(ofPrefix prefix: String) -> Range<Int> {
        var prefix = prefix
        return prefix.withUTF8 { utf8 -> Range<Int> in
            let probe = UnsafeRawBufferPointer(utf8)
            if probe.isEmpty { return 0..<wordCount }
            func lowerBound(_ stopBefore: (UnsafeRawBufferPointer) -> Bool) -> Int {
                var low = 0
                var high = wordCount
                while low < high {
                    let mid = (low + high) / 2
                    if stopBefore(keyBytes(mid)) { high = mid } else { low = mid + 1 }
                }
                return low
            }
            let start = lowerBound { Self.compare($0, probe) >= 0 }
            let end = lowerBound { key in
                // First key greater than every key that starts with the prefix.
                let n = min(key.count, probe.count)
                for index in 0..<n where key[index] != probe[index] { return key[index] > probe[index] }
                return false
            }
            return start..<max(start, end)
        }
    }

    /// `range(ofPrefix:).upperBound` of the first `length` bytes of word `id`'s key (so `id` is
    /// in that range), found by galloping forward from `id`: a walk through the vocabulary in
    /// order reads a few keys next to where it is, where two binary searches read ~2 log n keys
    /// all over it (the spelling check's candidate search skips thousands of prefixes a word).
    public func endOfRange(sharingPrefixOf id: Int, length: Int) -> Int {
        let probe = keyBytes(id)
        let count = min(max(0, length), probe.count)
        // Whether a key comes after every key that starts with the prefix (as in `range(ofPrefix:)`).
        func isPast(_ other: Int) -> Bool {
            let key = keyBytes(other)
            for index in 0..<min(key.count, count) where key[index] != probe[index] { return key[index] > probe[index] }
            return false
        }
        var within = id  // not past: it starts with the prefix
        var step = 1
        var next = id + 1
        while next < wordCount, !isPast(next) {
            within = next
            step *= 2
            next = within + step
        }
        var low = within + 1
        var high = min(next, wordCount)
        while low < high {
            let mid = (low + high) / 2
            if isPast(mid) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    // MARK: Word n-grams

    /// Successors of one word: (id, log of the discounted P(next | word)) best first, and the
    /// probability mass left for words outside the list (the back-off mass).
    public func bigramSuccessors(of id: Int) -> (entries: PackArray<UInt32>.SubSequence, weight: Float) {
        let start = Int(bigramOffsets[id])
        let end = Int(bigramOffsets[id + 1])
        return (bigramEntries[start..<end], Quantize.backoffMassValue(bigramWeights[id]))
    }

    /// The id used for the start of a sentence in n-gram contexts.
    public var sentenceStartID: Int { wordCount }

    /// Successors of a word pair, if the pack has that context.
    public func trigramSuccessors(of first: Int, _ second: Int) -> (
        entries: PackArray<UInt32>.SubSequence, weight: Float
    )? {
        let probe = UInt64(first) << 32 | UInt64(second)
        var low = 0
        var high = trigramKeys.count
        while low < high {
            let mid = (low + high) / 2
            let value = trigramKeys[mid]
            if value == probe {
                let start = Int(trigramOffsets[mid])
                let end = Int(trigramOffsets[mid + 1])
                return (trigramEntries[start..<end], Quantize.backoffMassValue(trigramWeights[mid]))
            }
            if value < probe { low = mid + 1 } else { high = mid }
        }
        return nil
    }

    /// Decodes a successor entry into a word id and a log probability.
    @inline(__always)
    public static func decodeSuccessor(_ entry: UInt32) -> (id: Int, logProb: Float) {
        (Int(entry & 0xFFFFF), Quantize.successorLogProb(entry >> 20))
    }
}
