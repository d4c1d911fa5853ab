/// Word boundaries as the benchmark harness and the session see them.
///
/// A word is a run of letters and digits (no underscore, no combining marks),
/// with single internal apostrophes or hyphens: `don't`, `well-known`, `1990s`.
/// This mirrors the harness regex `[^\W_]+(?:['’-][^\W_]+)*` on Unicode scalars.
public enum WordText {
    /// Whether a scalar is a letter or a number (Python's `[^\W_]`).
    @inlinable
    public static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 {
            let v = scalar.value
            return (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }

    /// Whether a scalar may join two word runs (`'`, `’`, `-`).
    @inlinable
    public static func isJoiner(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "'" || scalar == "\u{2019}" || scalar == "-"
    }

    /// Splits text before the cursor into the context and the word being typed.
    ///
    /// `"I don'"` gives context `"I "` and partial `"don'"`; `"Hello, "` gives an empty partial.
    public static func splitPartialWord(_ before: String) -> (context: Substring, partial: Substring) {
        let scalars = before.unicodeScalars
        var start = scalars.endIndex
        var cursor = scalars.endIndex
        // Optional trailing joiner, only if a word run precedes it.
        if cursor > scalars.startIndex {
            let last = scalars.index(before: cursor)
            if isJoiner(scalars[last]), last > scalars.startIndex,
                isWordScalar(scalars[scalars.index(before: last)])
            {
                cursor = last
            }
        }
        while true {
            var runStart = cursor
            while runStart > scalars.startIndex {
                let previous = scalars.index(before: runStart)
                guard isWordScalar(scalars[previous]) else { break }
                runStart = previous
            }
            if runStart == cursor { break }
            start = runStart
            // Continue over one joiner if another run precedes it.
            guard runStart > scalars.startIndex else { break }
            let joiner = scalars.index(before: runStart)
            guard isJoiner(scalars[joiner]), joiner > scalars.startIndex,
                isWordScalar(scalars[scalars.index(before: joiner)])
            else { break }
            cursor = joiner
        }
        if start == scalars.endIndex, cursor != scalars.endIndex {
            // Only a joiner was seen; it is not a word.
            start = scalars.endIndex
        }
        let split = start
        return (Substring(scalars[scalars.startIndex..<split]), Substring(scalars[split..<scalars.endIndex]))
    }

    /// The last of `words(in:)`, found from the end (the text before the cursor can be long).
    public static func lastWord<S: StringProtocol>(in text: S) -> S.SubSequence? {
        // Words are split at every scalar that is neither a word scalar nor a joiner, so the
        // words after such a scalar are the same in the suffix as in the whole text: split only
        // the suffix after the last separator that comes before the last word scalar.
        let scalars = text.unicodeScalars
        var index = scalars.endIndex
        var sawWordScalar = false
        while index > scalars.startIndex {
            let previous = scalars.index(before: index)
            let scalar = scalars[previous]
            if isWordScalar(scalar) {
                sawWordScalar = true
            } else if sawWordScalar, !isJoiner(scalar) {
                return words(in: text[index...]).last
            }
            index = previous
        }
        return words(in: text).last
    }

    /// The words of a text, in order, as substrings.
    public static func words<S: StringProtocol>(in text: S) -> [S.SubSequence] {
        var result: [S.SubSequence] = []
        let scalars = text.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            guard isWordScalar(scalars[index]) else {
                index = scalars.index(after: index)
                continue
            }
            let start = index
            var end = index
            while index < scalars.endIndex {
                if isWordScalar(scalars[index]) {
                    index = scalars.index(after: index)
                    end = index
                } else if isJoiner(scalars[index]) {
                    let next = scalars.index(after: index)
                    if next < scalars.endIndex, isWordScalar(scalars[next]) {
                        index = next
                    } else {
                        break
                    }
                } else {
                    break
                }
            }
            result.append(text[start..<end])
            index = end
        }
        return result
    }

    /// The dictionary key of a word: lower case, typographic apostrophe folded to `'`.
    public static func key<S: StringProtocol>(_ word: S) -> String {
        var folded = String.UnicodeScalarView()
        for scalar in word.lowercased().unicodeScalars {
            folded.append(scalar == "\u{2019}" ? "'" : scalar)
        }
        return String(folded)
    }

    /// Whether the word contains a digit (numbers are never predicted or learned).
    public static func containsDigit<S: StringProtocol>(_ word: S) -> Bool {
        word.unicodeScalars.contains { $0.properties.generalCategory == .decimalNumber }
    }

    /// Whether every letter of the word is upper case and it has at least two letters.
    public static func isAllCaps<S: StringProtocol>(_ word: S) -> Bool {
        var letters = 0
        for scalar in word.unicodeScalars where scalar.properties.isAlphabetic {
            if scalar.properties.isLowercase { return false }
            if scalar.properties.isUppercase { letters += 1 }
        }
        return letters >= 2
    }

    /// Whether no letter of the word is upper case.
    public static func isAllLowercase<S: StringProtocol>(_ word: S) -> Bool {
        !word.unicodeScalars.contains { $0.properties.isUppercase }
    }

    /// Whether the first letter is upper case.
    public static func startsUppercase<S: StringProtocol>(_ word: S) -> Bool {
        word.unicodeScalars.first?.properties.isUppercase ?? false
    }

    /// The word with its first character upper-cased (`"the"` → `"The"`).
    public static func capitalizingFirst<S: StringProtocol>(_ word: S) -> String {
        guard let first = word.first else { return "" }
        return first.uppercased() + word.dropFirst()
    }

    /// Whether a scalar ends a line (`\n`, `\r`, a vertical tab or form feed, NEL, U+2028, U+2029).
    public static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// Whether the text between two words ends a sentence: it holds `.`, `!`, `?` or a line break.
    ///
    /// A new line starts a new sentence, as Android's `TextUtils.getCapsMode` rules: a greeting
    /// line (`Hello,`), a heading or a list item does not run on into the next line's words.
    public static func endsSentence<S: StringProtocol>(_ gap: S) -> Bool {
        gap.unicodeScalars.contains { $0 == "." || $0 == "!" || $0 == "?" || isLineBreak($0) }
    }

    /// Whether the text between two words is spaces only: no mark and no line break.
    public static func isSpaceOnly<S: StringProtocol>(_ gap: S) -> Bool {
        !gap.unicodeScalars.contains { !$0.properties.isWhitespace || isLineBreak($0) }
    }

    /// Whether text before a word puts that word at a sentence start.
    ///
    /// True when the text, without trailing whitespace, quotes and brackets, is empty or
    /// ends with `.`, `!` or `?` (the harness's rule for case credit), or when a line break
    /// comes before the word with nothing but those in between (`Hello,\n\n`: the message's
    /// first sentence; the harness's texts have no line breaks inside a document).
    public static func isSentenceStart<S: StringProtocol>(_ context: S) -> Bool {
        for scalar in context.unicodeScalars.reversed() {
            if isLineBreak(scalar) { return true }
            if scalar.properties.isWhitespace { continue }
            switch scalar {
            case "\"", "'", "(", ")", "[", "]", "\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}":
                continue
            case ".", "!", "?":
                return true
            default:
                return false
            }
        }
        return true
    }
}
