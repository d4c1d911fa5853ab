/// One learned fact: a word, or a word after a context of one or two words.
public struct LearnedEntry: Equatable, Sendable, Hashable {
    /// The preceding words' keys, space-separated (empty for a plain word).
    public var context: String
    /// The word's key (lower case).
    public var key: String
    /// How the user writes it.
    public var display: String
    /// Decayed use count.
    public var count: Double
    /// When it was last used (seconds since the epoch or any fixed origin).
    public var lastUsed: Int64

    public init(context: String, key: String, display: String, count: Double, lastUsed: Int64) {
        self.context = context
        self.key = key
        self.display = display
        self.count = count
        self.lastUsed = lastUsed
    }
}

/// What the user has typed: words and short contexts with decayed counts, capped in size.
///
/// Pure and in memory; a store (SQLite, in the engine and CLI) loads it and persists the
/// changes it reports, in batches, off the key path.
public struct UserModel: Sendable {
    /// Entries by context then key.
    private var table: [String: [String: LearnedEntry]] = [:]
    /// Total count per context (for conditional probabilities).
    private var totals: [String: Double] = [:]
    /// Learned word keys by their first two scalars, for prefix search without a full scan.
    private var prefixIndex: [String: Set<String>] = [:]
    /// Keys changed or removed since the last `takeChanges()`.
    private var changed: Set<EntryID> = []

    /// Most entries kept; the least used go first.
    public var capacity = 30_000
    /// Counts halve after this many recorded words.
    public var halfLife = 20_000.0
    /// Decay is applied lazily: every count is stored relative to this scale.
    private var recorded = 0.0

    struct EntryID: Hashable {
        var context: String
        var key: String
    }

    public init() {}

    /// Number of entries (words and contexts).
    public var entryCount: Int { table.values.reduce(0) { $0 + $1.count } }

    /// The learned words (no context), most used first.
    public var words: [LearnedEntry] {
        (table[""] ?? [:]).values.sorted { ($0.count, $1.key) > ($1.count, $0.key) }
    }

    /// Every entry (for export and for the store).
    public var allEntries: [LearnedEntry] { table.values.flatMap { $0.values } }

    /// Adds entries read from a store (or an import).
    public mutating func load(_ entries: [LearnedEntry]) {
        for entry in entries {
            if let old = table[entry.context]?[entry.key] { totals[entry.context, default: 0] -= old.count }
            table[entry.context, default: [:]][entry.key] = entry
            totals[entry.context, default: 0] += entry.count
            if entry.context.isEmpty { prefixIndex[Self.bucket(entry.key), default: []].insert(entry.key) }
        }
    }

    private static func bucket(_ key: String) -> String {
        String(String.UnicodeScalarView(key.unicodeScalars.prefix(2)))
    }

    /// Records a committed word after its context words (most recent last).
    public mutating func record(word: String, after context: [String], now: Int64) {
        let key = WordText.key(word)
        guard !key.isEmpty else { return }
        let contextKeys = context.suffix(2).map { WordText.key($0) }
        bump(context: "", key: key, display: word, now: now)
        if let last = contextKeys.last { bump(context: last, key: key, display: word, now: now) }
        if contextKeys.count == 2 {
            bump(context: contextKeys.joined(separator: " "), key: key, display: word, now: now)
        }
        recorded += 1
        if recorded.truncatingRemainder(dividingBy: 1000) == 0 { decayAndCap() }
    }

    private mutating func bump(context: String, key: String, display: String, now: Int64) {
        var entry =
            table[context]?[key] ?? LearnedEntry(context: context, key: key, display: display, count: 0, lastUsed: now)
        entry.count += 1
        entry.display = display
        entry.lastUsed = now
        table[context, default: [:]][key] = entry
        totals[context, default: 0] += 1
        if context.isEmpty { prefixIndex[Self.bucket(key), default: []].insert(key) }
        changed.insert(EntryID(context: context, key: key))
    }

    /// Halves counts every `halfLife` words and drops the least used entries beyond `capacity`.
    private mutating func decayAndCap() {
        let factor = Math.exp(-Math.log(2.0) * 1000 / halfLife)
        var all: [(EntryID, Double)] = []
        for (context, entries) in table {
            var decayed = entries
            for (key, var entry) in entries {
                entry.count *= factor
                decayed[key] = entry
                all.append((EntryID(context: context, key: key), entry.count))
                // Not marked changed: the store keeps undecayed counts until the entry is next
                // used, which only matters for ranking and saves rewriting every entry.
            }
            table[context] = decayed
            totals[context] = (totals[context] ?? 0) * factor
        }
        guard all.count > capacity else { return }
        all.sort { $0.1 < $1.1 }
        for (id, _) in all.prefix(all.count - capacity) { removeEntry(id) }
    }

    private mutating func removeEntry(_ id: EntryID) {
        guard let entry = table[id.context]?.removeValue(forKey: id.key) else { return }
        if id.context.isEmpty { prefixIndex[Self.bucket(id.key)]?.remove(id.key) }
        totals[id.context] = max(0, (totals[id.context] ?? 0) - entry.count)
        if table[id.context]?.isEmpty == true {
            table.removeValue(forKey: id.context)
            totals.removeValue(forKey: id.context)
        }
        changed.insert(id)
    }

    /// Forgets a word everywhere: as a word, as a successor and as a context.
    public mutating func forget(_ word: String) {
        let key = WordText.key(word)
        for context in Array(table.keys) {
            if table[context]?[key] != nil { removeEntry(EntryID(context: context, key: key)) }
            if context == key || context.hasPrefix(key + " ") || context.hasSuffix(" " + key) {
                for entryKey in Array(table[context]?.keys ?? [:].keys) {
                    removeEntry(EntryID(context: context, key: entryKey))
                }
            }
        }
    }

    /// Forgets everything.
    public mutating func wipe() {
        for (context, entries) in table {
            for key in entries.keys { removeEntry(EntryID(context: context, key: key)) }
        }
    }

    /// Whether the user has used a word.
    public func knows(_ key: String) -> Bool { table[""]?[key] != nil }

    /// The entry of a word (no context).
    public func word(_ key: String) -> LearnedEntry? { table[""]?[key] }

    /// Learned words starting with a key prefix, most used first.
    public func words(withPrefix prefix: String, limit: Int) -> [LearnedEntry] {
        guard let words = table[""], !prefix.isEmpty else { return [] }
        var keys: [String] = []
        if prefix.unicodeScalars.count >= 2 {
            keys = (prefixIndex[Self.bucket(prefix)] ?? []).filter { $0.hasPrefix(prefix) }
        } else {
            for (bucket, members) in prefixIndex where bucket.hasPrefix(prefix) { keys += members }
        }
        var found = keys.compactMap { words[$0] }
        found.sort { ($0.count, $1.key) > ($1.count, $0.key) }
        return Array(found.prefix(limit))
    }

    /// Learned successors of a context (one or two word keys, space-separated).
    public func successors(of context: String) -> [String: LearnedEntry] { table[context] ?? [:] }

    /// Total learned count under a context.
    public func total(of context: String) -> Double { totals[context] ?? 0 }

    /// The entries changed since the last call (nil entry: removed), for the store to persist.
    public mutating func takeChanges() -> [(context: String, key: String, entry: LearnedEntry?)] {
        let result = changed.map { id in (id.context, id.key, table[id.context]?[id.key]) }
        changed.removeAll()
        return result
    }
}

/// What must never be learned.
public enum LearningPolicy {
    /// Whether a committed word may be recorded.
    ///
    /// Never: numbers, e-mail addresses, URLs (with or without credentials), and strings that look
    /// like secrets (long tokens mixing letters and digits or with little repetition).
    public static func mayRecord(_ word: String, surroundingChunk: String = "") -> Bool {
        let scalars = Array(word.unicodeScalars)
        guard !scalars.isEmpty, scalars.count <= 40 else { return false }
        if WordText.containsDigit(word) { return false }
        let chunk = surroundingChunk.isEmpty ? word : surroundingChunk
        if chunk.contains("@") || chunk.contains("://") || chunk.hasPrefix("www.") { return false }
        if looksLikeSecret(chunk) { return false }
        return WordText.words(in: word).count == 1
    }

    /// Whether a whitespace-delimited chunk may be learned from at all (not an address, URL or secret).
    public static func mayLearnChunk<S: StringProtocol>(_ chunk: S) -> Bool {
        let text = String(chunk)
        return
            !(text.contains("@") || text.contains("://") || text.lowercased().hasPrefix("www.")
            || looksLikeSecret(text))
    }

    /// Long random-looking tokens: API keys, passwords typed in the open, hashes.
    public static func looksLikeSecret(_ token: String) -> Bool {
        // Hyphens, apostrophes and closing punctuation belong to words (`Clinton-Kaine's,`).
        let scalars = Array(token.unicodeScalars).filter { !"-'\u{2019}.,;:!?\")".unicodeScalars.contains($0) }
        guard scalars.count >= 12 else { return false }
        let digits = scalars.filter { $0.properties.generalCategory == .decimalNumber }.count
        let uppers = scalars.filter { $0.properties.isUppercase }.count
        let lowers = scalars.filter { $0.properties.isLowercase }.count
        let classes = [digits > 0, uppers > 0, lowers > 0, scalars.count - digits - uppers - lowers > 0].filter { $0 }
            .count
        if classes >= 3 { return true }
        // Case changes inside the token (camel-humped randomness) or few vowels in a long word.
        var changes = 0
        for index in 1..<scalars.count
        where scalars[index].properties.isUppercase != scalars[index - 1].properties.isUppercase {
            changes += 1
        }
        if changes >= 4 { return true }
        let vowels = scalars.filter { "aeiouyAEIOUY".unicodeScalars.contains($0) }.count
        return scalars.count >= 16 && Double(vowels) / Double(scalars.count) < 0.15
    }
}
