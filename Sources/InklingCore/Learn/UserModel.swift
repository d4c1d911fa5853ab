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
///
/// Layout (issue 18; it was one dictionary of entries per context, most of the engine's heap
/// with the model at its cap): every key and context is kept once (`InternedStrings`, 4-byte
/// ids), every entry is one fixed-size `Slot` of ids and numbers in a single array, one
/// open-addressing table of slot numbers finds an entry by (context id, key id), and the
/// entries of a context form a doubly linked list through their slots, so a context's
/// successors are found without a scan. Answers are those of the old layout; only the order
/// of entries that tie on count and last use at the cap is now fixed (context, then key).
public struct UserModel: Sendable {
    /// One entry: ids into `names` and `displays`, and its numbers.
    private struct Slot {
        var context: UInt32
        /// `UInt32.max`: a free slot.
        var key: UInt32
        /// `UInt32.max`: shown as its key.
        var display: UInt32
        /// Neighbours in the context's list (-1: none).
        var previous: Int32
        var next: Int32
        var count: Double
        var lastUsed: Int64
    }

    /// A context's entries (a list through their slots) and their total count.
    private struct ContextList {
        var head: Int32 = -1
        var size: Int32 = 0
        var total: Double = 0
    }

    /// Keys and contexts; id 0 is the empty context (plain words), kept for good.
    private var names: InternedStrings = {
        var names = InternedStrings(canonical: true)
        _ = names.retain("")
        return names
    }()
    /// How words are shown, where that is not their key.
    private var displays = InternedStrings(canonical: false)
    private var slots: [Slot] = []
    private var freeSlots: [Int32] = []
    /// Open addressing over (context, key): slot + 1, 0 for an empty bucket; a power of two
    /// long, at most three quarters full.
    private var buckets: [UInt32] = []
    private var live = 0
    /// By name id (only contexts have entries).
    private var contexts: [ContextList] = [ContextList()]
    /// Learned word keys (ids) by their first two scalars, for prefix search without a full scan.
    private var prefixIndex: [String: [UInt32]] = [:]
    /// Keys changed or removed since the last `takeChanges()`.
    private var changed: Set<EntryID> = []
    /// While the store is being read (`awaitStore()`): what was forgotten or wiped meanwhile,
    /// for `adoptStored(_:)` to apply to what was read.
    private var awaitingStore = false
    private var forgottenWhileAwaiting: [String] = []
    private var wipedWhileAwaiting = false

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

    private static let none = UInt32.max
    private static let emptyContext: UInt32 = 0

    public init() {}

    /// Number of entries (words and contexts).
    public var entryCount: Int { live }

    /// The learned words (no context), most used first.
    public var words: [LearnedEntry] {
        var result: [LearnedEntry] = []
        result.reserveCapacity(Int(contexts[0].size))
        forEachSlot(inContext: Self.emptyContext) { result.append(entry(at: $0)) }
        return result.sorted { ($0.count, $1.key) > ($1.count, $0.key) }
    }

    /// Every entry (for export and for the store).
    public var allEntries: [LearnedEntry] {
        var result: [LearnedEntry] = []
        result.reserveCapacity(live)
        for index in slots.indices where slots[index].key != Self.none { result.append(entry(at: index)) }
        return result
    }

    /// Adds entries read from a store (or an import).
    public mutating func load(_ entries: [LearnedEntry]) {
        reserve(live + entries.count)
        for entry in entries {
            let index = findOrInsert(context: entry.context, key: entry.key, lastUsed: entry.lastUsed)
            let context = Int(slots[index].context)
            contexts[context].total -= slots[index].count
            setDisplay(entry.display, at: index)
            slots[index].count = entry.count
            slots[index].lastUsed = entry.lastUsed
            contexts[context].total += entry.count
        }
    }

    /// The key's first two scalars (a slice copied whole: building the string scalar by scalar
    /// was most of a learned-word lookup on the key path).
    static func bucket(_ key: String) -> String {
        let scalars = key.unicodeScalars
        let end = scalars.index(scalars.startIndex, offsetBy: 2, limitedBy: scalars.endIndex) ?? scalars.endIndex
        return String(scalars[..<end])
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
        let index = findOrInsert(context: context, key: key, lastUsed: now)
        slots[index].count += 1
        setDisplay(display, at: index)
        slots[index].lastUsed = now
        contexts[Int(slots[index].context)].total += 1
        changed.insert(EntryID(context: context, key: key))
    }

    /// Halves counts every `halfLife` words and drops the least used entries beyond `capacity`.
    private mutating func decayAndCap() {
        let factor = Math.exp(-Math.log(2.0) * 1000 / halfLife)
        // Not marked changed: the store keeps undecayed counts until the entry is next used,
        // which only matters for ranking and saves rewriting every entry.
        for index in slots.indices where slots[index].key != Self.none { slots[index].count *= factor }
        for index in contexts.indices where contexts[index].size > 0 { contexts[index].total *= factor }
        guard live > capacity else { return }
        var order: [Int32] = []
        order.reserveCapacity(live)
        for index in slots.indices where slots[index].key != Self.none { order.append(Int32(index)) }
        // Least used first; ties: least recently used, then by context and key (a total order, so
        // which of equally used entries go never depends on how they are stored).
        order.sort { a, b in
            let x = slots[Int(a)]
            let y = slots[Int(b)]
            if x.count != y.count { return x.count < y.count }
            if x.lastUsed != y.lastUsed { return x.lastUsed < y.lastUsed }
            if x.context != y.context { return names[x.context] < names[y.context] }
            return names[x.key] < names[y.key]
        }
        for index in order.prefix(live - capacity) { removeEntry(at: Int(index)) }
    }

    /// Forgets a word everywhere: as a word, as a successor and as a context.
    public mutating func forget(_ word: String) {
        let key = WordText.key(word)
        if awaitingStore { forgottenWhileAwaiting.append(key) }
        for context in contexts.indices where contexts[context].size > 0 {
            let name = names[UInt32(context)]
            if name == key || name.hasPrefix(key + " ") || name.hasSuffix(" " + key) {
                while contexts[context].head >= 0 { removeEntry(at: Int(contexts[context].head)) }
            }
        }
        guard let keyID = names.id(of: key) else { return }
        for index in slots.indices where slots[index].key == keyID { removeEntry(at: index) }
    }

    /// Forgets everything.
    public mutating func wipe() {
        for index in slots.indices where slots[index].key != Self.none {
            changed.insert(EntryID(context: names[slots[index].context], key: names[slots[index].key]))
        }
        if awaitingStore {
            wipedWhileAwaiting = true
            forgottenWhileAwaiting.removeAll()
        }
        var empty = UserModel()
        empty.capacity = capacity
        empty.halfLife = halfLife
        empty.recorded = recorded
        empty.changed = changed
        empty.awaitingStore = awaitingStore
        empty.wipedWhileAwaiting = wipedWhileAwaiting
        self = empty
    }

    /// Whether the user has used a word.
    public func knows(_ key: String) -> Bool { find(context: Self.emptyContext, key: key) != nil }

    /// The entry of a word (no context).
    public func word(_ key: String) -> LearnedEntry? {
        find(context: Self.emptyContext, key: key).map { entry(at: $0) }
    }

    /// Learned words starting with a key prefix, most used first.
    public func words(withPrefix prefix: String, limit: Int) -> [LearnedEntry] {
        guard contexts[0].size > 0, !prefix.isEmpty else { return [] }
        var keys: [UInt32] = []
        if prefix.unicodeScalars.count >= 2 {
            keys = (prefixIndex[Self.bucket(prefix)] ?? []).filter { names[$0].hasPrefix(prefix) }
        } else {
            for (bucket, members) in prefixIndex where bucket.hasPrefix(prefix) { keys += members }
        }
        var found = keys.compactMap { key in find(context: Self.emptyContext, keyID: key) }
        found.sort { a, b in
            let x = slots[a]
            let y = slots[b]
            return x.count != y.count ? x.count > y.count : names[x.key] < names[y.key]
        }
        return found.prefix(limit).map { entry(at: $0) }
    }

    /// Learned successors of a context (one or two word keys, space-separated).
    public func successors(of context: String) -> [String: LearnedEntry] {
        guard let id = names.id(of: context), contexts[Int(id)].size > 0 else { return [:] }
        var result: [String: LearnedEntry] = [:]
        result.reserveCapacity(Int(contexts[Int(id)].size))
        forEachSlot(inContext: id) { index in result[names[slots[index].key]] = entry(at: index) }
        return result
    }

    /// Total learned count under a context.
    public func total(of context: String) -> Double {
        guard let id = names.id(of: context) else { return 0 }
        return contexts[Int(id)].total
    }

    /// The entries changed since the last call (nil entry: removed), for the store to persist.
    public mutating func takeChanges() -> [(context: String, key: String, entry: LearnedEntry?)] {
        let result = changed.map { id in
            (id.context, id.key, find(context: id.context, key: id.key).map { entry(at: $0) })
        }
        changed.removeAll()
        return result
    }

    // MARK: Reading the store in the background

    /// Marks the model as waiting for the store, read elsewhere (issue 18: the engine does not
    /// wait for it at start): forgets and wipes from now on are kept for `adoptStored(_:)`.
    public mutating func awaitStore() {
        awaitingStore = true
    }

    /// Takes over the model read from the store while this one went on without it: what was
    /// read, less what was forgotten or wiped meanwhile, with this model's entries added on top
    /// (their counts added to the stored ones: this model started with nothing), and this
    /// model's limits and unsaved changes (plus the removals of what was read and forgotten).
    public mutating func adoptStored(_ stored: UserModel) {
        var merged = stored
        merged.capacity = capacity
        merged.halfLife = halfLife
        merged.recorded = recorded
        merged.changed = []
        if wipedWhileAwaiting { merged.wipe() }
        for key in forgottenWhileAwaiting { merged.forget(key) }
        merged.reserve(merged.live + live)
        for id in changed where find(context: id.context, key: id.key) == nil {
            if let index = merged.find(context: id.context, key: id.key) { merged.removeEntry(at: index) }
        }
        for index in slots.indices where slots[index].key != Self.none {
            let ours = entry(at: index)
            let target = merged.findOrInsert(context: ours.context, key: ours.key, lastUsed: ours.lastUsed)
            let context = Int(merged.slots[target].context)
            merged.slots[target].count += ours.count
            merged.contexts[context].total += ours.count
            merged.slots[target].lastUsed = max(merged.slots[target].lastUsed, ours.lastUsed)
            merged.setDisplay(ours.display, at: target)
            merged.changed.insert(EntryID(context: ours.context, key: ours.key))
        }
        merged.changed.formUnion(changed)
        merged.awaitingStore = false
        merged.forgottenWhileAwaiting = []
        merged.wipedWhileAwaiting = false
        self = merged
    }

    // MARK: Layout

    private func entry(at index: Int) -> LearnedEntry {
        let slot = slots[index]
        let key = names[slot.key]
        return LearnedEntry(
            context: names[slot.context], key: key, display: slot.display == Self.none ? key : displays[slot.display],
            count: slot.count, lastUsed: slot.lastUsed)
    }

    private func forEachSlot(inContext context: UInt32, _ body: (Int) -> Void) {
        var index = contexts[Int(context)].head
        while index >= 0 {
            body(Int(index))
            index = slots[Int(index)].next
        }
    }

    private static func hash(context: UInt32, key: UInt32) -> Int {
        let mixed = (UInt64(context) << 32 | UInt64(key)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 29))
    }

    private func find(context: String, key: String) -> Int? {
        guard let contextID = names.id(of: context), let keyID = names.id(of: key) else { return nil }
        return find(context: contextID, keyID: keyID)
    }

    private func find(context: UInt32, key: String) -> Int? {
        guard let keyID = names.id(of: key) else { return nil }
        return find(context: context, keyID: keyID)
    }

    private func find(context: UInt32, keyID: UInt32) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var position = Self.hash(context: context, key: keyID) & mask
        while true {
            let stored = buckets[position]
            if stored == 0 { return nil }
            let slot = slots[Int(stored - 1)]
            if slot.key == keyID && slot.context == context { return Int(stored - 1) }
            position = (position + 1) & mask
        }
    }

    /// Room for `entries` entries without growing (loading a store at once).
    private mutating func reserve(_ entries: Int) {
        // Geometric beyond an exact first fill, so that many small loads stay linear.
        let needed = entries - freeSlots.count
        if slots.capacity < needed { slots.reserveCapacity(max(needed, slots.capacity + slots.capacity / 4)) }
        var bucketCount = max(16, buckets.count)
        while entries * 4 > bucketCount * 3 { bucketCount *= 2 }
        if bucketCount != buckets.count { rebuildBuckets(bucketCount) }
    }

    private mutating func rebuildBuckets(_ count: Int) {
        buckets = [UInt32](repeating: 0, count: count)
        let mask = count - 1
        for index in slots.indices where slots[index].key != Self.none {
            var position = Self.hash(context: slots[index].context, key: slots[index].key) & mask
            while buckets[position] != 0 { position = (position + 1) & mask }
            buckets[position] = UInt32(index + 1)
        }
    }

    /// The slot of (context, key), created with count 0 (and last use `lastUsed`) if absent.
    private mutating func findOrInsert(context: String, key: String, lastUsed: Int64) -> Int {
        if let index = find(context: context, key: key) { return index }
        if (live + 1) * 4 > buckets.count * 3 { rebuildBuckets(max(16, buckets.count * 2)) }
        let contextID = names.retain(context)
        let keyID = names.retain(key)
        while contexts.count < names.idLimit { contexts.append(ContextList()) }
        let slot = Slot(
            context: contextID, key: keyID, display: Self.none, previous: -1, next: contexts[Int(contextID)].head,
            count: 0, lastUsed: lastUsed)
        let index: Int
        if let reused = freeSlots.popLast() {
            index = Int(reused)
            slots[index] = slot
        } else {
            // Grown by a quarter, not doubled: at the cap the model stays near its size.
            if slots.count == slots.capacity { slots.reserveCapacity(slots.count + max(1024, slots.count / 4)) }
            index = slots.count
            slots.append(slot)
        }
        if slot.next >= 0 { slots[Int(slot.next)].previous = Int32(index) }
        contexts[Int(contextID)].head = Int32(index)
        contexts[Int(contextID)].size += 1
        let mask = buckets.count - 1
        var position = Self.hash(context: contextID, key: keyID) & mask
        while buckets[position] != 0 { position = (position + 1) & mask }
        buckets[position] = UInt32(index + 1)
        live += 1
        if contextID == Self.emptyContext { prefixIndex[Self.bucket(key), default: []].append(keyID) }
        return index
    }

    private mutating func setDisplay(_ display: String, at index: Int) {
        let keyID = slots[index].key
        let old = slots[index].display
        let new: UInt32
        if display.utf8.elementsEqual(names[keyID].utf8) {
            new = Self.none
        } else if old != Self.none, display.utf8.elementsEqual(displays[old].utf8) {
            return
        } else {
            new = displays.retain(display)
        }
        if old != Self.none { displays.release(old) }
        slots[index].display = new
    }

    private mutating func removeEntry(at index: Int) {
        let slot = slots[index]
        let context = Int(slot.context)
        if slot.context == Self.emptyContext {
            let bucket = Self.bucket(names[slot.key])
            if var members = prefixIndex.removeValue(forKey: bucket) {
                if let position = members.firstIndex(of: slot.key) {
                    members.swapAt(position, members.count - 1)
                    members.removeLast()
                }
                prefixIndex[bucket] = members
            }
        }
        contexts[context].total = max(0, contexts[context].total - slot.count)
        if slot.previous >= 0 { slots[Int(slot.previous)].next = slot.next } else { contexts[context].head = slot.next }
        if slot.next >= 0 { slots[Int(slot.next)].previous = slot.previous }
        contexts[context].size -= 1
        if contexts[context].size == 0 { contexts[context] = ContextList() }
        changed.insert(EntryID(context: names[slot.context], key: names[slot.key]))
        removeFromBuckets(index)
        if slot.display != Self.none { displays.release(slot.display) }
        names.release(slot.context)  // the empty context keeps the reference it was made with
        names.release(slot.key)
        slots[index] = Slot(
            context: Self.none, key: Self.none, display: Self.none, previous: -1, next: -1, count: 0, lastUsed: 0)
        freeSlots.append(Int32(index))
        live -= 1
    }

    /// Takes a slot out of the table, shifting later members of its probe run back.
    private mutating func removeFromBuckets(_ index: Int) {
        let slots = self.slots
        let home = Self.hash(context: slots[index].context, key: slots[index].key)
        ProbeTable.remove(UInt32(index), home: home, from: &buckets) {
            Self.hash(context: slots[Int($0)].context, key: slots[Int($0)].key)
        }
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
