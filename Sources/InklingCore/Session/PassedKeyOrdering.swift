/// Keeps a key the engine passed on in its place among the keys typed after it.
///
/// ibus-gtk3 hands a key the engine does not handle back to the application at the end of its
/// event queue, while the engine's commits and preedits for the keys typed after it reach the
/// application at once; a busy application (LibreOffice Writer at 30 ms a key) then applies
/// the next word before the Return (`rather spen\nspend`). After passing on a key that
/// changes the text (Return, Tab, BackSpace), the printable keys that follow are passed on too,
/// as key events behind it, so that all of them keep their order as they do without an input
/// method. In a client that reports its text the engine composes again once a report shows the
/// text changed by that key and by every key passed on since (or after many keys or seconds: a
/// client that stops reporting). Where no report can show it — a client that does not report
/// its text, or stopped (Firefox on X11 after its first commit), and LibreOffice after a Return
/// that ends a sentence (it reports the sentence around the cursor, the same with the Return
/// applied or not) — the engine composes again only once typing pauses: the application has
/// then worked through the keys it was handed back.
public struct PassedKeyOrdering: Equatable, Sendable {
    /// Printable keys passed on after the key at most, before composing again regardless.
    public static let maxHeldKeys = 300
    /// How long after the key (milliseconds) composition waits at most for the report.
    ///
    /// Writer at a load average of 8 on 2 cores applied a Return over 100 characters (3 s)
    /// after it was typed; with a 3 s bound the engine composed again while the Return and the
    /// held keys were still queued, and its commits overtook them (suite run 3, 2026-12-02).
    /// A client that reports its text reports the held keys once it has applied them, so the
    /// bound is reached only where reports stop.
    public static let maxWaitMilliseconds: Int64 = 10000
    /// How long typing must pause (milliseconds from the last key) before composing again where
    /// no report can show the keys applied.
    ///
    /// A key reaches the engine only once the application has read it, so a key that comes this
    /// long after the one before was read by an application that had the engine's answers to the
    /// keys before it for that long; at 30 ms a key, Firefox on X11 applied a passed-on Return
    /// after the next word's preedit (`summer.My`, 2 of 7 runs, 2026-12-02) when the letters
    /// after it were composed at once.
    public static let pauseMilliseconds: Int64 = 500

    /// A key passed on, waiting for the client to report its effect.
    public struct Wait: Equatable, Sendable {
        /// The text before the cursor just before the key (nil: not known).
        public let textBefore: String?
        /// When the key was passed on (the session clock's milliseconds).
        public let since: Int64
        /// Whether the key inserts text (Return, Tab), rather than deleting it (BackSpace).
        public let inserts: Bool
        /// The printable text passed on since, in order.
        public var held: String = ""
        /// How many printable keys were passed on since.
        public var heldKeys = 0
        /// When the last key was typed: the key passed on, then each key held.
        public var lastKeyAt: Int64
        /// Whether a report of only the keys held proves nothing: a client that reports the
        /// sentence around the cursor (LibreOffice), after a Return that ended a sentence, shows
        /// the same text before the cursor whether it applied the Return or not.
        public let reportsCannotTell: Bool
    }

    /// The key waiting for its report (nil: the engine composes as usual).
    public private(set) var wait: Wait? = nil

    /// Nothing waiting.
    public init() {}

    /// Whether printable keys are being passed on behind a passed-on key.
    public var isHolding: Bool { wait != nil }

    /// A key that changes the text was passed on, with `textBefore` before the cursor just
    /// before it (after anything the engine committed with it; nil: not known); `inserts`: it
    /// inserts text (Return, Tab), else it deletes (BackSpace); `reportsSentences`: the client
    /// reports the sentence around the cursor, not the paragraph (LibreOffice).
    public mutating func passedOn(textBefore: String?, inserts: Bool = true, reportsSentences: Bool = false, now: Int64)
    {
        let kept = textBefore.map {
            String(String.UnicodeScalarView($0.unicodeScalars.suffix(TextContext.keptScalars)))
        }
        let cannotTell = reportsSentences && inserts && Self.endsSentence(textBefore ?? "")
        wait = Wait(textBefore: kept, since: now, inserts: inserts, lastKeyAt: now, reportsCannotTell: cannotTell)
    }

    /// Whether the printable `text` typed now is to be passed on too (and is then counted);
    /// false ends the wait and the engine composes it. `clientReports`: the client reports its
    /// text now; where it does not (or its reports cannot tell), the wait ends only when typing
    /// has paused, else after too many keys or too long.
    public mutating func holds(_ text: String, now: Int64, clientReports: Bool = true) -> Bool {
        guard var current = wait else { return false }
        if !clientReports || current.reportsCannotTell {
            // Composing while the application may still have a passed-on key queued is what
            // loses it; a continuous stream of keys costs only predictions until the pause.
            guard now - current.lastKeyAt < Self.pauseMilliseconds else {
                wait = nil
                return false
            }
        } else {
            guard current.heldKeys < Self.maxHeldKeys, now - current.since < Self.maxWaitMilliseconds else {
                wait = nil
                return false
            }
        }
        current.held += text
        current.heldKeys += 1
        current.lastKeyAt = now
        wait = current
        return true
    }

    /// The client reported `before` as its text before the cursor: the wait ends when it holds
    /// every key passed on since and is no longer the text from before the key.
    ///
    /// A report from before the key was applied (the echo of the commit that came with it, or
    /// one that does not show the keys passed on after it yet) keeps the wait. After a
    /// BackSpace, a report with the keys passed on since behind the text the BackSpace leaves
    /// ends it, also where that text looks the same as before (nothing to delete at the start
    /// of the field).
    ///
    /// Spaces at the end are not compared: LibreOffice leaves them out of its reports.
    public mutating func reported(before: Substring) {
        guard let current = wait else { return }
        let scalars = Self.withoutTrailingSpaces(before.unicodeScalars)
        let held = Self.withoutTrailingSpaces(current.held.unicodeScalars)
        guard scalars.count >= held.count, scalars.suffix(held.count).elementsEqual(held) else { return }
        let rest = Self.withoutTrailingSpaces(scalars.dropLast(held.count))
        // Only the keys held, in a client that reports the sentence: the same with the Return
        // applied (a new paragraph) as without it (a new sentence after `July.`).
        if current.reportsCannotTell, rest.isEmpty { return }
        if let textBefore = current.textBefore {
            let expected = Self.withoutTrailingSpaces(textBefore.unicodeScalars).suffix(TextContext.keptScalars)
            let shown = rest.suffix(TextContext.keptScalars)
            if !current.inserts, !held.isEmpty, shown.elementsEqual(Self.afterBackSpace(textBefore)) {
                // The report shows the keys typed after the BackSpace behind the text it leaves,
                // so it is newer than the key, even where the BackSpace removed nothing the report
                // shows (at the start of the field, or a space LibreOffice leaves out).
                wait = nil
                return
            }
            if shown.elementsEqual(expected) { return }
            // Part of the text before the key, the engine's last commit not shown yet: a report
            // older than the key. (After a Return, LibreOffice reports the new, empty paragraph.)
            if current.inserts, !shown.isEmpty, shown.count < expected.count, expected.starts(with: shown) { return }
        }
        wait = nil
    }

    /// Focus moved: the keys' place is the client's to report.
    ///
    /// A reset does not end the wait: Firefox resets the input method each time it applies a
    /// key passed on (its selection moved without the input method), while keys held after it
    /// are still queued; composing then lost the next word's first letters (`The ather`).
    public mutating func clear() { wait = nil }

    /// The last `keptScalars` of `textBefore` once a BackSpace has deleted its last character
    /// (nothing at the start of the field), without trailing spaces.
    static func afterBackSpace(_ textBefore: String) -> ArraySlice<Unicode.Scalar> {
        var remaining = textBefore
        _ = remaining.popLast()
        return withoutTrailingSpaces(remaining.unicodeScalars).suffix(TextContext.keptScalars)
    }

    /// Whether `text` ends a sentence (`.`, `!`, `?` or `…`, perhaps inside a closing bracket or
    /// quote, trailing spaces aside): LibreOffice starts its next report after it.
    public static func endsSentence(_ text: String) -> Bool {
        let closing: Set<Unicode.Scalar> = [")", "]", "}", "\"", "'", "\u{201D}", "\u{2019}"]
        var scalars = withoutTrailingSpaces(text.unicodeScalars)
        while let last = scalars.last, closing.contains(last) { scalars.removeLast() }
        guard let last = scalars.last else { return false }
        return [".", "!", "?", "\u{2026}"].contains(last)
    }

    static func withoutTrailingSpaces<Scalars: BidirectionalCollection>(_ scalars: Scalars) -> [Unicode.Scalar]
    where Scalars.Element == Unicode.Scalar {
        var kept = Array(scalars)
        while kept.last == " " { kept.removeLast() }
        return kept
    }
}

extension FocusClient {
    /// Whether a printable key passed on reaches the application as typed, so that keys can be
    /// held behind a passed-on key.
    ///
    /// GNOME Shell filters keys through IBus asynchronously and replays one the engine passes on
    /// later, and mutter sends it with the keyboard's modifiers at the time of the replay: a
    /// Shift released meanwhile turns `M` into `m` (GTK 4 and GTK 3 on GNOME Wayland,
    /// 2026-12-02, `summer.\nmy sister`). The Shell's replay keeps the order of the keys it
    /// filters, and commits reach the application through text-input-v3, so nothing is held.
    public var passedOnLettersKeepTheirCase: Bool { name != "gnome-shell" }

    /// Whether one answer's edits reach the application as one batch that keeps only its last
    /// commit: GNOME Shell's text-input-v3 (`EditBatch`).
    public var editsArriveInBatches: Bool { name == "gnome-shell" }

    /// Whether the client reports the sentence around the cursor rather than its paragraph.
    ///
    /// LibreOffice's `SwEditWin::GetSurroundingText` selects from the start to the end of the
    /// sentence: after `in July.` and a Return not yet applied, the report of `Tha` typed behind
    /// it looked like the new paragraph, the wait ended, and Writer put the Return after the
    /// next words (2026-12-02, fourth session).
    public var reportsSentences: Bool { name.hasSuffix(":soffice.bin") }
}

extension InputSession {
    /// A key that changes the text is being passed on: the printable keys after it follow it as
    /// key events until the client shows it applied, or, where it cannot, until typing pauses.
    func passingOnTextChangingKey(inserts: Bool = true) {
        guard focusClient?.passedOnLettersKeepTheirCase ?? true else { return }
        passedKeyOrdering.passedOn(
            textBefore: context.isKnown ? context.before : nil, inserts: inserts,
            reportsSentences: focusClient?.reportsSentences ?? false, now: clock.now())
    }

    /// Whether the client reports its text now (it offers the capability and has not stopped).
    var clientReportsText: Bool { capabilities.contains(.surroundingText) && !context.stoppedReporting }

    /// A printable key while a passed-on key waits for its report: passed on too, unless the
    /// wait is over (then nil: the next handlers compose it).
    func heldKeys(_ event: KeyEvent) -> KeyResult? {
        guard passedKeyOrdering.isHolding else { return nil }
        guard let character = event.character, character.value >= 0x20, character.value != 0x7F, !event.isShortcut
        else { return nil }
        guard composition.isEmpty,
            passedKeyOrdering.holds(String(character), now: clock.now(), clientReports: clientReportsText)
        else {
            passedKeyOrdering.clear()
            return nil
        }
        inserted(String(character))
        lastSuggestionKey = nil
        return KeyResult(handled: false, effects: hideTable(), needsSuggestions: false)
    }

    /// The client's report as IBus delivers it, for a passed-on key waiting for it.
    func notePassedKeyReport(text: String, cursor: Int, anchor: Int) {
        guard passedKeyOrdering.isHolding else { return }
        notePassedKeyReport(
            SurroundingText.byteOffsetReading(
                text: text, cursor: cursor, anchor: anchor, known: context.isKnown ? context.before : nil)
                ?? SurroundingText(text: text, cursor: cursor, anchor: anchor)
                ?? SurroundingText.interpretingUTF16(text: text, cursor: cursor, anchor: anchor))
    }

    /// The client's report, for a passed-on key waiting for it.
    func notePassedKeyReport(_ surrounding: SurroundingText?) {
        guard passedKeyOrdering.isHolding, let surrounding else { return }
        passedKeyOrdering.reported(before: surrounding.before)
    }
}
