/// A plain-text form of learned entries: one `context<TAB>key<TAB>display<TAB>count<TAB>lastUsed`
/// line each, for export, import and benchmarks.
public enum UserModelFile {
    /// Serialises entries, sorted so that the same model gives the same text.
    public static func write(_ entries: [LearnedEntry]) -> String {
        entries.sorted { ($0.context, $0.key) < ($1.context, $1.key) }.map { entry in
            "\(entry.context)\t\(entry.key)\t\(entry.display)\t\(entry.count)\t\(entry.lastUsed)"
        }.joined(separator: "\n") + "\n"
    }

    /// Parses entries; malformed lines and unsafe words are skipped.
    public static func read(_ text: String) -> [LearnedEntry] {
        var entries: [LearnedEntry] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 5, let count = Double(fields[3]), count > 0, count.isFinite, let lastUsed = Int64(fields[4]),
                LearningPolicy.mayRecord(String(fields[2])), WordText.key(fields[2]) == String(fields[1])
            else { continue }
            entries.append(LearnedEntry(context: String(fields[0]), key: String(fields[1]), display: String(fields[2]), count: count, lastUsed: lastUsed))
        }
        return entries
    }
}
