import FoundationEssentials

/// The pipe protocol between the engine and the `inkling-dictate` helper: JSON, one object per
/// line, like the cloud helper's (`CloudProtocol`).
///
/// Version 1. Every message has `"v": 1` and a `"type"`.
///
/// Engine → helper:
/// - `start`: `{"v":1,"type":"start","session":3}` — open the microphone and listen. `session`
///   numbers one listening period; every reply of that period carries it, so a late reply of an
///   earlier period is recognised and dropped.
/// - `stop`: `{"v":1,"type":"stop","session":3}` — finish the utterance in progress (its `final`
///   still comes), close the microphone, answer `stopped`.
/// - `cancel`: `{"v":1,"type":"cancel","session":3}` — drop the utterance in progress unheard,
///   close the microphone, answer `stopped`.
/// - `shutdown`: `{"v":1,"type":"shutdown"}` — exit.
///
/// Helper → engine:
/// - `hello` once at start; `listening` when the microphone is open.
/// - `partial`: `{"v":1,"type":"partial","session":3,"text":"hello wor"}` — volatile, display only.
/// - `final`: `{"v":1,"type":"final","session":3,"text":"hello world"}` — an utterance the
///   recogniser committed to (end of speech detected, or `stop`).
/// - `level`: `{"v":1,"type":"level","session":3,"level":0.42}` — input level 0…1 for a meter.
/// - `error`: `{"v":1,"type":"error","session":3,"message":"no microphone"}` — listening ended.
/// - `stopped`: listening ended (after `stop`, `cancel`, or the end of an `--audio-file`).
public enum DictationProtocol {
    /// The protocol version both sides speak.
    public static let version = 1
    /// Longest line either side accepts.
    public static let maximumLineBytes = 16 * 1024
    /// Longest text of one `partial` or `final` (scalars); longer text is cut by the helper and
    /// refused by the engine.
    public static let maximumTextScalars = 1000
}

/// A message from the engine to the helper.
public struct DictationRequest: Codable, Equatable, Sendable {
    public var v = DictationProtocol.version
    public var type: String
    public var session: Int?

    public init(type: String, session: Int?) {
        self.type = type
        self.session = session
    }

    /// One JSON line (with its newline).
    public var line: String { DictationLine.encode(self) }

    /// Parses one line from the engine; nil for anything malformed or of another version.
    public static func parse(_ line: String) -> DictationRequest? {
        guard line.utf8.count <= DictationProtocol.maximumLineBytes,
            let request = try? JSONDecoder().decode(DictationRequest.self, from: Data(line.utf8)),
            request.v == DictationProtocol.version, ["start", "stop", "cancel", "shutdown"].contains(request.type)
        else { return nil }
        return request
    }
}

/// A message from the helper to the engine.
public struct DictationEvent: Codable, Equatable, Sendable {
    public var v = DictationProtocol.version
    public var type: String
    public var session: Int?
    public var text: String?
    public var level: Double?
    public var message: String?

    public init(type: String, session: Int?, text: String? = nil, level: Double? = nil, message: String? = nil) {
        self.type = type
        self.session = session
        self.text = text
        self.level = level
        self.message = message
    }

    /// One JSON line (with its newline).
    public var line: String { DictationLine.encode(self) }

    /// Parses one line from the helper; nil for anything malformed, oversized, of another version
    /// or with text that may not reach a document (see `DictationText.isAcceptable`).
    public static func parse(_ line: String) -> DictationEvent? {
        guard line.utf8.count <= DictationProtocol.maximumLineBytes,
            let event = try? JSONDecoder().decode(DictationEvent.self, from: Data(line.utf8)),
            event.v == DictationProtocol.version,
            ["hello", "listening", "partial", "final", "level", "error", "stopped"].contains(event.type)
        else { return nil }
        if event.type == "partial" || event.type == "final" {
            guard let text = event.text, DictationText.isAcceptable(text) else { return nil }
        }
        return event
    }
}

/// What recognised text may reach the document: visible characters and plain spaces only (no
/// controls, line breaks, bidi or zero-width characters), at most `maximumTextScalars`.
public enum DictationText {
    /// Whether `text` may be shown or committed.
    public static func isAcceptable(_ text: String) -> Bool {
        text.unicodeScalars.count <= DictationProtocol.maximumTextScalars
            && text.unicodeScalars.allSatisfy { $0 == " " || CloudText.isVisible($0) }
    }

    /// The words of a recogniser's hypothesis as the user would type them: runs of spaces
    /// collapsed, no spaces at either end, filler markers such as `<sil>` or `[noise]` dropped.
    public static func normalized(_ text: String) -> String {
        text.split(separator: " ").filter { word in
            !(word.hasPrefix("<") && word.hasSuffix(">")) && !(word.hasPrefix("[") && word.hasSuffix("]"))
        }.joined(separator: " ")
    }
}

/// Encoding of protocol lines.
public enum DictationLine {
    /// One JSON line (with the trailing newline) for any protocol message.
    public static func encode<T: Encodable>(_ message: T) -> String {
        CloudLine.encode(message)
    }
}
