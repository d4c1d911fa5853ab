import InklingCore

/// The learned model's layout before issue 18 (a dictionary of entries per context), kept as
/// the reference the flat `UserModel` is checked against (`UserModelLayoutTests`). One change:
/// entries that tie on count at the cap are dropped in a fixed order (least recently used, then
/// by context and key), as `UserModel` drops them; before, that order followed the dictionaries'
/// per-process hash seed.
struct DictionaryUserModel {
    /// Entries by context then key.
    private var table: [String: [String: LearnedEntry]] = [:]
    /// Total count per context (for conditional probabilities).
    private var totals: [String: Double] = [:]
    /// Learned word keys by their first two scalars, for prefix search without a full scan.
    private var prefixIndex: [String: Set<String>] = [:]
    /// Keys changed or removed since the last `takeChanges()`.
    private var changed: Set<EntryID> = []

    /// Most entries kept; the least used go first.
    var capacity = 30_000
    /// Counts halve after this many recorded words.
    var halfLife = 20_000.0
    /// Decay is applied lazily: every count is stored relative to this scale.
    private var recorded = 0.0

    struct EntryID: Hashable {
        var context: String
        var key: String
    }

    init() {}

    /// Number of entries (words and contexts).
    var entryCount: Int { table.values.reduce(0) { $0 + $1.count } }

    /// The learned words (no context), most used first.
    var words: [LearnedEntry] {
        (table[""] ?? [:]).values.sorted { ($0.count, $1.key) > ($1.count, $0.key) }
    }

    /// Every entry (for export and for the store).
    var allEntries: [LearnedEntry] { table.values.flatMap { $0.values } }

    /// Adds entries read from a store (or an import).
    mutating func load(_ entries: [LearnedEntry]) {
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
    mutating func record(word: String, after context: [String], now: Int64) {
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
        var all: [(EntryID, Double, Int64)] = []
        for (context, entries) in table {
            var decayed = entries
            for (key, var entry) in entries {
                entry.count *= factor
                decayed[key] = entry
                all.append((EntryID(context: context, key: key), entry.count, entry.lastUsed))
                // Not marked changed: the store keeps undecayed counts until the entry is next
                // used, which only matters for ranking and saves rewriting every entry.
            }
            table[context] = decayed
            totals[context] = (totals[context] ?? 0) * factor
        }
        guard all.count > capacity else { return }
        all.sort { a, b in
            if a.1 != b.1 { return a.1 < b.1 }
            if a.2 != b.2 { return a.2 < b.2 }
            return (a.0.context, a.0.key) < (b.0.context, b.0.key)
        }
        for (id, _, _) in all.prefix(all.count - capacity) { removeEntry(id) }
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
    mutating func forget(_ word: String) {
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
    mutating func wipe() {
        for (context, entries) in table {
            for key in entries.keys { removeEntry(EntryID(context: context, key: key)) }
        }
    }

    /// Whether the user has used a word.
    func knows(_ key: String) -> Bool { table[""]?[key] != nil }

    /// The entry of a word (no context).
    func word(_ key: String) -> LearnedEntry? { table[""]?[key] }

    /// Learned words starting with a key prefix, most used first.
    func words(withPrefix prefix: String, limit: Int) -> [LearnedEntry] {
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
    func successors(of context: String) -> [String: LearnedEntry] { table[context] ?? [:] }

    /// Total learned count under a context.
    func total(of context: String) -> Double { totals[context] ?? 0 }

    /// The entries changed since the last call (nil entry: removed), for the store to persist.
    mutating func takeChanges() -> [(context: String, key: String, entry: LearnedEntry?)] {
        let result = changed.map { id in (id.context, id.key, table[id.context]?[id.key]) }
        changed.removeAll()
        return result
    }
}
