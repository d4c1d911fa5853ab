/// Deletion from an open-addressing table with linear probing and no tombstones, shared by the
/// learned model's index and its interned strings: buckets hold `member + 1` (0 is empty) and their
/// count is a power of two.
enum ProbeTable {
    /// Empties the bucket holding `member` (found from `home`, its first bucket) and shifts later
    /// members of its probe run back; `homeOf` gives a stored member's first bucket (unmasked).
    static func remove(_ member: UInt32, home: Int, from buckets: inout [UInt32], homeOf: (UInt32) -> Int) {
        let mask = buckets.count - 1
        var hole = home & mask
        while buckets[hole] != member + 1 { hole = (hole + 1) & mask }
        var next = (hole + 1) & mask
        while buckets[next] != 0 {
            let candidateHome = homeOf(buckets[next] - 1) & mask
            // The member at `next` may fill the hole unless its home lies cyclically in (hole, next].
            let homeBetween =
                hole <= next
                ? (candidateHome > hole && candidateHome <= next) : (candidateHome > hole || candidateHome <= next)
            if !homeBetween {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = 0
    }
}
