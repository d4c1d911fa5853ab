/// Limits every learned entry obeys, wherever it comes from (the engine, an import, a store
/// written by an older or hostile program): the store and `learned list` must be total against
/// any value found on disk.
extension LearnedEntry {
    /// The largest count kept; larger counts are clamped on read and refused on import. Decayed
    /// counts of a real user stay far below it.
    public static let maximumCount = 1_000_000.0
    /// The latest `lastUsed` kept (the end of year 9999 in seconds since the epoch).
    public static let maximumLastUsed: Int64 = 253_402_300_799

    /// The entry with its numbers brought into range, or nil when it cannot be used at all: a
    /// count that is not a positive number, or text no word can have (too long, control, format,
    /// line-separator, private-use or unassigned characters). Cheap: run on every entry read.
    public func sanitized() -> LearnedEntry? {
        guard count.isFinite, count > 0, Self.isPlausible(key, maximumScalars: 40),
            Self.isPlausible(display, maximumScalars: 40),
            context.isEmpty || (Self.isPlausible(context, maximumScalars: 81, allowingSpaces: true))
        else { return nil }
        var copy = self
        copy.count = min(count, Self.maximumCount)
        copy.lastUsed = min(max(lastUsed, 0), Self.maximumLastUsed)
        return copy
    }

    private static func isPlausible(_ text: String, maximumScalars: Int, allowingSpaces: Bool = false) -> Bool {
        var scalars = 0
        for scalar in text.unicodeScalars {
            scalars += 1
            if scalars > maximumScalars { return false }
            if scalar == " " {
                if allowingSpaces { continue }
                return false
            }
            if !LearningPolicy.isPrintableInWord(scalar) { return false }
        }
        return scalars > 0
    }
}

extension LearningPolicy {
    /// Whether a scalar can appear in a stored word: not a control (Cc), format (Cf: bidi
    /// controls, zero-width characters), separator (Z*), surrogate, private-use or unassigned one.
    public static func isPrintableInWord(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 { return scalar.value > 0x20 && scalar.value != 0x7F }
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator,
            .spaceSeparator:
            return false
        default: return true
        }
    }

    /// Whether `text` is exactly one learnable word (nothing before or after it) that
    /// `mayRecord` allows: what the store accepts as a word or a context word.
    public static func isStorableWord(_ text: String) -> Bool {
        let words = WordText.words(in: text)
        return words.count == 1 && words[0].startIndex == text.startIndex && words[0].endIndex == text.endIndex
            && mayRecord(text)
    }
}
