/// A small least-recently-used map with a fixed capacity. Lookups and inserts are O(capacity)
/// at worst (eviction scans for the oldest entry), which is nothing at the sizes used here.
struct LRUCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let capacity: Int
    private var entries: [Key: (value: Value, used: UInt64)] = [:]
    private var tick: UInt64 = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { entries.count }

    /// The value for `key`, marking it most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let entry = entries[key] else { return nil }
        tick += 1
        entries[key] = (entry.value, tick)
        return entry.value
    }

    mutating func insert(_ value: Value, for key: Key) {
        tick += 1
        if entries[key] == nil, entries.count >= capacity,
            let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key
        {
            entries[oldest] = nil
        }
        entries[key] = (value, tick)
    }

    func contains(_ key: Key) -> Bool { entries[key] != nil }
}
