/// The session's side of the cloud check: the scheduler, recent answers, cancellations still to
/// send, and the pure parts — which sentence to ask about and how an answer lands on the flags.
public struct CloudCheck: Sendable {
    /// When to ask and which answer is still wanted.
    public var scheduler = CloudScheduler()
    /// Recent answers by sentence and flags, so an unchanged sentence is not sent twice.
    private var cache: [String: CloudReply] = [:]
    /// Cancellations for requests dropped outside a timer (focus moved, field became private).
    private var pendingMessages: [CloudRequestMessage] = []

    /// A scheduler with nothing asked yet.
    public init() {}

    /// Whether a request waits for its answer.
    public var isWaiting: Bool { scheduler.inFlight != nil }

    /// Forgets the request in flight and queues its cancellation for the helper.
    public mutating func cancel() {
        if let id = scheduler.cancelAll() { pendingMessages.append(.cancel(id: id)) }
    }

    /// The queued cancellations, once.
    public mutating func takePendingMessages() -> [CloudRequestMessage] {
        defer { pendingMessages.removeAll() }
        return pendingMessages
    }

    /// The answer given before to the same sentence with the same flags, if any.
    public func cachedReply(for request: CloudCheckRequest) -> CloudReply? { cache[Self.cacheKey(request)] }

    /// Remembers a (validated) answer to `request`.
    public mutating func remember(_ reply: CloudReply, for request: CloudCheckRequest) {
        if cache.count > 64 { cache.removeAll() }
        cache[Self.cacheKey(request)] = reply
    }

    private static func cacheKey(_ request: CloudCheckRequest) -> String {
        request.language + "\u{0}" + request.sentence + "\u{0}"
            + request.flags.map { "\($0.start)-\($0.end)" }.joined(separator: ",")
    }

    /// The sentence before the cursor (without trailing whitespace) and where it starts, in code
    /// points; nil when there is none worth asking about (no letters, or too long).
    public static func sentence(endingAt before: String) -> (text: String, start: Int)? {
        let scalars = Array(before.unicodeScalars)
        var end = scalars.count
        while end > 0 && scalars[end - 1].properties.isWhitespace { end -= 1 }
        // Sentence-final punctuation at the end belongs to this sentence.
        var index = end
        while index > 0 && ".!?".unicodeScalars.contains(scalars[index - 1]) { index -= 1 }
        var start = 0
        while index > 0 {
            let scalar = scalars[index - 1]
            if scalar == "\n"
                || (".!?".unicodeScalars.contains(scalar) && index < scalars.count
                    && scalars[index].properties.isWhitespace)
            {
                start = index
                break
            }
            index -= 1
        }
        while start < end && scalars[start].properties.isWhitespace { start += 1 }
        guard end > start, end - start <= CloudProtocol.maximumSentenceScalars,
            scalars[start..<end].contains(where: { $0.properties.isAlphabetic })
        else { return nil }
        return (String(String.UnicodeScalarView(scalars[start..<end])), start)
    }

    /// Whether the text ends a sentence (`.`, `!` or `?`, then only whitespace), or a line:
    /// after Return the line's sentence is as finished as after a full stop (a chat sends it).
    public static func endsSentence(_ text: String) -> Bool {
        for scalar in text.unicodeScalars.reversed() {
            if WordText.isLineBreak(scalar) { return true }
            if scalar.properties.isWhitespace { continue }
            return ".!?".unicodeScalars.contains(scalar)
        }
        return false
    }

    /// The tracked flags that lie inside the sentence at `start` of `length` scalars, with
    /// offsets relative to it, in order.
    public static func flags(_ tracked: [TrackedFlag], before: String, sentenceStart start: Int, length: Int)
        -> [CloudFlag]
    {
        let count = before.unicodeScalars.count
        let sentenceEnd = start + length
        var flags: [CloudFlag] = []
        for tracked in tracked {
            let end = count - tracked.tail.unicodeScalars.count
            let begin = end - tracked.flag.word.unicodeScalars.count
            if begin >= start && end <= sentenceEnd {
                flags.append(
                    CloudFlag(
                        start: begin - start, end: end - start, word: tracked.flag.word,
                        replacements: tracked.flag.replacements))
            }
        }
        flags.sort { $0.start < $1.start }
        return flags
    }

    /// Lands a validated answer on the flags of `before` (the text before the cursor, which
    /// starts with the text the request was made on): a disagreeing verdict drops a flag, an
    /// agreeing one explains it, a fix updates the flag at its place or adds a cloud flag.
    public static func merge(
        _ reply: CloudReply, sentenceStart start: Int, before: String, into corrections: inout CorrectionTracker
    ) {
        let scalars = Array(before.unicodeScalars)
        func trackedFlag(at begin: Int, _ end: Int) -> TrackedFlag? {
            corrections.flags.first { tracked in
                let flagEnd = scalars.count - tracked.tail.unicodeScalars.count
                return flagEnd == end && flagEnd - tracked.flag.word.unicodeScalars.count == begin
            }
        }
        for verdict in reply.verdicts ?? [] {
            guard let tracked = trackedFlag(at: start + verdict.start, start + verdict.end) else { continue }
            if verdict.verdict == "disagree" {
                corrections.remove(id: tracked.id)
            } else {
                corrections.update(id: tracked.id, replacements: nil, explanation: verdict.explanation)
            }
        }
        for fix in reply.fixes ?? [] {
            let begin = start + fix.start
            let end = start + fix.end
            guard end <= scalars.count else { continue }
            if let tracked = trackedFlag(at: begin, end) {
                corrections.update(id: tracked.id, replacements: [fix.replacement], explanation: fix.explanation)
                continue
            }
            let flag = TypoFlag(
                word: fix.original, replacements: [fix.replacement],
                explanation: fix.explanation ?? tr("suggested by the cloud check"), margin: 0)
            corrections.add(
                flag, before: Substring(String(String.UnicodeScalarView(scalars[..<begin]))),
                tail: String(String.UnicodeScalarView(scalars[end...])), origin: .cloud)
        }
    }
}
