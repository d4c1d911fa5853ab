/// A character n-gram model: the small, context-aware model that re-ranks candidates.
///
/// Text is lower-cased, whitespace runs become one space and digits become `0`; characters
/// outside the pack's alphabet share one symbol. N-grams up to `order` characters are stored
/// in an open-addressing hash table of 64-bit slots: a 40-bit fingerprint, the n-gram's
/// log probability given its history (12 bits, 1/128 nat) and, for the n-gram used as a
/// history, its back-off weight (12 bits). Lookups follow the ARPA back-off rule.
public struct CharacterModel: Sendable {
    /// The longest n-gram, in characters (history = order − 1).
    public let order: Int
    let alphabet: [Unicode.Scalar: UInt8]
    /// `symbol(_:)` of the ASCII characters, by value (read per letter of every candidate scored).
    let asciiSymbols: [UInt8]
    let slots: PackArray<UInt64>
    let mask: Int

    /// The most occupied slots a table may have, as a fraction (the builder fills 75 %).
    static let maximumLoadFactor = 0.9
    /// The longest run of occupied slots a table may have. A lookup stops at the first empty
    /// slot, so this bounds every lookup; the builder's tables have runs of a few dozen to a few
    /// hundred slots, while a crafted table could make each lookup walk the whole table.
    static let maximumRunLength = 2048

    /// The most slots one lookup reads: the table's longest run of occupied slots, plus the
    /// empty slot that ends it (measured at load time, at most `maximumRunLength + 1`).
    let maximumProbes: Int

    init(file: PackFile) throws(PackError) {
        let alphabetBytes = try file.bytes("CMAL")
        var alphabet: [Unicode.Scalar: UInt8] = [:]
        let text = String(decoding: alphabetBytes, as: UTF8.self)
        for (index, scalar) in text.unicodeScalars.enumerated() where index < 255 {
            alphabet[scalar] = UInt8(index + 1)
        }
        self.alphabet = alphabet
        asciiSymbols = (0..<128).map { value in alphabet[Self.normalize(Unicode.Scalar(UInt8(value)))] ?? 0 }
        slots = try file.array("CMHT", of: UInt64.self)
        guard slots.count > 0, slots.count & (slots.count - 1) == 0 else {
            throw .malformed(tag: "CMHT", reason: "table size \(slots.count) is not a power of two")
        }
        mask = slots.count - 1
        // Deferred (PackCheck): any table the full check accepts has runs of at most
        // maximumRunLength, so that bound holds without reading the table now.
        maximumProbes = file.check == .full ? try Self.checkOccupancy(slots) : Self.maximumRunLength + 1
        let orderByte = try file.bytes("CMOR")
        guard orderByte.count == 1, (2...7).contains(Int(orderByte[0])) else {
            throw .malformed(tag: "CMOR", reason: "bad order")
        }
        order = Int(orderByte[0])
    }

    /// Refuses a table too full for open addressing to stay fast (load factor above
    /// `maximumLoadFactor`, or a run of occupied slots longer than `maximumRunLength`) and
    /// returns the probe bound of a lookup.
    static func checkOccupancy(_ slots: PackArray<UInt64>) throws(PackError) -> Int {
        var occupied = 0
        for slot in slots where slot != 0 { occupied += 1 }
        guard Double(occupied) <= Double(slots.count) * maximumLoadFactor else {
            throw .malformed(
                tag: "CMHT",
                reason:
                    "table is \(occupied * 100 / slots.count) % full (at most \(Int(maximumLoadFactor * 100)) % allowed)"
            )
        }
        // Runs wrap around the end of the table; start counting just after an empty slot.
        guard let firstEmpty = slots.firstIndex(of: 0) else {
            throw .malformed(tag: "CMHT", reason: "table has no empty slot")
        }
        var longest = 0
        var run = 0
        for step in 1...slots.count {
            if slots[(firstEmpty + step) & (slots.count - 1)] != 0 {
                run += 1
                longest = max(longest, run)
            } else {
                run = 0
            }
        }
        guard longest <= maximumRunLength else {
            throw .malformed(
                tag: "CMHT", reason: "a run of \(longest) occupied slots (at most \(maximumRunLength) allowed)")
        }
        return longest + 1
    }

    /// The symbol of a character (0 for characters outside the alphabet).
    @inline(__always)
    func symbol(_ scalar: Unicode.Scalar) -> UInt8 {
        if scalar.value < 0x80 { return asciiSymbols[Int(scalar.value)] }
        return alphabet[Self.normalize(scalar)] ?? 0
    }

    /// Lower-cases a character and folds whitespace and digits, as the builder did.
    public static func normalize(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if scalar.value < 0x80 {
            let v = scalar.value
            if v >= 0x41 && v <= 0x5A { return Unicode.Scalar(UInt8(truncatingIfNeeded: v + 32)) }
            if v >= 0x30 && v <= 0x39 { return "0" }
            if v == 0x09 || v == 0x0A || v == 0x0D { return " " }
            return scalar
        }
        if scalar.properties.isWhitespace { return " " }
        if scalar == "\u{2019}" { return "'" }
        if scalar.properties.generalCategory == .decimalNumber { return "0" }
        if scalar.properties.isUppercase, let lower = scalar.properties.lowercaseMapping.unicodeScalars.first {
            return lower
        }
        return scalar
    }

    /// Symbols of a text, normalised (consecutive spaces collapsed).
    public func symbols<S: Sequence<Unicode.Scalar>>(_ text: S) -> [UInt8] {
        var out: [UInt8] = []
        let space = alphabet[" "] ?? 0
        for scalar in text {
            let s = symbol(scalar)
            if s == space, out.last == space { continue }
            out.append(s)
        }
        return out
    }

    /// The packed key of the n-gram `history[start...] + next` (shared with the builder).
    @inline(__always)
    static func packedKey(_ symbols: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> UInt64 {
        var key = UInt64(end - start)
        for index in start..<end { key = key << 8 | UInt64(symbols[index]) }
        return key
    }

    @inline(__always)
    static func mix(_ key: UInt64) -> UInt64 {
        var x = key &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }

    /// The slot payload of a packed key (logProb bits, backoff bits), if stored.
    @inline(__always)
    func lookup(_ key: UInt64) -> (UInt32, UInt32)? {
        probe(key).payload
    }

    /// A lookup and the number of slots it read (never more than `maximumProbes`).
    @inline(__always)
    func probe(_ key: UInt64) -> (payload: (UInt32, UInt32)?, probes: Int) {
        let hash = Self.mix(key)
        let fingerprint = Self.fingerprint(hash)
        var index = Int(truncatingIfNeeded: hash) & mask
        for probes in 1...maximumProbes {
            let slot = slots[index]
            if slot == 0 { return (nil, probes) }
            if slot >> 24 == fingerprint {
                return ((UInt32((slot >> 12) & 0xFFF), UInt32(slot & 0xFFF)), probes)
            }
            index = (index + 1) & mask
        }
        return (nil, maximumProbes)
    }

    @inline(__always)
    static func fingerprint(_ hash: UInt64) -> UInt64 {
        let value = hash >> 24
        return value == 0 ? 1 : value
    }

    /// Builds a slot from a fingerprint source hash and quantised values (builder side).
    static func slot(hash: UInt64, logProbBits: UInt32, backoffBits: UInt32) -> UInt64 {
        fingerprint(hash) << 24 | UInt64(logProbBits & 0xFFF) << 12 | UInt64(backoffBits & 0xFFF)
    }

    /// The log probability of `symbols[position]` given the symbols before it.
    @inline(__always)
    func logProb(_ symbols: UnsafeBufferPointer<UInt8>, at position: Int) -> Float {
        // Longest history first; accumulate back-off weights of stored histories that lack the n-gram.
        let longest = min(order - 1, position)
        var backoff: Float = 0
        var historyLength = longest
        while historyLength >= 0 {
            let start = position - historyLength
            if let (logProbBits, _) = lookup(Self.packedKey(symbols, from: start, to: position + 1)) {
                return backoff - Float(logProbBits) / 128
            }
            if historyLength > 0, let (_, backoffBits) = lookup(Self.packedKey(symbols, from: start, to: position)) {
                backoff -= Float(backoffBits) / 128
            }
            historyLength -= 1
        }
        return backoff - 12  // Unseen character.
    }

    /// What `logProb(_:at:)` gave for n-grams (by `packedKey`: the symbol and the history the
    /// model reads before it, which is all the score depends on), so candidates that share a
    /// beginning after the same history, and later histories that end alike, read the table once.
    public struct PositionScores: Sendable {
        /// Direct-mapped by the key's hash (a newer key takes the slot): 12 bytes a slot, 192 kB.
        /// A key is never 0 (it holds its length), so 0 marks an empty slot.
        var keys = [UInt64](repeating: 0, count: slotCount)
        var scores = [Float](repeating: 0, count: slotCount)
        static let slotCount = 16384
        public init() {}
    }

    /// `logProb(of:after:)`, each position's score remembered in `memo`.
    public func logProb(of continuation: [UInt8], after history: [UInt8], memo: inout PositionScores) -> Float {
        withSymbols(continuation, after: history) { buffer, scored in
            var total: Float = 0
            for position in scored {
                let key = Self.packedKey(buffer, from: position - min(order - 1, position), to: position + 1)
                let slot = Int(truncatingIfNeeded: Self.mix(key)) & (PositionScores.slotCount - 1)
                if memo.keys[slot] == key {
                    total += memo.scores[slot]
                } else {
                    let score = logProb(buffer, at: position)
                    memo.keys[slot] = key
                    memo.scores[slot] = score
                    total += score
                }
            }
            return total
        }
    }

    /// The log probability of `continuation` following `history` (both already symbols).
    public func logProb(of continuation: [UInt8], after history: [UInt8]) -> Float {
        withSymbols(continuation, after: history) { buffer, scored in
            var total: Float = 0
            for position in scored { total += logProb(buffer, at: position) }
            return total
        }
    }

    /// Calls `body` with the history's last `order - 1` symbols and the continuation in one
    /// buffer, and the positions of the continuation in it. On the stack: this runs for every
    /// candidate of every new context.
    private func withSymbols(
        _ continuation: [UInt8], after history: [UInt8],
        _ body: (UnsafeBufferPointer<UInt8>, Range<Int>) -> Float
    ) -> Float {
        let historyCount = min(history.count, order - 1)
        let count = historyCount + continuation.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { storage in
            var index = 0
            for symbol in history.suffix(historyCount) {
                storage[index] = symbol
                index += 1
            }
            for symbol in continuation {
                storage[index] = symbol
                index += 1
            }
            return body(UnsafeBufferPointer(storage), historyCount..<count)
        }
    }
}
