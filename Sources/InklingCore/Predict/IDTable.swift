/// A map from pack word ids to numbers, for the predictor's lookups per candidate: open
/// addressing with a multiplicative hash. A Swift dictionary hashes every `Int` key with
/// SipHash, which was most of the cost of scoring a candidate; emptying this table is O(1).
struct IDTable<Value: ExpressibleByIntegerLiteral> {
    private var keys: [Int] = []
    private var values: [Value] = []
    /// A slot is in use when its stamp is `generation` (emptying the table starts a new one).
    private var stamps: [UInt32] = []
    private var generation: UInt32 = 1
    /// Entries in the table.
    private(set) var count = 0

    /// An empty table with room for `capacity` entries before it grows.
    init(capacity: Int = 0) {
        if capacity > 0 { allocate(slots: Self.slots(for: capacity)) }
    }

    private static func slots(for capacity: Int) -> Int {
        var slots = 16
        while slots < 2 * capacity { slots <<= 1 }
        return slots
    }

    private mutating func allocate(slots: Int) {
        keys = [Int](repeating: 0, count: slots)
        values = [Value](repeating: 0, count: slots)
        stamps = [UInt32](repeating: 0, count: slots)
        generation = 1
        count = 0
    }

    @inline(__always)
    private func home(_ id: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(truncatingIfNeeded: id) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (keys.count - 1)
    }

    /// The value of `id`, nil when it has none.
    subscript(id: Int) -> Value? {
        guard count > 0 else { return nil }
        var index = home(id)
        while stamps[index] == generation {
            if keys[index] == id { return values[index] }
            index = (index + 1) & (keys.count - 1)
        }
        return nil
    }

    /// Sets the value of `id` (replacing the one it had).
    mutating func set(_ id: Int, _ value: Value) {
        if 2 * (count + 1) > keys.count { grow() }
        var index = home(id)
        while stamps[index] == generation {
            if keys[index] == id {
                values[index] = value
                return
            }
            index = (index + 1) & (keys.count - 1)
        }
        keys[index] = id
        values[index] = value
        stamps[index] = generation
        count += 1
    }

    private mutating func grow() {
        let old = (keys, values, stamps, generation)
        allocate(slots: max(16, 2 * old.0.count))
        for index in old.0.indices where old.2[index] == old.3 { set(old.0[index], old.1[index]) }
    }

    /// Empties the table, keeping its room.
    mutating func removeAll() {
        guard count > 0 else { return }
        count = 0
        if generation == UInt32.max {
            for index in stamps.indices { stamps[index] = 0 }
            generation = 1
        } else {
            generation += 1
        }
    }

    /// Calls `body` with every id in the table (in no particular order).
    func forEachID(_ body: (Int) -> Void) {
        guard count > 0 else { return }
        for index in keys.indices where stamps[index] == generation { body(keys[index]) }
    }
}
