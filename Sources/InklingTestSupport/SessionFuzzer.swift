import FoundationEssentials
import InklingCore

/// A fuzz run that broke an invariant: where, why, and the events that led there.
public struct SessionFuzzFailure: Error, CustomStringConvertible {
    public var seed: UInt64
    public var event: Int
    public var message: String
    /// The last events, oldest first (typed text is the fuzzer's own random text).
    public var recent: [String]

    public var description: String {
        "session fuzz failure (INKLING_FUZZ_SEED=\(seed), event \(event)): \(message)\n  recent events:\n    "
            + recent.joined(separator: "\n    ")
    }
}

/// Model-based random testing of `InputSession` (behind a `ComposeFilter`) against a simulated
/// client that holds the real text.
///
/// Every step is one thing a user or an application does: a key (letters, dead keys and
/// Compose sequences, Backspace, Space, punctuation, F-keys, arrows, Escape, Return, Delete,
/// chords, candidate keys), a candidate click, a mouse click or selection, a focus change, a new
/// field, a content-type change (including PASSWORD → free-form, as "show password" does), a
/// language switch, a settings change, the cloud timer and cloud replies (late, stale, garbage).
/// The client reports its text after each step: at once, late (a snapshot older than what the
/// engine has done, never older than what the client itself did since), twice, never, or in
/// UTF-16 units as Qt does.
///
/// The reference model is the text the user sees (the client's text with the preedit at the
/// cursor). Each step's outcome must be one the user asked for: the plain effect of the key in
/// an application without an input method, or one of the substitutions the user chose — a
/// candidate (the typed word replaced by it, plus a space), a fix of a flagged word (the word
/// replaced by one of its proposals, nothing else touched), an autocorrection on Space (and its
/// undo on Backspace), a pending space confirmed or dropped before closing punctuation and
/// Return. Steps that are not keys must leave the text as it is. So no character is ever lost,
/// doubled or reordered. Words typed in password, PIN and PRIVATE fields use letters no other
/// field uses, and nothing learned or sent to the cloud may contain them.
public final class SessionFuzzer {
    /// Letters typed only in password, PIN and PRIVATE fields.
    public static let secretLetters: [Unicode.Scalar] = ["\u{167}", "\u{111}"]  // ŧ đ

    public let seed: UInt64
    private var rng: SplitMix64
    private let packs: [LanguagePack]
    private var predictors: [Predictor]
    private var activePredictor = 0
    private let session: InputSession
    private let filter: ComposeFilter
    private let client = SimulatedClient()
    private var now: Int64 = 10_000
    private var modelComposing: [UInt32] = []
    private var reportsUTF16 = false
    private var reportsText = true
    /// The field has been a password, PIN or PRIVATE field: an application tells so again when
    /// focus returns to it (only while it keeps focus can it turn free-form, as "show password" does).
    private var fieldHeldSecrets = false
    /// Client states after recent steps (index, scalars, cursor, anchor), for late reports.
    private var snapshots: [(index: Int, scalars: [Unicode.Scalar], cursor: Int, anchor: Int)] = []
    /// No report may show a state older than this step (the client's own changes, and what it reported).
    private var reportFloor = 0
    private var cloudRequests: [CloudCheckRequest] = []
    /// The autocorrection shown as the preedit (what was typed, what is shown), for its undo.
    private var shownAutocorrection: (typed: [Unicode.Scalar], shown: [Unicode.Scalar])? = nil
    private var step = 0
    private var recent: [String] = []
    /// Counts of what the run did, by kind (for the report).
    public private(set) var counts: [String: Int] = [:]

    /// A fuzzer over `packs` (the first one is active at the start; the others are switched to).
    public init(seed: UInt64, packs: [LanguagePack]) {
        precondition(!packs.isEmpty, "at least one pack")
        self.seed = seed
        rng = SplitMix64(seed: seed)
        self.packs = packs
        predictors = packs.map { Predictor(pack: $0) }
        session = InputSession(predictor: predictors[0])
        filter = ComposeFilter(session: session, composer: TableComposer(TableComposer.latin))
        let clock = Clock(self)
        session.clock = ProductClock { clock.owner?.now ?? 0 }
        newField()
    }

    /// Steps run so far.
    public var eventsRun: Int { step }

    /// Runs `events` steps; the first broken invariant ends the run.
    public func run(events: Int) -> SessionFuzzFailure? {
        for _ in 0..<events {
            step += 1
            if let failure = runStep() { return failure }
        }
        return nil
    }

    private final class Clock: @unchecked Sendable {  // one thread: the fuzzer's
        weak var owner: SessionFuzzer?
        init(_ owner: SessionFuzzer) { self.owner = owner }
    }

    // MARK: Steps

    private func runStep() -> SessionFuzzFailure? {
        now += Int64.random(in: 20...300, using: &rng)
        if client.scalars.count > 400 { newField() }
        let roll = Int.random(in: 0..<1000, using: &rng)
        let failure: String?
        switch roll {
        case 0..<400: failure = key(randomTypingKey())
        case 400..<470: failure = typeWord()
        case 470..<520:
            // The fix key, most of all when a chip is shown.
            let fix = KeyEvent.key(Keysym.returnKey, modifiers: [.control, .alt])
            failure =
                session.corrections.flags.isEmpty
                ? key(randomTypingKey()) : key(rng.chance(70) ? fix : .key(Keysym.space, modifiers: [.control, .alt]))
        case 520..<600: failure = key(.key(Keysym.space))
        case 600..<660: failure = key(.key(Keysym.backSpace))
        case 660..<700: failure = key(.typing(rng.pick(Array(",.;:!?()\"'-…%«»/@#&*".unicodeScalars))))
        case 700..<740:
            failure = key(
                .key(
                    rng.pick([
                        DeadKeysym.acute, DeadKeysym.grave, DeadKeysym.circumflex, DeadKeysym.tilde,
                        DeadKeysym.diaeresis, DeadKeysym.multiKey,
                    ])))
        case 740..<790: failure = key(.key(Keysym.f1 + UInt32.random(in: 0..<9, using: &rng)))
        case 790..<830:
            let navigation = [
                Keysym.left, Keysym.right, Keysym.home, Keysym.end, Keysym.up, Keysym.down, Keysym.pageUp,
                Keysym.pageDown, Keysym.tab, Keysym.isoLeftTab,
            ]
            failure = key(.key(rng.pick(navigation), modifiers: rng.chance(15) ? .shift : []))
        case 830..<845: failure = key(.key(Keysym.escape))
        case 845..<865: failure = key(.key(rng.chance(80) ? Keysym.returnKey : Keysym.keypadEnter))
        case 865..<875: failure = key(.key(Keysym.delete))
        case 875..<900: failure = key(randomChord())
        case 900..<915: failure = click()
        case 915..<930: failure = mouse()
        case 930..<940: failure = focusAwayAndBack()
        case 940..<944:
            newField()
            failure = nil
        case 944..<956: failure = changeContentType()
        case 956..<960: failure = switchLanguage()
        case 960..<970: failure = changeSettings()
        case 970..<985: failure = cloudTimer()
        case 985..<1000: failure = cloudReply()
        default: failure = nil
        }
        if let failure { return fail(failure) }
        if let failure = checkClient() { return fail(failure) }
        if let failure = report() { return fail(failure) }
        if let failure = checkClient() { return fail(failure) }
        if let failure = checkPrivacy() { return fail(failure) }
        return nil
    }

    private func fail(_ message: String) -> SessionFuzzFailure {
        SessionFuzzFailure(seed: seed, event: step, message: message, recent: recent)
    }

    private func note(_ text: String, kind: String) {
        counts[kind, default: 0] += 1
        recent.append("#\(step) \(text)  [\(describe(client))]")
        if recent.count > 24 { recent.removeFirst() }
    }

    private func describe(_ client: SimulatedClient) -> String {
        var shown = client.visible.map { $0 == "\n" ? "⏎" : String($0) }.joined()
        shown.insert("|", at: shown.index(shown.startIndex, offsetBy: min(client.visibleCursor, shown.count)))
        let preedit = client.preedit.map { " preedit=\"\($0.text)\" u\($0.underlined)" } ?? ""
        return "\(shown.debugDescription)\(preedit)\(client.selection.map { " sel=\($0)" } ?? "")"
    }

    private var fieldIsSecretOrPrivate: Bool { session.contentType.isSecret || session.contentType.isPrivate }

    private func randomTypingKey() -> KeyEvent {
        if fieldIsSecretOrPrivate && rng.chance(85) { return .typing(rng.pick(Self.secretLetters)) }
        let roll = Int.random(in: 0..<100, using: &rng)
        let scalar: Unicode.Scalar
        switch roll {
        case 0..<80: scalar = rng.pick(Array("etaoinshrdlucmfwypvbgkqjxzeeaaoott".unicodeScalars))
        case 80..<90: scalar = rng.pick(Array("ETAOINSHRDLUCMW".unicodeScalars))
        case 90..<94: scalar = rng.pick(Array("0123456789".unicodeScalars))
        case 94..<97: scalar = rng.pick(Array("éèàçñüößłœ".unicodeScalars))
        default: scalar = rng.pick(Array("😀中ж\u{301}\u{200D}🇩".unicodeScalars))
        }
        return .typing(scalar)
    }

    /// Real words and common typos (which the checker flags), typed key by key, then a space.
    private func typeWord() -> String? {
        let words =
            fieldIsSecretOrPrivate
            ? ["\u{167}\u{111}\u{167}", "\u{111}\u{111}"]
            : [
                "the", "teh", "adn", "and", "recieve", "becuase", "thier", "wiht", "I", "saw", "cat", "definately",
                "tommorow", "hte",
                "naïve", "don't", "well-known", "Hello", "wrold", "seperate", "occured", "untill", "freind", "beleive",
            ]
        for scalar in rng.pick(words).unicodeScalars {
            if let failure = key(.typing(scalar)) { return failure }
        }
        return rng.chance(80) ? key(.key(Keysym.space)) : key(.typing(rng.pick([",", ".", "!"])))
    }

    private func randomChord() -> KeyEvent {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return .typing("a", modifiers: .control)
        case 1: return .key(Keysym.returnKey, modifiers: [.control, .alt])  // apply the newest fix
        case 2: return .key(Keysym.space, modifiers: [.control, .alt])  // correction panel
        case 3: return .typing("k", modifiers: [.control, .alt])  // keep the word
        case 4: return .typing("o", modifiers: [.control, .alt])  // off the record
        case 5: return .key(Keysym.f1 + UInt32.random(in: 0..<9, using: &rng), modifiers: .control)  // forget
        case 6: return .typing(rng.pick(Array("cvxzs".unicodeScalars)), modifiers: .control)
        default: return .key(Keysym.left, modifiers: .control)
        }
    }

    // MARK: Keys and their allowed outcomes

    private enum Outcome {
        /// Exactly this text, and the cursor here (nil: any cursor).
        case exact([Unicode.Scalar], cursor: Int?)
        /// A flagged word replaced by one of its proposals (these flags).
        case fix([TrackedFlag])
        /// The typed word at the cursor replaced by one word and a space (autocorrection).
        case autocorrection(typed: [Unicode.Scalar])
    }

    private func key(_ event: KeyEvent) -> String? {
        let before = client.visible
        let cursor = client.visibleCursor
        let outcomes = expectedOutcomes(event, before: before, cursor: cursor)
        let flagsBefore = session.corrections.flags
        let contextBefore = session.knownContext
        let textBefore = client.scalars[..<client.cursor]
        note("key \(Self.name(event))", kind: "key")
        let result = filter.processKey(event)
        // As the engine's settings reader does: what the key asked for is applied.
        if !result.intents.isEmpty { session.apply(session.settings.applying(result.intents)) }
        client.apply(result.effects)
        if !result.handled { client.applicationKey(event) }
        if result.needsSuggestions { client.apply(session.refreshSuggestions()) }
        var release = event
        release.modifiers.insert(.release)
        let released = filter.processKey(release)
        client.apply(released.effects)
        if released.needsSuggestions { client.apply(session.refreshSuggestions()) }
        let after = client.visible
        // (A shown autocorrection stays undoable while the preedit shows it, whatever keys the
        // Compose layer swallowed meanwhile; Backspace checks the preedit before undoing.)
        for (position, outcome) in outcomes.enumerated() {
            switch outcome {
            case .exact(let text, let expectedCursor):
                if after == text && (expectedCursor == nil || expectedCursor == client.visibleCursor) {
                    // The first outcome is the key's plain effect; any other is a choice the user made.
                    if position > 0 && after != before {
                        counts["outcome: candidate or pending space", default: 0] += 1
                    }
                    return nil
                }
            case .fix:
                if Self.isFix(before: before, after: after, flags: flagsBefore) {
                    counts["outcome: fix applied", default: 0] += 1
                    return nil
                }
            case .autocorrection(let typed):
                if let shown = Self.autocorrected(before: before, cursor: cursor, typed: typed, after: after) {
                    shownAutocorrection = (typed, shown)
                    counts["outcome: autocorrection", default: 0] += 1
                    return nil
                }
            }
        }
        let wanted = outcomes.compactMap { outcome -> String? in
            if case .exact(let text, let c) = outcome {
                return "\(Self.string(text).debugDescription)@\(c.map(String.init) ?? "*")"
            }
            if case .fix = outcome { return "a fix" }
            return "an autocorrection"
        }
        return
            "key \(Self.name(event)) turned \(Self.string(before).debugDescription) into \(Self.string(after).debugDescription)"
            + " (cursor \(client.visibleCursor)); allowed: \(wanted.joined(separator: ", "))"
            + "; the engine's text before the cursor ends \(String(contextBefore.unicodeScalars.suffix(40)).debugDescription),"
            + " the client's \(String(String.UnicodeScalarView(textBefore.suffix(40))).debugDescription)"
    }

    /// What the key may do to the visible text, given the state the user sees.
    private func expectedOutcomes(_ event: KeyEvent, before: [Unicode.Scalar], cursor: Int) -> [Outcome] {
        // The Compose layer first: the model keeps its own copy of the sequence in progress.
        var effective: [KeyEvent] = [event]
        let composes = !session.contentType.isSecret && session.capabilities.contains(.preedit)
        if !composes {
            modelComposing = []
        } else if Keysym.isModifierOnly(event.keyval) {
            effective = []
        } else if event.isShortcut {
            modelComposing = []
        } else if !modelComposing.isEmpty && event.keyval == Keysym.backSpace {
            modelComposing = []
            effective = []
        } else {
            var (stepResult, pending) = TableComposer.step(
                TableComposer.latin, pending: modelComposing, keysym: event.keyval)
            if stepResult == .cancelled {
                (stepResult, pending) = TableComposer.step(TableComposer.latin, pending: [], keysym: event.keyval)
                if stepResult == .none {
                    let typesCharacter = event.character.map { $0.value >= 0x20 && $0.value != 0x7F } ?? false
                    effective = typesCharacter ? [] : [event]
                }
            }
            modelComposing = pending
            switch stepResult {
            case .composing, .cancelled: effective = []
            case .composed(let text): effective = text.unicodeScalars.map { KeyEvent.typing($0) }
            case .none: break
            }
        }
        // Nothing typed yet, or a composed character typed as if the layout had its key.
        guard effective.count == 1, let typed = effective.first else { return [.exact(before, cursor: cursor)] }
        return outcomesOfKey(typed, before: before, cursor: cursor)
    }

    private func outcomesOfKey(_ event: KeyEvent, before: [Unicode.Scalar], cursor: Int) -> [Outcome] {
        let unchanged = Outcome.exact(before, cursor: cursor)
        let inert = session.contentType.isSecret || !session.capabilities.contains(.preedit)
        let plain = plainOutcome(event, before: before, cursor: cursor)
        if inert { return [plain] }
        let panel = session.correctionPanelIsOpen
        let table = panel ? nil : client.table
        let flags = session.corrections.flags
        if event.isShortcut {
            if event.modifiers.intersection(.shortcut) == [.control, .alt] {
                // The engine's own bindings: apply a fix, open the panel, keep a word, off the record.
                return [unchanged, .fix(flags)]
            }
            return [plain]
        }
        var outcomes: [Outcome] = [plain]
        switch event.keyval {
        case Keysym.space:
            if pendingPreedit { outcomes.append(unchanged) }
            if let table, table.cursorVisible {
                outcomes += candidateOutcomes(table, index: table.cursor, before: before, cursor: cursor, then: " ")
            }
            if session.settings.autocorrect != .off, let typed = typedPreedit {
                outcomes.append(.autocorrection(typed: typed))
            }
            if panel { outcomes += [unchanged, .fix(flags)] }
        case Keysym.returnKey, Keysym.keypadEnter:
            outcomes += pendingSpaceVariants(event, before: before, cursor: cursor)
            if let table, table.cursorVisible {
                outcomes += candidateOutcomes(
                    table, index: table.cursor, before: before, cursor: cursor, then: "", pending: false
                )
                .map { outcome in
                    guard case .exact(var text, let position?) = outcome else { return outcome }
                    text.insert("\n", at: position)
                    return .exact(text, cursor: position + 1)
                }
            }
            if panel { outcomes += [unchanged, .fix(flags)] }
        case Keysym.backSpace:
            if let shown = shownAutocorrection, let preedit = client.preedit,
                Array(preedit.text.unicodeScalars) == shown.shown + [" "]
            {
                var text = before
                let start = cursor - shown.shown.count - 1
                if start >= 0 {
                    text.replaceSubrange(start..<cursor, with: shown.typed + [" "])
                    outcomes.append(.exact(text, cursor: start + shown.typed.count + 1))
                }
            }
        case Keysym.tab, Keysym.isoLeftTab, Keysym.up, Keysym.down, Keysym.pageUp, Keysym.pageDown:
            if client.table != nil || panel { outcomes.append(unchanged) }
        case Keysym.f1...Keysym.f9:
            if let table {
                outcomes += candidateOutcomes(
                    table, row: Int(event.keyval - Keysym.f1), before: before, cursor: cursor, then: " ")
            }
            if panel { outcomes += [.fix(flags)] }
        default:
            if let character = event.character {
                if session.settings.selectionKeys == .digits, let table, ("1"..."9").contains(character) {
                    outcomes += candidateOutcomes(
                        table, row: Int(character.value - 0x31), before: before, cursor: cursor, then: " ")
                }
                outcomes += pendingSpaceVariants(event, before: before, cursor: cursor)
            }
        }
        return outcomes
    }

    /// Closing punctuation, which attaches to the word before it.
    private static let attachesToPrevious = Set(",.;:!?)]}\u{2026}\u{201D}%".unicodeScalars)

    /// Whether the preedit is a pending space (after a candidate or an autocorrection).
    private var pendingPreedit: Bool {
        guard let preedit = client.preedit else { return false }
        return preedit.underlined < preedit.text.unicodeScalars.count && preedit.text.unicodeScalars.last == " "
    }

    /// The word being typed, when the preedit is exactly that word.
    private var typedPreedit: [Unicode.Scalar]? {
        guard let preedit = client.preedit, preedit.underlined > 0,
            preedit.underlined == preedit.text.unicodeScalars.count
        else { return nil }
        return Array(preedit.text.unicodeScalars)
    }

    /// Closing punctuation and Return drop a pending space (`word,` never `word ,`).
    private func pendingSpaceVariants(_ event: KeyEvent, before: [Unicode.Scalar], cursor: Int) -> [Outcome] {
        guard pendingPreedit, cursor > 0, before[cursor - 1] == " " else { return [] }
        var text = before
        text.remove(at: cursor - 1)
        let inserted: Unicode.Scalar
        if event.keyval == Keysym.returnKey || event.keyval == Keysym.keypadEnter {
            inserted = "\n"
        } else if let character = event.character, Self.attachesToPrevious.contains(character) {
            inserted = character
        } else {
            return []
        }
        text.insert(inserted, at: cursor - 1)
        return [.exact(text, cursor: cursor)]
    }

    /// The candidate of a labelled row of the page the user sees (selection keys and clicks).
    private func candidateOutcomes(
        _ table: CandidateTable, row: Int, before: [Unicode.Scalar], cursor: Int, then suffix: String
    ) -> [Outcome] {
        let pageSize = max(1, table.pageSize)
        guard row >= 0, row < min(9, pageSize), row < table.labels.count else { return [] }
        return candidateOutcomes(
            table, index: table.cursor / pageSize * pageSize + row, before: before, cursor: cursor, then: suffix)
    }

    /// A candidate replaces the word being typed (if any) and is followed by a space.
    private func candidateOutcomes(
        _ table: CandidateTable, index: Int, before: [Unicode.Scalar], cursor: Int, then suffix: String,
        pending: Bool = true
    ) -> [Outcome] {
        guard index >= 0, index < table.candidates.count else { return [] }
        var word = table.candidates[index]
        if word.hasSuffix(InputSession.correctionMark) {
            word = String(word.dropLast(InputSession.correctionMark.count))
        }
        let typed = typedPreedit ?? []
        var start = cursor - typed.count
        var end = cursor
        if client.preedit == nil, let selection = client.selection {
            // Like any typed text, the committed candidate replaces the selection.
            start = selection.lowerBound
            end = selection.upperBound
        }
        // After a word's start already in the text, only the rest of the candidate (if it does
        // not begin with that start, what was typed).
        let typedText = String(String.UnicodeScalarView(typed))
        let fragment = InputSession.attachedFragment(before: session.knownContext, typed: typedText)
        let completion = InputSession.completion(of: word, after: fragment) ?? typedText
        var text = before
        let inserted = Array((completion + suffix).unicodeScalars)
        text.replaceSubrange(start..<end, with: inserted)
        return [.exact(text, cursor: start + inserted.count)]
    }

    /// The key's effect in an application without an input method.
    private func plainOutcome(_ event: KeyEvent, before: [Unicode.Scalar], cursor: Int) -> Outcome {
        var text = before
        var position = cursor
        let selection = client.preedit == nil ? client.selection : nil
        func deleteSelection() -> Bool {
            guard let selection else { return false }
            text.removeSubrange(selection)
            position = selection.lowerBound
            return true
        }
        if event.isShortcut {
            // Ctrl+A selects (the cursor moves); other chords leave the text.
            return .exact(text, cursor: nil)
        }
        switch event.keyval {
        case Keysym.backSpace:
            if !deleteSelection() {
                let count = SimulatedClient.lastCharacterLength(text[..<position])
                text.removeSubrange((position - count)..<position)
                position -= count
            }
        case Keysym.delete:
            if !deleteSelection() {
                let count = SimulatedClient.firstCharacterLength(text[position...])
                text.removeSubrange(position..<(position + count))
            }
        case Keysym.returnKey, Keysym.keypadEnter, Keysym.tab:
            _ = deleteSelection()
            text.insert(event.keyval == Keysym.tab ? "\t" : "\n", at: position)
            position += 1
        case Keysym.left, Keysym.right, Keysym.home, Keysym.end, Keysym.up, Keysym.down, Keysym.pageUp, Keysym.pageDown,
            Keysym.isoLeftTab:
            return .exact(text, cursor: nil)
        default:
            if let character = event.character, character.value >= 0x20, character.value != 0x7F {
                _ = deleteSelection()
                text.insert(character, at: position)
                position += 1
            }
        }
        return .exact(text, cursor: position)
    }

    /// Whether `after` is `before` with one flagged word replaced by one of its proposals.
    private static func isFix(before: [Unicode.Scalar], after: [Unicode.Scalar], flags: [TrackedFlag]) -> Bool {
        for tracked in flags {
            let word = Array(tracked.flag.word.unicodeScalars)
            guard !word.isEmpty, word.count <= before.count else { continue }
            for replacement in tracked.flag.replacements {
                let new = Array(replacement.unicodeScalars)
                guard after.count == before.count - word.count + new.count else { continue }
                for start in 0...(before.count - word.count)
                where before[start..<(start + word.count)].elementsEqual(word) {
                    if before[..<start].elementsEqual(after[..<start]),
                        after[start..<(start + new.count)].elementsEqual(new),
                        before[(start + word.count)...].elementsEqual(after[(start + new.count)...])
                    {
                        return true
                    }
                }
            }
        }
        return false
    }

    /// The word shown instead of `typed` when `after` is an autocorrection of it.
    private static func autocorrected(
        before: [Unicode.Scalar], cursor: Int, typed: [Unicode.Scalar], after: [Unicode.Scalar]
    ) -> [Unicode.Scalar]? {
        let start = cursor - typed.count
        guard start >= 0, after.count >= before.count - typed.count + 2,
            after[..<start].elementsEqual(before[..<start]),
            after.suffix(before.count - cursor).elementsEqual(before[cursor...])
        else { return nil }
        let middle = Array(after[start..<(after.count - (before.count - cursor))])
        guard middle.last == " " else { return nil }
        let shown = Array(middle.dropLast())
        let word = String(String.UnicodeScalarView(shown))
        guard shown != typed, WordText.words(in: word).count == 1 else { return nil }
        return shown
    }

    // MARK: Other events

    private func click() -> String? {
        let before = client.visible
        let index = Int.random(in: 0..<10, using: &rng)
        note("click candidate row \(index)", kind: "click")
        let panel = session.correctionPanelIsOpen
        var outcomes: [Outcome] = [.exact(before, cursor: client.visibleCursor)]
        if panel {
            outcomes.append(.fix(session.corrections.flags))
        } else if let table = client.table {
            outcomes += candidateOutcomes(table, row: index, before: before, cursor: client.visibleCursor, then: " ")
        }
        let flags = session.corrections.flags
        filter.cancel()
        modelComposing = []
        let result = session.candidateClicked(pageIndex: index)
        client.apply(result.effects)
        if result.needsSuggestions { client.apply(session.refreshSuggestions()) }
        let after = client.visible
        for outcome in outcomes {
            switch outcome {
            case .exact(let text, _): if text == after { return nil }
            case .fix:
                if Self.isFix(before: before, after: after, flags: flags) {
                    if after != before { counts["outcome: fix applied", default: 0] += 1 }
                    return nil
                }
            case .autocorrection: break
            }
        }
        return
            "a click on row \(index) turned \(Self.string(before).debugDescription) into \(Self.string(after).debugDescription)"
    }

    /// A mouse click or drag: the client commits the preedit, resets the engine and moves.
    private func mouse() -> String? {
        let count = client.scalars.count + (client.preedit?.text.unicodeScalars.count ?? 0)
        let cursor = Int.random(in: 0...count, using: &rng)
        let anchor = rng.chance(30) ? Int.random(in: 0...count, using: &rng) : cursor
        note("mouse to \(cursor) anchor \(anchor)", kind: "mouse")
        return unchangedText {
            client.placeCursor(cursor, anchor: anchor)
            filter.cancel()
            modelComposing = []
            client.apply(session.reset())
            reportFloor = step
        }
    }

    private func focusAwayAndBack() -> String? {
        note("focus out and back", kind: "focus")
        return unchangedText {
            client.commitPreedit()
            filter.cancel()
            modelComposing = []
            client.apply(session.focusOut())
            // The same field again: the application reports its type again. A field that has
            // been a password, PIN or PRIVATE field is reported as one (the engine cannot tell a
            // revealed password from prose once focus has left it).
            if fieldHeldSecrets, !session.contentType.isSecret, !session.contentType.isPrivate {
                client.apply(session.setContentType(ContentType(purpose: ContentType.purposePassword)))
            } else if rng.chance(30) {
                client.apply(session.setContentType(session.contentType))
            }
            filter.cancel()
            client.apply(session.focusIn())
            // ibus-daemon sends the field's type again right after focus-in (seen with 1.5.27).
            client.apply(session.setContentType(session.contentType))
            reportFloor = step
        }
    }

    private func newField() {
        client.commitPreedit()
        filter.cancel()
        modelComposing = []
        client.apply(session.focusOut())
        let words = [
            "Hello", "world.", "the", "cat", "teh", "😀", "naïve", "Straße", "e\u{301}", "👨‍👩‍👧", "\n", "adn", "recieve",
            "I",
        ]
        var text: [String] = []
        for _ in 0..<Int.random(in: 0...8, using: &rng) { text.append(rng.pick(words)) }
        client.replaceText(text.joined(separator: " ") + (rng.chance(50) ? " " : ""))
        reportsText = rng.chance(85)
        reportsUTF16 = reportsText && rng.chance(20)
        var capabilities: ClientCapabilities = [.preedit, .auxiliaryText, .lookupTable, .focus]
        if reportsText { capabilities.insert(.surroundingText) }
        if rng.chance(3) { capabilities.remove(.preedit) }
        session.setCapabilities(capabilities)
        let type = rng.chance(75) ? ContentType() : randomContentType()
        client.apply(session.setContentType(type))
        fieldHeldSecrets = type.isSecret || type.isPrivate
        client.apply(session.focusIn())
        client.apply(session.setContentType(type))  // ibus-daemon's re-send after focus-in
        snapshots.removeAll()
        shownAutocorrection = nil
        reportFloor = step
        note("new field \(reportsText ? (reportsUTF16 ? "utf16" : "code points") : "no text")", kind: "field")
    }

    private func randomContentType() -> ContentType {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return ContentType(purpose: ContentType.purposePassword)
        case 1: return ContentType(purpose: ContentType.purposePIN)
        case 2: return ContentType(hints: ContentType.hintPrivate)
        case 3: return ContentType(purpose: 5)  // e-mail
        default: return ContentType()
        }
    }

    private func changeContentType() -> String? {
        let type = randomContentType()
        note("content type purpose \(type.purpose) hints \(type.hints)", kind: "content-type")
        if type.isSecret || type.isPrivate { fieldHeldSecrets = true }
        return unchangedText {
            client.apply(session.setContentType(type))
            reportFloor = step
        }
    }

    private func switchLanguage() -> String? {
        activePredictor = (activePredictor + 1) % predictors.count
        note("language \(packs[activePredictor].language)", kind: "language")
        return unchangedText {
            client.apply(session.switchPredictor(to: predictors[activePredictor]))
            // As the engine's settings reader does once the pack is active.
            var settings = session.settings
            settings.language = packs[activePredictor].language
            session.apply(settings)
        }
    }

    private func changeSettings() -> String? {
        var settings = session.settings
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: settings.autocorrect = rng.pick(AutocorrectMode.allCases)
        case 1: settings.selectionKeys = rng.pick(SelectionKeys.allCases)
        case 2: settings.pageSize = Int.random(in: 1...9, using: &rng)
        case 3: settings.nextWordPredictions.toggle()
        case 4: settings.checkSpelling.toggle()
        case 5: settings.cloudCheck.toggle()
        default: settings.learning = rng.chance(80)
        }
        note(
            "settings autocorrect=\(settings.autocorrect) keys=\(settings.selectionKeys) page=\(settings.pageSize) cloud=\(settings.cloudCheck)",
            kind: "settings")
        return unchangedText { session.apply(settings) }
    }

    private func cloudTimer() -> String? {
        now += Int64.random(in: 0...2500, using: &rng)
        note("cloud timer", kind: "cloud-timer")
        return unchangedText {
            guard let deadline = session.cloudDeadline, deadline <= now else { return }
            let action = session.cloudTimerFired()
            client.apply(action.effects)
            for case .check(let request) in action.messages {
                cloudRequests.append(request)
                if cloudRequests.count > 8 { cloudRequests.removeFirst() }
            }
            _ = session.takePendingCloudMessages()
        }
    }

    private func cloudReply() -> String? {
        guard !cloudRequests.isEmpty || rng.chance(20) else { return nil }
        let line: String
        if cloudRequests.isEmpty || rng.chance(10) {
            line = rng.pick([
                "", "{", "{\"v\":1,\"type\":\"result\",\"id\":-1}", "{\"v\":1,\"type\":\"hello\"}",
                "{\"v\":1,\"type\":\"error\",\"id\":1}",
            ])
        } else {
            // The newest request (still wanted) or an older one (stale), answered with fixes.
            let request = rng.chance(70) ? cloudRequests[cloudRequests.count - 1] : rng.pick(cloudRequests)
            let sentence = Array(request.sentence.unicodeScalars)
            var fixes: [CloudFix] = []
            var verdicts: [CloudVerdict] = []
            let words = WordText.words(in: request.sentence)
            if let word = words.isEmpty ? nil : rng.pick(words) {
                let start = request.sentence.unicodeScalars.distance(
                    from: request.sentence.unicodeScalars.startIndex, to: word.startIndex)
                let length = word.unicodeScalars.count
                if start + length <= sentence.count {
                    fixes.append(
                        CloudFix(
                            start: start, end: start + length, original: String(word),
                            replacement: rng.pick(["the", "and", "cat", "Their", "a lot"])))
                }
            }
            for flag in request.flags where rng.chance(50) {
                verdicts.append(
                    CloudVerdict(start: flag.start, end: flag.end, verdict: rng.chance(50) ? "agree" : "disagree"))
            }
            line = CloudLine.encode(CloudReply(type: "result", id: request.id, verdicts: verdicts, fixes: fixes))
        }
        note("cloud reply", kind: "cloud-reply")
        // Lines the helper's router would refuse never reach the session.
        guard let reply = CloudReply.parse(line) else { return nil }
        return unchangedText { client.apply(session.cloudReplyReceived(reply)) }
    }

    /// Runs a step that must not change the text the user sees.
    private func unchangedText(_ body: () -> Void) -> String? {
        let before = client.visible
        body()
        let after = client.visible
        guard after == before else {
            return
                "the text changed from \(Self.string(before).debugDescription) to \(Self.string(after).debugDescription) on a step that must not edit"
        }
        return nil
    }

    // MARK: Reports and checks

    /// The client reports its text: at once, late, twice or never.
    private func report() -> String? {
        snapshots.append((step, client.scalars, client.cursor, client.anchor))
        if snapshots.count > 6 { snapshots.removeFirst() }
        guard reportsText, session.capabilities.contains(.surroundingText) else { return nil }
        if let waiting = session.waitingFix {
            counts["a fix waits for a report", default: 0] += 1
            // No report in time: the timer that ends the wait fires (or one from an ended wait).
            if rng.chance(30) {
                counts["awaited report timed out", default: 0] += 1
                let serial = waiting.serial - (rng.chance(80) ? 0 : 1)
                return unchangedText { client.apply(session.awaitedReportTimedOut(serial: serial)) }
                    .map { "the awaited report timing out: " + $0 }
            }
        }
        let roll = Int.random(in: 0..<100, using: &rng)
        var deliveries: [(scalars: [Unicode.Scalar], cursor: Int, anchor: Int)] = []
        let current = (client.scalars, client.cursor, client.anchor)
        switch roll {
        case 0..<55: deliveries = [current]
        case 55..<70: deliveries = []
        case 70..<80: deliveries = [current, current]
        default:
            let allowed = snapshots.filter { $0.index >= reportFloor }
            if let late = allowed.isEmpty ? nil : rng.pick(allowed) {
                deliveries = [(late.scalars, late.cursor, late.anchor)]
                reportFloor = late.index
            }
        }
        if !deliveries.isEmpty, roll < 55 || roll >= 70 { reportFloor = max(reportFloor, step) }

        for delivery in deliveries {
            let text = String(String.UnicodeScalarView(delivery.scalars))
            var cursor = delivery.cursor
            var anchor = delivery.anchor
            if reportsUTF16 {
                cursor = String(String.UnicodeScalarView(delivery.scalars[..<cursor])).utf16.count
                anchor = String(String.UnicodeScalarView(delivery.scalars[..<anchor])).utf16.count
            }
            // A fix waiting for the application's report is applied by the report that proves the
            // text; no other report edits.
            let waiting = session.waitingFix != nil
            let flags = session.corrections.flags
            let before = client.visible
            let failure = unchangedText {
                let result = session.setSurroundingText(text: text, cursor: cursor, anchor: anchor)
                client.apply(result.effects)
                if result.needsSuggestions { client.apply(session.refreshSuggestions()) }
            }
            if failure != nil, waiting, Self.isFix(before: before, after: client.visible, flags: flags) {
                counts["outcome: awaited fix applied", default: 0] += 1
                continue
            }
            if let failure { return "reporting the text: " + failure }
        }
        return nil
    }

    private func checkClient() -> String? {
        if let violation = client.violations.first { return violation }
        if let preedit = client.preedit, session.contentType.isSecret {
            return "a preedit \(preedit.text.debugDescription) in a password field"
        }
        return nil
    }

    /// Nothing learned and nothing sent may contain a letter typed only in secret and private fields.
    private func checkPrivacy() -> String? {
        for predictor in predictors {
            for change in predictor.takeLearnedChanges() {
                guard let entry = change.entry else { continue }
                let text = entry.context + " " + entry.key + " " + entry.display
                if text.unicodeScalars.contains(where: { Self.secretLetters.contains($0) }) {
                    return "learned from a password, PIN or PRIVATE field: \(entry)"
                }
            }
        }
        for request in cloudRequests
        where request.sentence.unicodeScalars.contains(where: { Self.secretLetters.contains($0) }) {
            return "sent text of a password, PIN or PRIVATE field to the cloud: \(request.sentence.debugDescription)"
        }
        return nil
    }

    private static func string(_ scalars: [Unicode.Scalar]) -> String { String(String.UnicodeScalarView(scalars)) }

    private static func name(_ event: KeyEvent) -> String {
        var name: String
        switch event.keyval {
        case Keysym.space: name = "Space"
        case Keysym.backSpace: name = "BackSpace"
        case Keysym.returnKey: name = "Return"
        case Keysym.keypadEnter: name = "KP_Enter"
        case Keysym.escape: name = "Escape"
        case Keysym.tab: name = "Tab"
        case Keysym.isoLeftTab: name = "ISO_Left_Tab"
        case Keysym.delete: name = "Delete"
        case Keysym.left: name = "Left"
        case Keysym.right: name = "Right"
        case Keysym.up: name = "Up"
        case Keysym.down: name = "Down"
        case Keysym.home: name = "Home"
        case Keysym.end: name = "End"
        case Keysym.pageUp: name = "Page_Up"
        case Keysym.pageDown: name = "Page_Down"
        case Keysym.f1...Keysym.f9: name = "F\(event.keyval - Keysym.f1 + 1)"
        case DeadKeysym.acute: name = "dead_acute"
        case DeadKeysym.grave: name = "dead_grave"
        case DeadKeysym.circumflex: name = "dead_circumflex"
        case DeadKeysym.tilde: name = "dead_tilde"
        case DeadKeysym.diaeresis: name = "dead_diaeresis"
        case DeadKeysym.multiKey: name = "Multi_key"
        default: name = event.character.map { String($0).debugDescription } ?? String(event.keyval, radix: 16)
        }
        if event.modifiers.contains(.shift) && event.character == nil { name = "Shift+" + name }
        if event.modifiers.contains(.alt) { name = "Alt+" + name }
        if event.modifiers.contains(.control) { name = "Ctrl+" + name }
        return name
    }
}
