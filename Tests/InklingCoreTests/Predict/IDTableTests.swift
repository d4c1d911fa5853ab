import Testing

@testable import InklingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The predictor's id → number table against a Swift dictionary: the same random sets, lookups
/// and emptyings on both, every answer compared.
@Suite("IDTable")
struct IDTableTests {
    /// Fixed seeds, and one more each run (printed; `INKLING_TEST_SEED=N` repeats it).
    static var seeds: [UInt64] {
        var fresh = UInt64.random(in: 1...UInt64(UInt32.max))
        if let value = getenv("INKLING_TEST_SEED"), let seed = UInt64(String(cString: value)) { fresh = seed }
        return [1, 2, fresh]
    }

    @Test(arguments: seeds)
    func answersLikeADictionary(seed: UInt64) {
        print("IDTableTests seed \(seed) (INKLING_TEST_SEED=\(seed) repeats it)")
        var random = SplitMix64(seed: seed)
        var table = IDTable<Float>(capacity: Int.random(in: 0...40, using: &random))
        var reference: [Int: Float] = [:]
        // Ids from a small range collide and chain; a few large ones test the hash's spread.
        func id() -> Int {
            Bool.random(using: &random)
                ? Int.random(in: 0..<300, using: &random) : Int.random(in: 0..<Int(Int32.max), using: &random)
        }
        for step in 0..<20_000 {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<55:
                let (key, value) = (id(), Float(step))
                table.set(key, value)
                reference[key] = value
            case 55..<98:
                let key = id()
                #expect(table[key] == reference[key], "step \(step), id \(key)")
            default:
                table.removeAll()
                reference.removeAll()
            }
            if step % 997 == 0 {
                #expect(table.count == reference.count)
                var seen: [Int] = []
                table.forEachID { seen.append($0) }
                #expect(seen.sorted() == reference.keys.sorted())
            }
        }
    }

    @Test func anEmptiedTableForgetsEveryEntryButKeepsWorking() {
        var table = IDTable<Int32>()
        #expect(table[7] == nil)
        for key in 0..<100 { table.set(key * 31, Int32(key)) }
        #expect(table.count == 100)
        #expect(table[31 * 99] == 99)
        table.removeAll()
        #expect(table.count == 0)
        #expect(table[31 * 99] == nil)
        table.set(5, 1)
        table.set(5, 2)
        #expect(table[5] == 2)
        #expect(table.count == 1)
    }
}
