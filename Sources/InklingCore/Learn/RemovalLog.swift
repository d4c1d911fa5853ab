/// What forgets and wipes removed from the store, in generations, so that a writer holding
/// changes made on an older model (another engine, a second session) does not write removed
/// words back.
///
/// Ordering is by the store's `generation` (every committed write increases it), not by clocks:
/// a change carries the generation of the model it was made on (`base`); a forget or wipe
/// committed at a later generation wins over it. This is deliberately conservative: a word typed
/// after a forget, but before the engine took the store's new state (about a second), is dropped
/// too — a forgotten word never comes back.
///
/// Forgotten words are kept as 16-bit tags, not as text: the store must not keep a word the user
/// asked it to forget, and a 16-bit tag matches thousands of words, so it tells nothing. A tag
/// collision only drops another pending word (a one in 65,536 chance per forget held), never
/// keeps a forgotten one. Tags expire (`UserStore` prunes them after some minutes); a change made
/// on a model older than the oldest tag still held is refused as a whole (`completeSince`).
public struct RemovalLog: Equatable, Sendable {
    /// The generation the last wipe committed at (0: never wiped).
    public var wipedAt: Int64
    /// The generation of the latest forget of any word with that tag.
    public var forgotten: [UInt16: Int64]
    /// Forgets committed before this generation may have been pruned from `forgotten`.
    public var completeSince: Int64

    public init(wipedAt: Int64 = 0, forgotten: [UInt16: Int64] = [:], completeSince: Int64 = 0) {
        self.wipedAt = wipedAt
        self.forgotten = forgotten
        self.completeSince = completeSince
    }

    /// The tag of a word key: FNV-1a over its UTF-8, folded to 16 bits (stable across processes,
    /// unlike `Hasher`).
    public static func tag(_ key: String) -> UInt16 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return UInt16(truncatingIfNeeded: hash ^ (hash >> 16) ^ (hash >> 32) ^ (hash >> 48))
    }

    /// Whether a change to the entry (context, key), made on a model loaded at generation `base`,
    /// may still be written: no wipe since, and no forget since of the word or a context word.
    public func allows(context: String, key: String, base: Int64) -> Bool {
        if wipedAt > base || completeSince > base { return false }
        if forgotten.isEmpty { return true }
        if let at = forgotten[Self.tag(key)], at > base { return false }
        for word in context.split(separator: " ") {
            if let at = forgotten[Self.tag(String(word))], at > base { return false }
        }
        return true
    }
}

/// How a writer's change meets an entry that another process wrote meanwhile.
public enum LearnedMerge {
    /// The larger count and the later use win, with the display of the later use (the same rule
    /// as `learned import`): neither side's word is lost.
    public static func merged(stored: LearnedEntry?, ours: LearnedEntry) -> LearnedEntry {
        guard let stored else { return ours }
        var result = ours
        result.count = max(stored.count, ours.count)
        result.lastUsed = max(stored.lastUsed, ours.lastUsed)
        if stored.lastUsed > ours.lastUsed { result.display = stored.display }
        return result
    }
}
