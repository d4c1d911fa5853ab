/// Strings kept once each with a reference count, found through an open-addressing table of
/// 4-byte ids: the learned model's words and contexts (issue 18: a dictionary keyed by strings
/// costs 20 bytes a bucket and a dictionary per context much more; this costs 4 a bucket).
struct InternedStrings: Sendable {
    /// Whether two strings are the same when canonically equivalent (`==`, as for dictionary
    /// keys) or only when their UTF-8 bytes are equal (how a word is shown must stay as typed).
    let canonical: Bool
    /// By id; a freed id holds "" until it is reused.
    private var strings: [String] = []
    private var references: [UInt32] = []
    private var freeIDs: [UInt32] = []
    /// Open addressing with linear probing: id + 1, 0 for an empty bucket. A power of two long,
    /// at most three quarters full.
    private var buckets: [UInt32] = []
    /// Live strings.
    private(set) var count = 0

    init(canonical: Bool) { self.canonical = canonical }

    /// One more than the largest id handed out (ids are dense: freed ones are reused).
    var idLimit: Int { strings.count }

    subscript(id: UInt32) -> String { strings[Int(id)] }

    /// The id of a string, if it is kept.
    func id(of text: String) -> UInt32? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var position = hash(text) & mask
        while true {
            let stored = buckets[position]
            if stored == 0 { return nil }
            if same(strings[Int(stored - 1)], text) { return stored - 1 }
            position = (position + 1) & mask
        }
    }

    /// The id of `text`, kept if it was not, with one more reference.
    mutating func retain(_ text: String) -> UInt32 {
        if let id = id(of: text) {
            references[Int(id)] += 1
            return id
        }
        if (count + 1) * 4 > buckets.count * 3 { rebuild(bucketCount: max(16, buckets.count * 2)) }
        let id: UInt32
        if let reused = freeIDs.popLast() {
            id = reused
            strings[Int(id)] = text
            references[Int(id)] = 1
        } else {
            id = UInt32(strings.count)
            strings.append(text)
            references.append(1)
        }
        insert(id)
        count += 1
        return id
    }

    /// One more reference to a kept string.
    mutating func retain(id: UInt32) { references[Int(id)] += 1 }

    /// One reference fewer; the string goes with its last one.
    mutating func release(_ id: UInt32) {
        references[Int(id)] -= 1
        guard references[Int(id)] == 0 else { return }
        remove(id)
        strings[Int(id)] = ""
        freeIDs.append(id)
        count -= 1
    }

    private func hash(_ text: String) -> Int { Self.hash(text, canonical: canonical) }

    private static func hash(_ text: String, canonical: Bool) -> Int {
        if canonical { return text.hashValue }
        var hasher = Hasher()
        for byte in text.utf8 { hasher.combine(byte) }
        return hasher.finalize()
    }

    private func same(_ a: String, _ b: String) -> Bool {
        canonical ? a == b : a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
    }

    private mutating func insert(_ id: UInt32) {
        let mask = buckets.count - 1
        var position = hash(strings[Int(id)]) & mask
        while buckets[position] != 0 { position = (position + 1) & mask }
        buckets[position] = id + 1
    }

    /// Takes `id` out of the table, shifting later members of its probe run back (no tombstones).
    private mutating func remove(_ id: UInt32) {
        let strings = self.strings
        let canonical = self.canonical
        ProbeTable.remove(id, home: hash(strings[Int(id)]), from: &buckets) {
            Self.hash(strings[Int($0)], canonical: canonical)
        }
    }

    private mutating func rebuild(bucketCount: Int) {
        buckets = [UInt32](repeating: 0, count: bucketCount)
        for id in 0..<strings.count where references[id] > 0 { insert(UInt32(id)) }
    }
}
