/// Committed words on their way to the user model.
///
/// Learning waits for the end of the whitespace-delimited chunk a word is in, so that
/// `john@example.com` or a pasted token is recognised as a whole and never learned; the words of
/// a finished chunk are recorded once the key has been answered (off the key path).
public struct LearningQueue: Sendable {
    /// A word and the text before it.
    public typealias Entry = (word: String, before: String)

    /// Committed words whose chunk has not ended yet.
    public private(set) var unfinished: [Entry] = []
    /// Words of finished chunks, to be recorded.
    public private(set) var ready: [Entry] = []

    /// An empty queue.
    public init() {}

    /// `text` reached the application after `before`: its words wait for their chunk to end.
    public mutating func reached(_ text: String, after before: String) {
        // A word begun in `before` (letters passed on, a completion of a word already in the
        // text) is learned whole, not from the letters this text adds.
        let startsWord = text.unicodeScalars.first.map(WordText.isWordScalar) ?? false
        let fragment = startsWord ? WordText.splitPartialWord(before).partial : before[before.endIndex...]
        let head = String(before[..<fragment.startIndex])
        let joined = String(fragment) + text
        for word in WordText.words(in: joined) {
            unfinished.append((String(word), head + joined[..<word.startIndex]))
        }
    }

    /// `text` is inserted after `before`: whitespace in it ends the chunk the unfinished words are in.
    public mutating func inserting(_ text: String, after before: String, learningAllowed: Bool) {
        guard !unfinished.isEmpty, let space = text.unicodeScalars.firstIndex(where: { $0.properties.isWhitespace })
        else { return }
        let head = before + String(text.unicodeScalars[..<space])
        let scalars = head.unicodeScalars
        let start =
            scalars.lastIndex(where: { $0.properties.isWhitespace }).map { scalars.index(after: $0) }
            ?? scalars.startIndex
        finishChunk(Substring(scalars[start...]), learningAllowed: learningAllowed)
    }

    /// The words of a finished chunk become ready, unless the chunk is an address or looks like a
    /// secret (then none of them is learned).
    mutating func finishChunk(_ chunk: Substring, learningAllowed: Bool) {
        defer { unfinished.removeAll() }
        guard !unfinished.isEmpty, learningAllowed else { return }
        guard LearningPolicy.mayLearnChunk(chunk) else { return }
        ready += unfinished.filter { LearningPolicy.mayRecord($0.word) }
    }

    /// Drops the words whose chunk has not ended (focus moved, the context was reset).
    public mutating func dropUnfinished() { unfinished.removeAll() }

    /// Drops everything not recorded yet (a language switch).
    public mutating func dropAll() {
        unfinished.removeAll()
        ready.removeAll()
    }

    /// The words ready to record, once.
    public mutating func takeReady() -> [Entry] {
        defer { ready.removeAll() }
        return ready
    }
}
