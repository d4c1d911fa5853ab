/// Every decision of dictation in one field, free of I/O: when the key starts or stops listening,
/// what the auxiliary text says, which helper events reach the document, and when the helper is
/// considered hung. The engine glue moves protocol lines and renders what this returns.
///
/// Rules:
/// - The dictation key toggles listening; Escape (consumed), focus-out and a silence timeout end
///   it too. Ending by the key or the timeout sends `stop` (the utterance in progress still
///   arrives as a `final` and is committed); Escape and focus-out send `cancel` (nothing more is
///   committed: the user walked away or said no).
/// - Never in PASSWORD or PIN fields: the key is refused there with a notice.
/// - Off (`enabled` false): the key shows `offNotice` once per press and does nothing else.
/// - Only `final` text of the current listening period is committed, once; `partial` text is
///   shown in the auxiliary text after `listeningLabel` and never committed.
/// - A helper that does not answer `start` within `startTimeoutMilliseconds` or `stop`/`cancel`
///   within `stopTimeoutMilliseconds` is hung: `helperHung` says so and the glue kills it.
public struct DictationController: Sendable {
    /// The auxiliary text while listening (the partial follows it).
    public static var listeningLabel: String { tr("🎙 listening…") }
    /// Shown by the key when dictation is not enabled.
    public static var offNotice: String { tr("Dictation is off — enable it in Inkling Settings") }
    /// Shown by the key in a password or PIN field.
    public static var refusedNotice: String { tr("🎙 no dictation in password fields") }
    /// Shown when the helper failed (no microphone, no model, crashed).
    public static var failedNotice: String { tr("🎙 dictation stopped: the speech helper failed") }

    /// Where a field's listening period is.
    public enum Phase: Equatable, Sendable {
        case idle
        /// `start` sent, `listening` not yet received.
        case starting(session: Int, since: Int64)
        case listening(session: Int)
        /// `stop` or `cancel` sent; a `final` of this session is still committed after `stop`.
        case stopping(session: Int, since: Int64, keepsFinal: Bool)
    }

    /// What the glue must do after a call.
    public struct Action: Equatable, Sendable {
        /// Whether the key was consumed.
        public var handled = false
        /// Protocol lines for the helper, in order.
        public var lines: [String] = []
        /// Text to commit as dictated words (`InputSession.commitDictated`).
        public var commit: String?
        /// The new dictation status for the auxiliary text (nil: none); only when `statusChanged`.
        public var status: String?
        public var statusChanged = false
        /// A one-off notice for the auxiliary text.
        public var notice: String?
        public init() {}
    }

    public private(set) var phase = Phase.idle
    /// Whether the user enabled dictation (GSettings `dictation`), followed live.
    public var enabled = false
    /// The dictation key; nil: off.
    public var key: KeyBinding? = KeyBinding(accelerator: SessionSettings.defaultDictationKey)
    /// Listening ends after this long without speech (no partial or final).
    public var silenceTimeoutMilliseconds: Int64 = 10_000
    public var startTimeoutMilliseconds: Int64 = 8_000
    public var stopTimeoutMilliseconds: Int64 = 4_000

    private var nextSession: Int
    private var lastActivity: Int64 = 0
    private var shownPartial = ""

    /// `firstSession` lets several controllers share one helper without reusing numbers.
    public init(firstSession: Int = 1) {
        nextSession = firstSession
    }

    /// Whether a listening period is open (starting, listening or stopping).
    public var isActive: Bool { phase != .idle }

    /// The session number of the current period, if any.
    public var session: Int? {
        switch phase {
        case .idle: return nil
        case .starting(let session, _), .listening(let session), .stopping(let session, _, _): return session
        }
    }

    // MARK: Keys

    /// A key press (before the input session sees it). `secretField`: a password or PIN field.
    public mutating func key(_ event: KeyEvent, secretField: Bool, now: Int64) -> Action {
        guard !event.isRelease else { return Action() }
        if let key, key.matches(event) {
            return toggle(secretField: secretField, now: now)
        }
        if event.keyval == Keysym.escape, event.modifiers.intersection(.shortcut).isEmpty, isListeningOrStarting {
            var action = end(keepingFinal: false, now: now)
            action.handled = true
            return action
        }
        return Action()
    }

    private var isListeningOrStarting: Bool {
        switch phase {
        case .starting, .listening: return true
        default: return false
        }
    }

    private mutating func toggle(secretField: Bool, now: Int64) -> Action {
        var action = Action()
        action.handled = true
        if isListeningOrStarting {
            action = end(keepingFinal: true, now: now)
            action.handled = true
            return action
        }
        guard enabled else {
            action.notice = Self.offNotice
            return action
        }
        guard !secretField else {
            action.notice = Self.refusedNotice
            return action
        }
        let session = nextSession
        nextSession += 1
        phase = .starting(session: session, since: now)
        lastActivity = now
        shownPartial = ""
        action.lines = [DictationRequest(type: "start", session: session).line]
        action.status = Self.listeningLabel
        action.statusChanged = true
        return action
    }

    /// Ends listening: `stop` (the utterance in progress is still committed) or `cancel`.
    private mutating func end(keepingFinal: Bool, now: Int64) -> Action {
        var action = Action()
        guard let session, isListeningOrStarting else { return action }
        phase = .stopping(session: session, since: now, keepsFinal: keepingFinal)
        action.lines = [DictationRequest(type: keepingFinal ? "stop" : "cancel", session: session).line]
        action.status = nil
        action.statusChanged = true
        shownPartial = ""
        return action
    }

    // MARK: Field and settings changes

    /// The field lost focus: listening is cancelled; nothing more reaches it (not even the
    /// final of a `stop` still on its way).
    public mutating func focusOut(now: Int64) -> Action {
        cancelEverything(now: now)
    }

    /// The field turned into a password or PIN field: as focus-out.
    public mutating func becameSecret(now: Int64) -> Action {
        cancelEverything(now: now)
    }

    /// Dictation was turned off in the settings: listening is cancelled, as on focus-out.
    public mutating func setEnabled(_ value: Bool, now: Int64) -> Action {
        enabled = value
        return value ? Action() : cancelEverything(now: now)
    }

    /// Cancels listening and drops the final of a `stop` still on its way.
    private mutating func cancelEverything(now: Int64) -> Action {
        if case .stopping(let session, let since, true) = phase {
            phase = .stopping(session: session, since: since, keepsFinal: false)
        }
        return end(keepingFinal: false, now: now)
    }

    // MARK: Helper events

    /// One line from the helper, parsed (`DictationEvent.parse`).
    public mutating func received(_ event: DictationEvent, now: Int64) -> Action {
        var action = Action()
        guard let current = session, event.session == current else { return action }
        switch event.type {
        case "listening":
            if case .starting = phase { phase = .listening(session: current) }
            lastActivity = now
        case "partial":
            guard case .listening = phase, let text = event.text else { return action }
            lastActivity = now
            if text != shownPartial {
                shownPartial = text
                action.status = Self.listeningLabel + " " + text
                action.statusChanged = true
            }
        case "final":
            guard let text = event.text, !text.isEmpty else { return action }
            switch phase {
            case .listening, .stopping(_, _, true):
                action.commit = text
                lastActivity = now
                if case .listening = phase, !shownPartial.isEmpty {
                    shownPartial = ""
                    action.status = Self.listeningLabel
                    action.statusChanged = true
                }
            default:
                break
            }
        case "stopped":
            let wasStopping: Bool
            if case .stopping = phase { wasStopping = true } else { wasStopping = false }
            phase = .idle
            if !wasStopping {
                action.status = nil
                action.statusChanged = true
            }
        case "error":
            let wasStopping: Bool
            if case .stopping = phase { wasStopping = true } else { wasStopping = false }
            phase = .idle
            if !wasStopping {
                action.status = nil
                action.statusChanged = true
                action.notice = Self.failedNotice
            }
        default:
            break
        }
        return action
    }

    /// The helper died or was killed: the period ends, nothing more is committed.
    public mutating func helperGone() -> Action {
        var action = Action()
        guard isActive else { return action }
        let wasStopping: Bool
        if case .stopping = phase { wasStopping = true } else { wasStopping = false }
        phase = .idle
        shownPartial = ""
        if !wasStopping {
            action.status = nil
            action.statusChanged = true
            action.notice = Self.failedNotice
        }
        return action
    }

    // MARK: Time

    /// When `timerFired` has something to do (silence timeout, hung helper), if ever.
    public var deadline: Int64? {
        switch phase {
        case .idle: return nil
        case .starting(_, let since): return since + startTimeoutMilliseconds
        case .listening: return lastActivity + silenceTimeoutMilliseconds
        case .stopping(_, let since, _): return since + stopTimeoutMilliseconds
        }
    }

    /// Whether the helper left `start`, `stop` or `cancel` unanswered too long (kill it).
    public func helperHung(now: Int64) -> Bool {
        switch phase {
        case .starting(_, let since): return now - since >= startTimeoutMilliseconds
        case .stopping(_, let since, _): return now - since >= stopTimeoutMilliseconds
        default: return false
        }
    }

    /// The timer: listening ends after `silenceTimeoutMilliseconds` without speech.
    public mutating func timerFired(now: Int64) -> Action {
        guard case .listening = phase, now - lastActivity >= silenceTimeoutMilliseconds else { return Action() }
        return end(keepingFinal: true, now: now)
    }

    // MARK: Text

    /// A recognised utterance as typing would have put it after `before` (the text before the
    /// cursor, when known): a space between it and a preceding word, a capital at a sentence
    /// start (`WordText.isSentenceStart`), and the pronoun `I` (`i`, `i'm`, `i'll`…) in capitals
    /// since recognisers write it in lower case.
    public static func textToCommit(_ utterance: String, before: String?) -> String {
        var words = DictationText.normalized(utterance).split(separator: " ").map(String.init)
        guard !words.isEmpty else { return "" }
        for index in words.indices where words[index] == "i" || words[index].hasPrefix("i'") {
            words[index] = "I" + words[index].dropFirst()
        }
        var text = words.joined(separator: " ")
        guard let before else { return text }
        if WordText.isSentenceStart(before) { text = WordText.capitalizingFirst(text) }
        if let last = before.unicodeScalars.last, !last.properties.isWhitespace,
            !["(", "[", "{", "\u{201C}", "\u{2018}", "\"", "/", "-"].contains(last)
        {
            text = " " + text
        }
        return text
    }
}
