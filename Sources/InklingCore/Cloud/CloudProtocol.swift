import FoundationEssentials

/// The pipe protocol between the engine and the `inkling-cloud` helper: JSON, one object per line.
///
/// Version 1. Every message has `"v": 1` and a `"type"`.
///
/// Engine → helper:
/// - `check`: `{"v":1,"type":"check","id":7,"sentence":"I saw teh cat.","language":"en",
///   "flags":[{"start":6,"end":9,"word":"teh","replacements":["the"]}]}` — offsets are code
///   points into `sentence`, `end` exclusive.
/// - `cancel`: `{"v":1,"type":"cancel","id":7}` — the engine no longer wants that answer.
/// - `shutdown`: `{"v":1,"type":"shutdown"}`.
///
/// Helper → engine:
/// - `hello`: `{"v":1,"type":"hello"}` once at start.
/// - `result`: `{"v":1,"type":"result","id":7,"verdicts":[{"start":6,"end":9,"verdict":"agree",
///   "explanation":"…"}],"fixes":[{"start":14,"end":17,"original":"adn","replacement":"and",
///   "explanation":"…"}]}` — `verdict` is `agree` or `disagree`.
/// - `error`: `{"v":1,"type":"error","id":7,"message":"timeout"}` (`id` may be absent).
public enum CloudProtocol {
    /// The protocol version both sides speak.
    public static let version = 1
    /// Longest line either side accepts; longer lines are discarded unread.
    public static let maximumLineBytes = 64 * 1024
    /// Longest sentence sent.
    public static let maximumSentenceScalars = 600
}

/// A span of a sentence in code points, `end` exclusive.
public struct CloudSpan: Codable, Equatable, Sendable {
    public var start: Int
    public var end: Int
    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// The text of the span, if it lies inside the sentence.
    public func text(in sentence: String) -> String? {
        let scalars = Array(sentence.unicodeScalars)
        guard start >= 0, end <= scalars.count, start < end else { return nil }
        return String(String.UnicodeScalarView(scalars[start..<end]))
    }
}

/// A local flag sent along with the sentence.
public struct CloudFlag: Codable, Equatable, Sendable {
    public var start: Int
    public var end: Int
    public var word: String
    public var replacements: [String]
    public init(start: Int, end: Int, word: String, replacements: [String]) {
        self.start = start
        self.end = end
        self.word = word
        self.replacements = replacements
    }
}

/// A check request (engine → helper).
public struct CloudCheckRequest: Codable, Equatable, Sendable {
    public var v = CloudProtocol.version
    public var type = "check"
    public var id: Int
    public var sentence: String
    public var language: String
    public var flags: [CloudFlag]
    public init(id: Int, sentence: String, language: String, flags: [CloudFlag]) {
        self.id = id
        self.sentence = sentence
        self.language = language
        self.flags = flags
    }
}

/// The cloud's opinion of one local flag.
public struct CloudVerdict: Codable, Equatable, Sendable {
    public var start: Int
    public var end: Int
    /// `agree` or `disagree`.
    public var verdict: String
    public var explanation: String?
    public init(start: Int, end: Int, verdict: String, explanation: String? = nil) {
        self.start = start
        self.end = end
        self.verdict = verdict
        self.explanation = explanation
    }
}

/// A fix the cloud proposes on its own.
public struct CloudFix: Codable, Equatable, Sendable {
    public var start: Int
    public var end: Int
    public var original: String
    public var replacement: String
    public var explanation: String?
    public init(start: Int, end: Int, original: String, replacement: String, explanation: String? = nil) {
        self.start = start
        self.end = end
        self.original = original
        self.replacement = replacement
        self.explanation = explanation
    }
}

/// Any message from the helper.
public struct CloudReply: Codable, Equatable, Sendable {
    public var v: Int
    public var type: String
    public var id: Int?
    public var verdicts: [CloudVerdict]?
    public var fixes: [CloudFix]?
    public var message: String?

    public init(v: Int = CloudProtocol.version, type: String, id: Int?, verdicts: [CloudVerdict]? = nil, fixes: [CloudFix]? = nil, message: String? = nil) {
        self.v = v
        self.type = type
        self.id = id
        self.verdicts = verdicts
        self.fixes = fixes
        self.message = message
    }

    /// Parses one line from the helper; nil for anything malformed, oversized or of another version.
    public static func parse(_ line: String) -> CloudReply? {
        guard line.utf8.count <= CloudProtocol.maximumLineBytes,
            let reply = try? JSONDecoder().decode(CloudReply.self, from: Data(line.utf8)),
            reply.v == CloudProtocol.version, ["hello", "result", "error"].contains(reply.type)
        else { return nil }
        return reply
    }

    /// Keeps only what is consistent with the request: verdicts on flags that were sent, fixes
    /// whose span holds exactly `original`, with a real, different, single-line replacement.
    public func validated(against request: CloudCheckRequest) -> CloudReply {
        var copy = self
        let flagSpans = Set(request.flags.map { "\($0.start):\($0.end)" })
        copy.verdicts = (verdicts ?? []).filter { verdict in
            flagSpans.contains("\(verdict.start):\(verdict.end)") && (verdict.verdict == "agree" || verdict.verdict == "disagree")
        }.map { verdict in
            var trimmed = verdict
            trimmed.explanation = verdict.explanation.map { String($0.prefix(200)) }
            return trimmed
        }
        var taken: [CloudSpan] = []
        copy.fixes = (fixes ?? []).filter { fix in
            let span = CloudSpan(start: fix.start, end: fix.end)
            guard let text = span.text(in: request.sentence), text == fix.original else { return false }
            guard !fix.replacement.isEmpty, fix.replacement != fix.original, fix.replacement.unicodeScalars.count <= 100,
                !fix.replacement.contains("\n")
            else { return false }
            // Overlapping fixes cannot both be applied: keep the first.
            if taken.contains(where: { $0.start < fix.end && fix.start < $0.end }) { return false }
            taken.append(span)
            return true
        }.map { fix in
            var trimmed = fix
            trimmed.explanation = fix.explanation.map { String($0.prefix(200)) }
            return trimmed
        }
        return copy
    }
}

/// Encodes protocol messages as single lines.
public enum CloudLine {
    /// One JSON line (with the trailing newline) for any protocol message.
    public static func encode<T: Encodable>(_ message: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(message) else { return "" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// A cancel message.
    public static func cancel(id: Int) -> String {
        "{\"id\":\(id),\"type\":\"cancel\",\"v\":\(CloudProtocol.version)}\n"
    }

    /// A shutdown message.
    public static let shutdown = "{\"type\":\"shutdown\",\"v\":\(CloudProtocol.version)}\n"
}
