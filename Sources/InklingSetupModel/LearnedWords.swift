import InklingCore

/// The Learned words page's model: the rows shown for a search, and their text.
public struct LearnedWordRow: Equatable, Sendable {
    public var word: String
    public var count: Double
    public var lastUsed: Int64

    public init(word: String, count: Double, lastUsed: Int64) {
        self.word = word
        self.count = count
        self.lastUsed = lastUsed
    }

    /// The rows for a search: words containing `query` (ignoring case), most used first,
    /// at most `limit` (a list of thousands of rows helps nobody).
    public static func filter(_ rows: [LearnedWordRow], query: String, limit: Int = 200) -> [LearnedWordRow] {
        let needle = query.trimmed().lowercased()
        let matching = needle.isEmpty ? rows : rows.filter { $0.word.lowercased().contains(needle) }
        return Array(
            matching.sorted { ($0.count, $0.lastUsed, $1.word) > ($1.count, $1.lastUsed, $0.word) }.prefix(
                max(0, limit)))
    }

    /// "used 12 times · last 2026-12-01" (the date given already formatted by the glue).
    public func subtitle(lastUsedText: String) -> String {
        let times = count.isFinite ? Int(count.rounded()) : 0
        let used = trn("used once", "used {count} times", count: times, ["count": String(times)])
        return lastUsed > 0 ? tr("{used} · last {date}", ["used": used, "date": lastUsedText]) : used
    }

    /// The sentence the page shows above the list.
    public static func summary(total: Int, shown: Int, query: String) -> String {
        if total == 0 { return tr("Inkling has not learned any words yet.") }
        if query.trimmed().isEmpty {
            return shown < total
                ? tr(
                    "{total} learned words; the {shown} most used are shown. Search to find others.",
                    ["total": String(total), "shown": String(shown)])
                : trn("{count} learned word.", "{count} learned words.", count: total, ["count": String(total)])
        }
        return shown == 0
            ? tr("No learned word contains “{query}”.", ["query": query])
            : trn(
                "{shown} of {total} learned words matches.", "{shown} of {total} learned words match.", count: shown,
                ["shown": String(shown), "total": String(total)])
    }

    /// The wipe confirmation's body.
    public static func wipeConfirmation(total: Int) -> String {
        trn(
            "Forget the one learned word? Suggestions return to the language pack alone. This cannot be undone.",
            "Forget all {count} learned words? Suggestions return to the language pack alone. This cannot be undone.",
            count: total, ["count": String(total)])
    }
}
