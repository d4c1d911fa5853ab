/// A plain-text form of learned entries: one `context<TAB>key<TAB>display<TAB>count<TAB>lastUsed`
/// line each, for export, import and benchmarks.
public enum UserModelFile {
    /// Serialises entries, sorted so that the same model gives the same text.
    public static func write(_ entries: [LearnedEntry]) -> String {
        entries.sorted { ($0.context, $0.key) < ($1.context, $1.key) }.map { entry in
            "\(entry.context)\t\(entry.key)\t\(entry.display)\t\(entry.count)\t\(entry.lastUsed)"
        }.joined(separator: "\n") + "\n"
    }

    /// A line that was not imported, and why (the reason never quotes the line's words).
    public struct Problem: Equatable, Sendable {
        /// 1-based line number.
        public var line: Int
        public var reason: String
    }

    /// Parses entries; malformed lines and unsafe words are skipped.
    public static func read(_ text: String) -> [LearnedEntry] { parse(text).entries }

    /// Parses entries and says why each refused line was refused. Counts must be positive
    /// numbers up to `LearnedEntry.maximumCount`, last-used times whole seconds from 0 to
    /// `LearnedEntry.maximumLastUsed`; the display must be one word `LearningPolicy` allows (no
    /// control or invisible characters), the key its lower-case form, the context one or two
    /// such keys. Text decoded from invalid UTF-8 (U+FFFD) is refused.
    public static func parse(_ text: String) -> (entries: [LearnedEntry], problems: [Problem]) {
        var entries: [LearnedEntry] = []
        var problems: [Problem] = []
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            var line = line
            if line.hasSuffix("\r") { line = line.dropLast() }
            if line.isEmpty { continue }
            if let reason = refusal(line) {
                problems.append(Problem(line: number, reason: reason))
                continue
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            // refusal(_:) has checked both numbers.
            guard let count = Double(fields[3]), let lastUsed = Int64(fields[4]) else { continue }
            entries.append(
                LearnedEntry(context: fields[0], key: fields[1], display: fields[2], count: count, lastUsed: lastUsed))
        }
        return (entries, problems)
    }

    /// Why a line cannot be imported (nil: it can).
    static func refusal(_ line: Substring) -> String? {
        if line.unicodeScalars.count > 400 { return "too long for an entry" }
        if line.unicodeScalars.contains("\u{FFFD}") { return "not valid UTF-8" }
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 5 else {
            return "has \(fields.count) tab-separated fields, not 5 (context, key, display, count, last used)"
        }
        guard let count = Double(fields[3]), count.isFinite, count > 0, count <= LearnedEntry.maximumCount else {
            return "the count is not a number greater than 0 and at most \(Int(LearnedEntry.maximumCount))"
        }
        guard let lastUsed = Int64(fields[4]), lastUsed >= 0, lastUsed <= LearnedEntry.maximumLastUsed else {
            return "the last-used time is not a whole number of seconds from 0 to \(LearnedEntry.maximumLastUsed)"
        }
        let display = String(fields[2])
        guard LearningPolicy.isStorableWord(display) else {
            return
                "the word is not a single word Inkling may learn (numbers, addresses, secrets, control or invisible characters are refused)"
        }
        guard WordText.key(display) == String(fields[1]) else {
            return "the key is not the lower-case form of the word"
        }
        let context = fields[0].split(separator: " ", omittingEmptySubsequences: false)
        if !fields[0].isEmpty {
            guard context.count <= 2,
                context.allSatisfy({ LearningPolicy.isStorableWord(String($0)) && WordText.key($0) == String($0) })
            else {
                return "the context is not one or two lower-case words Inkling may learn"
            }
        }
        guard
            LearnedEntry(
                context: String(fields[0]), key: String(fields[1]), display: display, count: count, lastUsed: lastUsed
            ).sanitized() != nil
        else {
            return "the entry holds characters no word can have"
        }
        return nil
    }
}
