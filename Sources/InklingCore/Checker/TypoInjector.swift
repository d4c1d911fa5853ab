/// A seeded generator of realistic typos, for measuring the checker.
///
/// Each typo is one of: a neighbouring-key substitution, a transposition of two adjacent
/// letters, an omitted letter, or a doubled letter (equally likely). The same seed always
/// gives the same typos.
public struct TypoInjector {
    /// The kinds of typo the injector makes.
    public enum Kind: String, CaseIterable, Sendable {
        case neighbouringKey, transposition, omission, doubling
    }

    private var random: SplitMix64
    public let layout: KeyboardLayout

    public init(seed: UInt64, layout: KeyboardLayout = .qwerty) {
        random = SplitMix64(seed: seed)
        self.layout = layout
    }

    /// The next raw random number.
    public mutating func next() -> UInt64 { random.next() }

    /// A uniform number in `0..<bound`.
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    /// A typo of `word` (lower-case letters only are changed), or nil if none applies.
    public mutating func corrupt(_ word: String) -> (typo: String, kind: Kind)? {
        var scalars = Array(word.unicodeScalars)
        guard scalars.count >= 3 else { return nil }
        let kind = Kind.allCases[below(Kind.allCases.count)]
        // Positions after the first letter (first-letter typos are rare and hard to catch).
        let position = 1 + below(scalars.count - 1)
        switch kind {
        case .neighbouringKey:
            let lower = Unicode.Scalar(String(scalars[position]).lowercased()) ?? scalars[position]
            let options = layout.neighbours(of: lower).filter { $0.properties.isAlphabetic }
            guard !options.isEmpty else { return nil }
            scalars[position] = options[below(options.count)]
        case .transposition:
            guard position + 1 < scalars.count, scalars[position] != scalars[position + 1] else { return nil }
            scalars.swapAt(position, position + 1)
        case .omission:
            scalars.remove(at: position)
        case .doubling:
            scalars.insert(scalars[position], at: position)
        }
        let typo = String(String.UnicodeScalarView(scalars))
        return typo == word ? nil : (typo, kind)
    }
}

/// A small, seeded random number generator (SplitMix64): the same seed gives the same sequence
/// on every platform and run, for reproducible typo injection and property tests.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
