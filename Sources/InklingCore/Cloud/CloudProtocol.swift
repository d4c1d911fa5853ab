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
/// - `status`: `{"v":1,"type":"status","id":7,"status":"sign-in-required"}` — the account mode
///   (an Inkling Server) refused the device token, or `"signed-in"` when a new one turned up;
///   `id` names the request that found out, if any. See `CloudAccountNotice`.
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
    /// The account status of a `status` message (`CloudAccountNotice.Status`).
    public var status: String?

    public init(
        v: Int = CloudProtocol.version, type: String, id: Int?, verdicts: [CloudVerdict]? = nil,
        fixes: [CloudFix]? = nil, message: String? = nil,
        status: String? = nil
    ) {
        self.v = v
        self.type = type
        self.id = id
        self.verdicts = verdicts
        self.fixes = fixes
        self.message = message
        self.status = status
    }

    /// Parses one line from the helper; nil for anything malformed, oversized or of another version.
    public static func parse(_ line: String) -> CloudReply? {
        guard line.utf8.count <= CloudProtocol.maximumLineBytes,
            let reply = try? JSONDecoder().decode(CloudReply.self, from: Data(line.utf8)),
            reply.v == CloudProtocol.version, ["hello", "result", "error", "status"].contains(reply.type)
        else { return nil }
        return reply
    }

    /// Keeps only what is consistent with the request: verdicts on flags that were sent, fixes
    /// whose span holds exactly `original`, with a real, different, single-line replacement that
    /// `CloudText.isSafeReplacement` accepts (no control, invisible or bidi characters, at most two
    /// words more than the original). Explanations go through `CloudText.safeExplanation`.
    public func validated(against request: CloudCheckRequest) -> CloudReply {
        var copy = self
        let flagSpans = Set(request.flags.map { "\($0.start):\($0.end)" })
        copy.verdicts = (verdicts ?? []).filter { verdict in
            flagSpans.contains("\(verdict.start):\(verdict.end)")
                && (verdict.verdict == "agree" || verdict.verdict == "disagree")
        }.map { verdict in
            var trimmed = verdict
            trimmed.explanation = CloudText.safeExplanation(verdict.explanation)
            return trimmed
        }
        var taken: [CloudSpan] = []
        copy.fixes = (fixes ?? []).filter { fix in
            let span = CloudSpan(start: fix.start, end: fix.end)
            guard let text = span.text(in: request.sentence), text == fix.original else { return false }
            guard !fix.replacement.isEmpty, fix.replacement != fix.original,
                fix.replacement.unicodeScalars.count <= 100,
                CloudText.isSafeReplacement(fix.replacement, for: fix.original)
            else { return false }
            // Overlapping fixes cannot both be applied: keep the first.
            if taken.contains(where: { $0.start < fix.end && fix.start < $0.end }) { return false }
            taken.append(span)
            return true
        }.map { fix in
            var trimmed = fix
            trimmed.explanation = CloudText.safeExplanation(fix.explanation)
            return trimmed
        }
        // An error's message is never shown to the user; keep it short and printable for logs.
        copy.message = message.map {
            String(
                String.UnicodeScalarView($0.unicodeScalars.prefix(200).filter { CloudText.isVisible($0) || $0 == " " }))
        }
        return copy
    }
}

/// What text from the cloud may reach the user's document or the panel.
///
/// The model's output is untrusted: a replacement is typed into the user's text when the chip is
/// applied, and an explanation is shown in the panel, so neither may carry characters that
/// change what the user sees without being seen (bidi overrides that reorder the sentence,
/// zero-width characters, soft hyphens that make a "fix" look identical to the original), that
/// act on the application (C0/C1 controls such as ESC or CR), or that break lines (U+2028/9).
///
/// Refused: general categories Cc, Cf, Zl, Zp, Co, Cn and Cs — which covers the bidi controls
/// (U+061C, U+200E/F, U+202A–E, U+2066–9), U+200B, U+2060, U+FEFF, the soft hyphen U+00AD (no
/// word needs it in a typed fix) and the tag characters — and every space but U+0020, U+00A0
/// and U+202F (French typography). Allowed, only between two letters or marks: ZWNJ (U+200C)
/// and ZWJ (U+200D), which Persian, Urdu, the Indic scripts and Sinhala need inside real words.
public enum CloudText {
    /// A replacement may have at most this many more words than the text it replaces
    /// (`alot` → `a lot`, `could of` → `could have`; not a sentence slipped in).
    public static let maximumAddedWords = 2
    /// Longest explanation shown (scalars).
    public static let maximumExplanationScalars = 200

    /// Whether a scalar is plainly visible text (no control, format, separator other than the
    /// ordinary space, private-use or unassigned code point).
    public static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 { return scalar.value >= 0x20 && scalar.value != 0x7F }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate: return false
        case .spaceSeparator: return scalar == "\u{A0}" || scalar == "\u{202F}"
        default: return true
        }
    }

    /// Whether every scalar of `text` is visible, ZWJ/ZWNJ allowed between letters or marks.
    public static func isClean(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() where !isVisible(scalar) {
            guard scalar == "\u{200C}" || scalar == "\u{200D}", index > 0, index + 1 < scalars.count,
                isLetterOrMark(scalars[index - 1]), isLetterOrMark(scalars[index + 1])
            else { return false }
        }
        return true
    }

    private static func isLetterOrMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark,
            .spacingMark, .enclosingMark:
            return true
        default:
            return false
        }
    }

    /// Whether a fix's replacement may be typed into the user's text in place of `original`:
    /// clean (`isClean`), no spaces at either end the original does not have, and at most
    /// `maximumAddedWords` words more than the original.
    public static func isSafeReplacement(_ replacement: String, for original: String) -> Bool {
        guard isClean(replacement) else { return false }
        let edge: (Unicode.Scalar?) -> Bool = { $0.map { $0 == " " || $0 == "\u{A0}" || $0 == "\u{202F}" } ?? false }
        if edge(replacement.unicodeScalars.first) && !edge(original.unicodeScalars.first) { return false }
        if edge(replacement.unicodeScalars.last) && !edge(original.unicodeScalars.last) { return false }
        return wordCount(replacement) <= wordCount(original) + maximumAddedWords
    }

    /// An explanation fit for the panel: line breaks and tabs become spaces, runs of spaces one,
    /// at most `maximumExplanationScalars`; nil (no explanation) when it holds any other
    /// character `isClean` refuses, or nothing is left.
    public static func safeExplanation(_ text: String?) -> String? {
        guard let text else { return nil }
        var flat = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let mapped: Unicode.Scalar = ["\n", "\r", "\t", "\u{2028}", "\u{2029}"].contains(scalar) ? " " : scalar
            if mapped == " ", flat.last == " " || flat.isEmpty { continue }
            flat.append(mapped)
        }
        let cleaned = String(String.UnicodeScalarView(flat.prefix(maximumExplanationScalars))).trimmingSuffixSpaces()
        guard !cleaned.isEmpty, isClean(cleaned) else { return nil }
        return cleaned
    }

    private static func wordCount(_ text: String) -> Int {
        text.unicodeScalars.split(whereSeparator: { $0 == " " || $0 == "\u{A0}" || $0 == "\u{202F}" }).count
    }
}

extension String {
    fileprivate func trimmingSuffixSpaces() -> String {
        var scalars = unicodeScalars
        while scalars.last == " " { scalars.removeLast() }
        return String(scalars)
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
