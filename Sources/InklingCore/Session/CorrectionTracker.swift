/// Where a flagged word stands relative to the cursor, and the fix for it.
///
/// A flag records the text it was found in: a little text before the word (`leading`), the word,
/// and everything between the word's end and the cursor (`tail`). The tail grows with every
/// character the engine knows was inserted after the word, and shrinks with every deletion.
/// A fix is planned only when the text before the cursor still ends with exactly
/// `leading + word + tail`; anything else drops it.
public struct TrackedFlag: Equatable, Sendable {
    /// Identifies the flag across updates.
    public let id: Int
    /// What the checker (or the cloud check) found.
    public var flag: TypoFlag
    /// Up to 16 characters before the word, as they were when it was flagged.
    public var leading: String
    /// Text between the word and the cursor.
    public var tail: String
    /// Where the flag came from.
    public var origin: Origin

    /// Who raised a flag.
    public enum Origin: Equatable, Sendable { case local, cloud }

    /// The chip shown in the auxiliary text: `teh → the`.
    public var chip: String { "\(flag.word) → \(flag.replacements.first ?? "")" }
}

/// Why a fix was not applied.
public enum FixRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The client has given no surrounding text in this field: the word's position cannot be proven.
    case noSurroundingText
    /// The client lost the capability after it was typed into or reported its text in this field
    /// (Firefox fails to answer after the first commit, and ibus-gtk3 drops the capability for
    /// that input context: Firefox's later fields in the window never offer it).
    case stoppedReportingText
    /// The client can report its text but has not done so since the field got focus.
    case notReportedYet
    /// The client counts offsets in another unit (Qt's UTF-16 with emoji nearby).
    case unreliableOffsets
    /// The text around the word changed since it was flagged.
    case textChanged
    /// Text is selected; deleting relative to the cursor could hit it.
    case selection
    /// The application has not yet reported the text the engine last put before the cursor.
    case unconfirmed
    /// The application has reported everything but the whitespace the engine put before the
    /// cursor since (LibreOffice trims it from its reports), so the position cannot be proven.
    case whitespaceNotReported

    /// The reason's name, for the engine's event trace (never a translated message).
    public var name: String {
        switch self {
        case .noSurroundingText: return "no-surrounding-text"
        case .stoppedReportingText: return "stopped-reporting"
        case .notReportedYet: return "not-reported-yet"
        case .unreliableOffsets: return "unreliable-offsets"
        case .textChanged: return "text-changed"
        case .selection: return "selection"
        case .unconfirmed: return "unconfirmed"
        case .whitespaceNotReported: return "whitespace-not-reported"
        }
    }

    public var description: String {
        switch self {
        case .noSurroundingText: return tr("fix not applied: this application does not report its text")
        case .stoppedReportingText:
            return tr("fix not applied: this application stopped reporting its text after it was typed into")
        case .notReportedYet: return tr("fix not applied: this application has not reported its text yet")
        case .unreliableOffsets: return tr("fix not applied: this application counts text positions differently")
        case .textChanged: return tr("fix not applied: the text changed")
        case .selection: return tr("fix not applied: text is selected")
        case .unconfirmed: return tr("fix not applied: the application has not reported the text before the cursor yet")
        case .whitespaceNotReported:
            return tr("fix not applied: this application has not reported the space before the cursor")
        }
    }
}

/// A fix asked for while the application had not yet reported the text the engine last put
/// before the cursor: applied when a report proves the word's place, refused when none comes in
/// time or a key, focus change or reset comes first.
public struct AwaitedFix: Equatable, Sendable {
    /// How long a fix waits for the application's report before it is refused. A report came
    /// within a few milliseconds of the fix key in every traced case; a person expects to see
    /// the fix (or the reason) at once.
    public static let waitMilliseconds = 800
    /// The flag to fix.
    public let id: Int
    /// The chosen replacement (nil: the flag's first).
    public let replacement: String?
    /// Tells one wait from the next (the glue's timer names the wait it ends).
    public let serial: Int
}

/// The flags of the current text and the verified edits that fix them.
public struct CorrectionTracker: Sendable {
    /// Current flags, newest first.
    public private(set) var flags: [TrackedFlag] = []
    /// Words the user chose to keep in this document (never flagged again).
    public private(set) var keptWords: Set<String> = []
    private var nextID = 1
    /// Flags further than this from the cursor are out of reach and expire.
    public var reach = 240

    public init() {}

    /// Forgets every flag and kept word (a new document).
    public mutating func clear() {
        flags.removeAll()
        keptWords.removeAll()
    }

    /// Drops every flag (the cursor moved somewhere unknown).
    public mutating func expireAll() { flags.removeAll() }

    /// Adds a flag for the word that ends `tail.count` characters before the cursor.
    @discardableResult
    public mutating func add(_ flag: TypoFlag, before: Substring, tail: String, origin: TrackedFlag.Origin = .local)
        -> Int?
    {
        guard !keptWords.contains(WordText.key(flag.word)) else { return nil }
        let leading = String(String.UnicodeScalarView(before.unicodeScalars.suffix(16)))
        flags.removeAll { $0.flag.word == flag.word && $0.tail == tail }
        let id = nextID
        nextID += 1
        flags.insert(TrackedFlag(id: id, flag: flag, leading: leading, tail: tail, origin: origin), at: 0)
        if flags.count > 9 { flags.removeLast(flags.count - 9) }
        return id
    }

    /// Replaces what a flag proposes (the cloud agreed and knows better).
    public mutating func update(id: Int, replacements: [String]?, explanation: String?) {
        guard let index = flags.firstIndex(where: { $0.id == id }) else { return }
        if let replacements, !replacements.isEmpty { flags[index].flag.replacements = replacements }
        if let explanation, !explanation.isEmpty { flags[index].flag.explanation = explanation }
    }

    /// Removes one flag.
    public mutating func remove(id: Int) { flags.removeAll { $0.id == id } }

    /// The user keeps a word: its flags go and it is not flagged again in this document.
    public mutating func keep(id: Int) {
        guard let flag = flags.first(where: { $0.id == id }) else { return }
        keptWords.insert(WordText.key(flag.flag.word))
        flags.removeAll { WordText.key($0.flag.word) == WordText.key(flag.flag.word) }
    }

    /// Marks a word as kept without a flag (committed with the keep key).
    public mutating func keep(word: String) {
        keptWords.insert(WordText.key(word))
        flags.removeAll { WordText.key($0.flag.word) == WordText.key(word) }
    }

    /// Text was inserted at the cursor.
    public mutating func inserted(_ text: String) {
        guard !flags.isEmpty else { return }
        for index in flags.indices { flags[index].tail += text }
        flags.removeAll { $0.tail.unicodeScalars.count > reach }
    }

    /// One character before the cursor was deleted; a flag whose word it reaches expires.
    public mutating func deletedBackward() {
        guard !flags.isEmpty else { return }
        flags.removeAll { $0.tail.isEmpty }
        for index in flags.indices { flags[index].tail.removeLast() }
    }

    /// Keeps only the flags that the text before the cursor still proves.
    public mutating func verify(before: Substring) {
        flags.removeAll { !Self.proves(before: before, $0) }
    }

    /// Whether the text before the cursor ends with exactly the flagged word and its tail,
    /// preceded by the recorded leading text (or by the start of the client's text).
    static func proves(before: Substring, _ tracked: TrackedFlag) -> Bool {
        let expected = Array((tracked.leading + tracked.flag.word + tracked.tail).unicodeScalars)
        let actual = Array(before.unicodeScalars)
        let core = tracked.flag.word.unicodeScalars.count + tracked.tail.unicodeScalars.count
        guard actual.count >= core else { return false }
        let compared = min(actual.count, expected.count)
        return actual.suffix(compared).elementsEqual(expected.suffix(compared))
    }

    /// The edits that replace a flagged word, after proving its position: delete backward from
    /// the cursor to the word's start, then insert the replacement and the text that followed it.
    public func plan(id: Int, replacement: String? = nil, before: Substring) -> Result<[SessionEffect], FixRefusal> {
        guard let tracked = flags.first(where: { $0.id == id }) else { return .failure(.textChanged) }
        guard Self.proves(before: before, tracked) else { return .failure(.textChanged) }
        let span = tracked.flag.word.unicodeScalars.count + tracked.tail.unicodeScalars.count
        let text = (replacement ?? tracked.flag.replacements.first ?? tracked.flag.word) + tracked.tail
        return .success([.deleteSurroundingText(offset: -span, count: span), .commitText(text)])
    }

    /// After a fix was applied: flags before the fixed word have it in their tail, flags after
    /// it have it in their leading text; both are rewritten, anything else can no longer be proven.
    public mutating func applied(id: Int, replacement: String) {
        guard let fixed = flags.first(where: { $0.id == id }) else { return }
        flags.removeAll { $0.id == id }
        let old = Array((fixed.flag.word + fixed.tail).unicodeScalars)
        let new = Array((replacement + fixed.tail).unicodeScalars)
        let fixedTail = Array(fixed.tail.unicodeScalars)
        var kept: [TrackedFlag] = []
        for var other in flags {
            let tail = Array(other.tail.unicodeScalars)
            let span = Array((other.flag.word + other.tail).unicodeScalars)
            if tail.count >= old.count, Array(tail.suffix(old.count)) == old {
                other.tail = String(String.UnicodeScalarView(tail.dropLast(old.count) + new))
                kept.append(other)
            } else if fixedTail.count >= span.count, Array(fixedTail.suffix(span.count)) == span {
                let before = Array((fixed.leading + replacement).unicodeScalars) + fixedTail.dropLast(span.count)
                other.leading = String(String.UnicodeScalarView(before.suffix(16)))
                kept.append(other)
            }
        }
        flags = kept
    }
}
