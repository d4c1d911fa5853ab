/// A map from pack word ids to numbers, for the predictor's lookups per candidate: open
/// addressing with a multiplicative hash. A Swift dictionary hashes every `Int` key with
/// SipHash, which was most of the cost of scoring a candidate; emptying this table is O(1).
struct IDTable<Value: ExpressibleByIntegerLiteral> {
    /// A slot's id, stamp and value side by side: a lookup on a cold table reads one cache
    /// line, not one in each of three arrays.
    private struct Slot {
        var key: Int
        /// In use when it is `generation` (emptying the table starts a new one).
        var stamp: UInt32
        var value: Value
    }
    private var slots: [Slot] = []
    private var generation: UInt32 = 1
    /// Entries in the table.
    private(set) var count = 0

    /// An empty table with room for `capacity` entries before it grows.
    init(capacity: Int = 0) {
        if capacity > 0 { allocate(slots: Self.slotCount(for: capacity)) }
    }

    private static func slotCount(for capacity: Int) -> Int {
        var slots = 16
        while slots < 2 * capacity { slots <<= 1 }
        return slots
    }

    private mutating func allocate(slots slotCount: Int) {
        slots = [Slot](repeating: Slot(key: 0, stamp: 0, value: 0), count: slotCount)
        generation = 1
        count = 0
    }

    @inline(__always)
    private func home(_ id: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(truncatingIfNeeded: id) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (slots.count - 1)
    }

    /// The value of `id`, nil when it has none.
    subscript(id: Int) -> Value? {
        guard count > 0 else { return nil }
        let mask = slots.count - 1
        var index = home(id)
        while slots[index].stamp == generation {
            if slots[index].key == id { return slots[index].value }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Sets the value of `id` (replacing the one it had).
    mutating func set(_ id: Int, _ value: Value) {
        if 2 * (count + 1) > slots.count { grow() }
        let mask = slots.count - 1
        var index = home(id)
        while slots[index].stamp == generation {
            if slots[index].key == id {
                slots[index].value = value
                return
            }
            index = (index + 1) & mask
        }
        slots[index] = Slot(key: id, stamp: generation, value: value)
        count += 1
    }

    private mutating func grow() {
        let (old, oldGeneration) = (slots, generation)
        allocate(slots: max(16, 2 * old.count))
        for slot in old where slot.stamp == oldGeneration { set(slot.key, slot.value) }
    }

    /// Empties the table, keeping its room.
    mutating func removeAll() {
        guard count > 0 else { return }
        count = 0
        if generation == UInt32.max {
            for index in slots.indices { slots[index].stamp = 0 }
            generation = 1
        } else {
            generation += 1
        }
    }

    /// Calls `body` with every id in the table (in no particular order).
    func forEachID(_ body: (Int) -> Void) {
        guard count > 0 else { return }
        for slot in slots where slot.stamp == generation { body(slot.key) }
    }
}
