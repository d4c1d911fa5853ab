/// Trains the character model from running text and writes it into a pack.
///
/// Counts every n-gram up to `order`, keeps the most frequent ones that fit the table
/// (count pruning keeps the set closed under prefixes and suffixes), and stores interpolated
/// absolute-discounting estimates with approximate back-off weights.
struct CharacterModelBuilder {
    var order: Int
    var tableBytes: Int
    var log: (String) -> Void

    func build(documents: [Substring], into writer: inout PackWriter) {
        // Alphabet: the most frequent normalised characters.
        var frequency: [Unicode.Scalar: Int] = [" ": Int.max / 2]
        for document in documents {
            for scalar in document.unicodeScalars { frequency[CharacterModel.normalize(scalar), default: 0] += 1 }
        }
        let alphabet = frequency.sorted { ($0.value, $1.key.value) > ($1.value, $0.key.value) }.prefix(254).map(\.key)
        var symbolOf: [Unicode.Scalar: UInt8] = [:]
        for (index, scalar) in alphabet.enumerated() { symbolOf[scalar] = UInt8(index + 1) }
        var alphabetText = String.UnicodeScalarView()
        alphabetText.append(contentsOf: alphabet)
        writer.add("CMAL", bytes: Array(String(alphabetText).utf8))
        writer.add("CMOR", bytes: [UInt8(order)])

        // Counts per order; key = symbols packed 8 bits each, oldest first.
        var counts = [[UInt64: UInt32]](repeating: [:], count: order + 1)
        var stream: [UInt8] = []
        guard let space = symbolOf[" "] else { preconditionFailure("the alphabet always holds the space") }
        for document in documents {
            stream.removeAll(keepingCapacity: true)
            stream.append(space)
            for scalar in document.unicodeScalars {
                let symbol = symbolOf[CharacterModel.normalize(scalar)] ?? 0
                if symbol == space, stream.last == space { continue }
                stream.append(symbol)
            }
            if stream.last != space { stream.append(space) }
            for end in 0..<stream.count {
                var key: UInt64 = 0
                for length in 1...order {
                    let start = end - length + 1
                    guard start >= 0 else { break }
                    key |= UInt64(stream[start]) << (8 * UInt64(length - 1))
                    counts[length][key, default: 0] &+= 1
                }
            }
        }
        // The key above is built newest-first; see `pack(_:length:)` for the stored order.
        log("character n-grams: " + (1...order).map { "\($0):\(counts[$0].count)" }.joined(separator: " "))

        // Pruning threshold for orders ≥ 2 so that everything fits at 75 % load.
        let slotCount = max(1024, tableBytes / 8)
        let capacity = slotCount * 3 / 4 - counts[1].count
        var histogram: [Int: Int] = [:]
        for length in 2...order { for (_, count) in counts[length] { histogram[Int(count), default: 0] += 1 } }
        var threshold = 1
        var kept = histogram.values.reduce(0, +)
        for (count, types) in histogram.sorted(by: { $0.key < $1.key }) where kept > capacity {
            kept -= types
            threshold = count + 1
        }
        log("character model: keeping n-grams seen \(threshold)+ times (\(kept) + \(counts[1].count) unigrams)")

        // History statistics over the full counts: mass and distinct continuations.
        var historyMass = [[UInt64: Double]](repeating: [:], count: order)
        var historyTypes = [[UInt64: Double]](repeating: [:], count: order)
        for length in 2...order {
            for (key, count) in counts[length] {
                let history = key >> 8  // drop the newest symbol
                historyMass[length - 1][history, default: 0] += Double(count)
                historyTypes[length - 1][history, default: 0] += 1
            }
        }
        var discount = [Double](repeating: 0.75, count: order + 1)
        for length in 2...order {
            var n1 = 0.0
            var n2 = 0.0
            for (_, count) in counts[length] {
                if count == 1 { n1 += 1 } else if count == 2 { n2 += 1 }
            }
            if n1 + 2 * n2 > 0 { discount[length] = max(0.1, min(0.95, n1 / (n1 + 2 * n2))) }
        }
        let total = Double(counts[1].values.reduce(0) { $0 + Int($1) })

        var slots = [UInt64](repeating: 0, count: slotCount)
        let mask = slotCount - 1
        func insert(_ packedKey: UInt64, logProb: Double, backoff: Double) {
            let hash = CharacterModel.mix(packedKey)
            var index = Int(truncatingIfNeeded: hash) & mask
            while slots[index] != 0 { index = (index + 1) & mask }
            let logProbBits = UInt32(max(0, min(4095, Int((-logProb * 128).rounded()))))
            let backoffBits = UInt32(max(0, min(4095, Int((-backoff * 128).rounded()))))
            slots[index] = CharacterModel.slot(hash: hash, logProbBits: logProbBits, backoffBits: backoffBits)
        }
        func backoffLog(_ key: UInt64, length: Int) -> Double {
            guard length < order, let mass = historyMass[length][key], mass > 0, let types = historyTypes[length][key]
            else {
                return 0
            }
            let weight = discount[length + 1] * types / mass
            return Math.log(max(1e-9, min(1, weight)))
        }
        var probability = [[UInt64: Double]](repeating: [:], count: order + 1)
        for (key, count) in counts[1].sorted(by: { $0.key < $1.key }) {
            let p = Double(count) / total
            probability[1][key] = p
            insert(Self.pack(key, length: 1), logProb: Math.log(p), backoff: backoffLog(key, length: 1))
        }
        for length in 2...order {
            let d = discount[length]
            let suffixMask: UInt64 = (1 << (8 * UInt64(length - 1))) - 1
            for (key, count) in counts[length].sorted(by: { $0.key < $1.key }) where Int(count) >= threshold {
                let history = key >> 8
                // Every counted n-gram's history was counted with it.
                guard let mass = historyMass[length - 1][history], let types = historyTypes[length - 1][history] else {
                    preconditionFailure("an n-gram without its history")
                }
                let lower = probability[length - 1][key & suffixMask] ?? 1e-6
                let p = max(Double(count) - d, 0) / mass + d * types / mass * lower
                probability[length][key] = p
                insert(Self.pack(key, length: length), logProb: Math.log(p), backoff: backoffLog(key, length: length))
            }
        }
        writer.add("CMHT", integers: slots)
    }

    /// Converts a builder key (newest symbol in the low byte) to the reader's packed key.
    static func pack(_ key: UInt64, length: Int) -> UInt64 {
        var packed = UInt64(length)
        for position in stride(from: length - 1, through: 0, by: -1) {
            packed = packed << 8 | (key >> (8 * UInt64(position)) & 0xFF)
        }
        return packed
    }
}
