/// What the engine knows of the text before the cursor, and how far it trusts it.
///
/// The client's surrounding text is the truth when it comes; between reports the engine keeps its
/// own record of what it committed. Text the engine wrote and no report has echoed yet is
/// *unconfirmed*: a report that lacks only some of it is a late echo, not a change. Some clients
/// (LibreOffice) include the engine's own preedit in what they report; that is proven once, from
/// a report that is exactly the known text plus a recent preedit, and then stripped.
public struct TextContext: Equatable, Sendable {
    /// How far reports can be trusted for fixes.
    public enum Reliability: Equatable, Sendable {
        /// No report since focus-in (or the client stopped offering them).
        case unknown
        /// Reports in code points.
        case reliable
        /// Offsets that cannot be code points, or cannot be told from UTF-16.
        case unreliable
    }

    /// What a report changed.
    public enum ReportOutcome: Equatable, Sendable {
        /// Nothing (an echo of what the engine did, a late echo, or an unusable report).
        case unchanged
        /// The text before the cursor changed, and the report proves where it is.
        case changed
        /// The text before the cursor changed to a guess (UTF-16 offsets): context only.
        case guessed
    }

    /// The text before the cursor as far as the engine knows it (not including the preedit).
    public private(set) var before = ""
    /// Whether `before` is known (false until a report after focus-in, a reset or a cursor move).
    public private(set) var isKnown = true
    /// Scalars at the end of `before` that the engine wrote and no report has echoed yet.
    public private(set) var unconfirmedCount = 0
    /// Whether the client includes the engine's own preedit in the text it reports (LibreOffice).
    public private(set) var clientEchoesPreedit = false
    /// How far the reports can be trusted.
    public private(set) var reliability = Reliability.unknown
    /// Whether the client reported its text, or was typed into, since the field got focus.
    public private(set) var usedSinceFocusIn = false
    /// Whether the client lost the surrounding-text capability after it was used in this field
    /// (Firefox after the first commit) rather than before (Chromium at focus-in).
    public private(set) var stoppedReporting = false
    /// Whether the last report had a selection.
    public private(set) var hasSelection = false
    /// Whether the last report showed a letter or digit right after the cursor: with letters
    /// before it too, the cursor is inside a word (a letter inserted into `cts`), where a
    /// completion would end in the middle of it (`can` + `ts`).
    public private(set) var wordContinuesAfterCursor = false
    /// A report whose offsets fit as code points and as UTF-16 was not resolved yet.
    private var offsetsAmbiguous = false
    /// The last preedits shown, oldest first: a report may show one that has already changed.
    private var recentPreedits: [String] = []

    /// Most of `before` kept: trimmed to the last `keptScalars` once it exceeds twice that.
    static let keptScalars = 1000

    /// A context that knows the text is empty (a new session).
    public init() {}

    // MARK: Changes the engine knows of

    /// A new field has focus: nothing is known until it reports.
    public mutating func focusIn() {
        // Unknown until the client reports its text (clients and the daemon skip re-sending
        // unchanged text, so returning to a field must not look like a new, empty document).
        before = ""
        isKnown = false
        reliability = .unknown
        usedSinceFocusIn = false
        stoppedReporting = false
        hasSelection = false
        wordContinuesAfterCursor = false
        offsetsAmbiguous = false
        recentPreedits.removeAll()
    }

    /// The cursor may have moved: only the client's next report can say where to.
    public mutating func invalidate() {
        isKnown = false
        before = ""
        wordContinuesAfterCursor = false
    }

    /// Forgets the text but not whether the position is known (a field that became a password).
    public mutating func forgetText() { before = "" }

    /// Text the engine wrote (or passed on) reached the application at the cursor.
    public mutating func inserted(_ text: String) {
        before.append(text)
        unconfirmedCount += text.unicodeScalars.count
        if before.unicodeScalars.count > 2 * Self.keptScalars {
            before = String(before.unicodeScalars.suffix(Self.keptScalars))
        }
    }

    /// The engine committed text: where the cursor is, is known again.
    public mutating func committed() { isKnown = true }

    /// The application deleted the character before the cursor (BackSpace passed on).
    public mutating func deletedBackward() {
        if let removed = before.popLast() {
            // What the application deletes can no longer be awaited in an echo.
            unconfirmedCount = max(0, unconfirmedCount - removed.unicodeScalars.count)
        }
    }

    /// A verified fix deleted `count` scalars before the cursor.
    public mutating func fixDeleted(count: Int) { before = String(before.unicodeScalars.dropLast(count)) }

    /// A verified fix inserted `text` at the cursor.
    public mutating func fixInserted(_ text: String) { before.append(text) }

    /// A key was typed into the field.
    public mutating func noteTyped() { usedSinceFocusIn = true }

    /// The preedit now shown (a report may include it, if the client echoes preedits).
    public mutating func preeditShown(_ text: String) {
        guard recentPreedits.last != text else { return }
        recentPreedits.append(text)
        if recentPreedits.count > 8 { recentPreedits.removeFirst() }
    }

    /// This input context stopped reporting in an earlier field (StoppedReportingContexts).
    public mutating func stoppedReportingEarlier() { stoppedReporting = true }

    /// The client's surrounding-text capability changed from `had` to `has`.
    public mutating func capabilityChanged(had: Bool, has: Bool) {
        // A refusal after the field was used names a client that stopped reporting.
        if had, !has, usedSinceFocusIn { stoppedReporting = true }
        if has { stoppedReporting = false }
        if !has { reliability = .unknown }
    }

    // MARK: Reports

    /// The client reported its text and offsets as IBus delivers them (code points, or Qt's UTF-16).
    ///
    /// Offsets that cannot be code points still give prediction context when they fit as UTF-16
    /// (a guess), but make the context unreliable for fixes.
    public mutating func apply(text: String, cursor: Int, anchor: Int, shownPreedit: String?) -> ReportOutcome {
        // GNOME Shell 43 passes Wayland's UTF-8 byte offsets on unchanged (ByteOffsetReading).
        if let asBytes = SurroundingText.byteOffsetReading(
            text: text, cursor: cursor, anchor: anchor, known: isKnown ? before : nil)
        {
            offsetsAmbiguous = false
            return apply(asBytes, shownPreedit: shownPreedit)
        }
        let asUTF16 = SurroundingText.interpretingUTF16(text: text, cursor: cursor, anchor: anchor)
        if let surrounding = SurroundingText(text: text, cursor: cursor, anchor: anchor) {
            // Scalars beyond the BMP before the offsets make code points and UTF-16 disagree, and
            // Qt's UTF-16 offsets fit as code points whenever text follows the cursor: a fix on
            // the wrong reading deletes the wrong characters. The reading that ends with what the
            // engine knows it wrote wins; when neither or both do, no fix is applied on it.
            guard let asUTF16, asUTF16 != surrounding else { return apply(surrounding, shownPreedit: shownPreedit) }
            // What the engine wrote and no report has echoed yet is the evidence; the rest of its
            // record may have come from the wrong reading of an earlier report.
            let known = isKnown ? Array(before.unicodeScalars) : []
            let ours = unconfirmedCount > 0 ? Array(known.suffix(unconfirmedCount)) : known
            let codePointsAgree = endsWith(ours, reading: surrounding, shownPreedit: shownPreedit)
            let utf16Agrees = endsWith(ours, reading: asUTF16, shownPreedit: shownPreedit)
            // After an unresolved report the engine's context came from the client: agreeing with
            // it proves nothing until the echo carries text the engine wrote itself.
            let evidence = !offsetsAmbiguous || unconfirmedCount > 0
            if codePointsAgree && !utf16Agrees && evidence {
                offsetsAmbiguous = false
                return apply(surrounding, shownPreedit: shownPreedit)
            }
            if !utf16Agrees || codePointsAgree {
                let outcome = apply(surrounding, shownPreedit: shownPreedit)
                reliability = .unreliable
                offsetsAmbiguous = true
                return outcome
            }
        }
        _ = apply(nil, shownPreedit: shownPreedit)
        guard let guess = asUTF16 else { return .unchanged }
        wordContinuesAfterCursor = guess.after.unicodeScalars.first.map(WordText.isWordScalar) ?? false
        let ours = Array(before.unicodeScalars)
        var theirs = Array(guess.before.unicodeScalars.suffix(Self.keptScalars))
        // KWrite reports each change again with the preedit at the cursor: that report is not a
        // change of the text (taken as one, the preedit stood twice in the context and every
        // flag was withdrawn at the next letter).
        if let withoutPreedit = withoutEchoedPreedit(theirs, ours: ours, shownPreedit: shownPreedit) {
            theirs = withoutPreedit
        }
        if isKnown, theirs == ours || lateEchoGap(theirs, ours: ours) != nil {
            if theirs == ours { unconfirmedCount = 0 }
            return .unchanged
        }
        isKnown = true
        unconfirmedCount = 0
        before = String(String.UnicodeScalarView(theirs))
        return .guessed
    }

    /// The client reported its text around the cursor (nil: offsets that cannot be code points).
    ///
    /// The echo of the engine's own commit matches what the engine already knows and changes
    /// nothing, so it never causes a second prediction.
    public mutating func apply(_ surrounding: SurroundingText?, shownPreedit: String?) -> ReportOutcome {
        usedSinceFocusIn = true
        guard let surrounding else {
            reliability = .unreliable
            wordContinuesAfterCursor = false  // not known: completions as anywhere else
            return .unchanged
        }
        reliability = .reliable
        hasSelection = surrounding.hasSelection
        wordContinuesAfterCursor = surrounding.after.unicodeScalars.first.map(WordText.isWordScalar) ?? false
        let ours = Array(before.unicodeScalars)
        var theirs = Array(surrounding.before.unicodeScalars.suffix(Self.keptScalars))
        if let withoutPreedit = withoutEchoedPreedit(theirs, ours: ours, shownPreedit: shownPreedit) {
            theirs = withoutPreedit
        }
        if isKnown && theirs == ours {
            unconfirmedCount = 0
            return .unchanged
        }
        // The echo of an earlier state (a commit echoed before the key that followed it).
        if isKnown, lateEchoGap(theirs, ours: ours) != nil { return .unchanged }
        isKnown = true
        unconfirmedCount = 0
        before = String(String.UnicodeScalarView(theirs))
        return .changed
    }

    /// Why a fix may not be applied on this context now (nil: it may), for a client that does
    /// or does not offer surrounding text.
    public func fixRefusal(clientReports: Bool) -> FixRefusal? {
        if !clientReports { return stoppedReporting ? .stoppedReportingText : .noSurroundingText }
        switch reliability {
        case .unknown: return .notReportedYet
        case .unreliable: return .unreliableOffsets
        case .reliable: break
        }
        if hasSelection { return .selection }
        guard unconfirmedCount == 0 else {
            // Only what the client has reported proves the word's position.
            let unreported = before.unicodeScalars.suffix(unconfirmedCount)
            let onlyWhitespace = !unreported.isEmpty && unreported.allSatisfy { $0.properties.isWhitespace }
            return onlyWhitespace ? .whitespaceNotReported : .unconfirmed
        }
        return nil
    }

    /// Whether a reading of a report has `ours` just before the cursor, or just before a preedit
    /// the client echoes (KWrite's second report of each change).
    private func endsWith(_ ours: [Unicode.Scalar], reading: SurroundingText, shownPreedit: String?) -> Bool {
        guard !ours.isEmpty else { return false }
        let theirs = Array(reading.before.unicodeScalars)
        if theirs.reversed().starts(with: ours.reversed()) { return true }
        return (recentPreedits.reversed() + [shownPreedit ?? ""]).contains { preedit in
            Self.dropping(preedit, fromEndOf: theirs)?.reversed().starts(with: ours.reversed()) ?? false
        }
    }

    /// `scalars` without `preedit` at their end; nil when they do not end with it (or it is empty).
    private static func dropping(_ preedit: String, fromEndOf scalars: [Unicode.Scalar]) -> [Unicode.Scalar]? {
        let echoed = Array(preedit.unicodeScalars)
        guard !echoed.isEmpty, scalars.count >= echoed.count, scalars.suffix(echoed.count).elementsEqual(echoed)
        else { return nil }
        return Array(scalars.dropLast(echoed.count))
    }

    /// How many of the engine's latest scalars a report lacks when it shows an earlier state of
    /// the known text (a late echo); nil when it is not one.
    private func lateEchoGap(_ theirs: [Unicode.Scalar], ours: [Unicode.Scalar]) -> Int? {
        guard !theirs.isEmpty, unconfirmedCount > 0, !ours.isEmpty else { return nil }
        for missing in 1...min(unconfirmedCount, ours.count)
        where ours.dropLast(missing).suffix(theirs.count).elementsEqual(theirs) {
            return missing
        }
        return nil
    }

    /// A report without the engine's own preedit at its end, for clients that include it.
    ///
    /// The first time, it takes proof: the report minus a recent preedit is exactly the known
    /// text (or a late echo of it). Once proven, a report of an unknown position loses the
    /// preedit shown now. Reports that already match the known text are left alone.
    private mutating func withoutEchoedPreedit(
        _ theirs: [Unicode.Scalar], ours: [Unicode.Scalar], shownPreedit: String?
    ) -> [Unicode.Scalar]? {
        guard !recentPreedits.isEmpty, !(isKnown && theirs == ours) else { return nil }
        func stripping(_ preedit: String) -> [Unicode.Scalar]? { Self.dropping(preedit, fromEndOf: theirs) }
        if isKnown {
            // Exactly the known text plus a preedit; then a late echo plus a preedit.
            for preedit in recentPreedits.reversed() {
                guard let rest = stripping(preedit), rest == ours else { continue }
                clientEchoesPreedit = true
                return rest
            }
            if lateEchoGap(theirs, ours: ours) != nil { return nil }
            for preedit in recentPreedits.reversed() {
                guard let rest = stripping(preedit), lateEchoGap(rest, ours: ours) != nil else { continue }
                clientEchoesPreedit = true
                return rest
            }
        }
        // A report of an unknown position that ends with the preedit shown now: from a client
        // proven to echo it, or one that answers only after the first key (LibreOffice after
        // focus-in; clients that do not echo report before the key that starts a word).
        if clientEchoesPreedit || !isKnown, let shown = shownPreedit, let rest = stripping(shown) { return rest }
        return nil
    }
}
