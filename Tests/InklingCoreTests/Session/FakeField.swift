import FoundationEssentials
import InklingCore
import Testing

/// The committed English pack, opened once for all session tests.
enum RealPack {
    static let pack: LanguagePack = {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return try! LanguagePack(path: root.appending(path: "data/packs/en.inkpack").path)
    }()
}

/// A fake application text field that applies session effects the way an IBus client does.
///
/// Commits insert at the cursor; the preedit is shown but not part of the text; keys the engine
/// does not handle reach the field (printable ones insert, BackSpace deletes a character, Return
/// adds a newline, Left moves the cursor); focus-out commits the preedit, as clients do in
/// commit-on-focus-out mode. Optionally it reports its text after every change, like GTK
/// (code points) or like Qt (UTF-16 offsets, wrong for IBus); the LibreOffice modes add the
/// preedit to the report, trim trailing whitespace, skip unchanged reports (as ibus-gtk3 does)
/// and handle a passed-on key before the commit that came with it.
final class FakeField {
    enum Reporting { case none, codePoints, utf16, utf8Bytes }

    let session: InputSession
    private(set) var scalars: [Unicode.Scalar] = []
    private(set) var cursor = 0
    private(set) var preedit: Preedit? = nil
    private(set) var table: CandidateTable? = nil
    private(set) var auxiliary: String? = nil
    private(set) var log: [SessionEffect] = []
    private(set) var predictions = 0
    var reporting: Reporting
    /// Like LibreOffice (and KWrite, after a report without it): the reported text includes the
    /// preedit shown at the cursor.
    var reportsPreedit = false
    /// Like LibreOffice: the reported text leaves out whitespace at its end.
    var trimsTrailingWhitespace = false
    /// An application that handles a key the engine passed on before the engine's commit
    /// that came with it (the two travel separately and may arrive out of order).
    var handlesPassedKeyBeforeCommit = false
    /// Code-point reports go through the entry point the engine's glue uses, which also weighs
    /// reading the offsets as Qt's UTF-16 (emoji before the cursor make both fit).
    var throughOffsetReadings = false
    /// Like ibus-gtk3: a report identical to the previous one is not sent again.
    var skipsUnchangedReports = false
    /// Like Firefox through GNOME Shell under load: no report until `deliverReport()`.
    var holdsReports = false
    private var lastReport: (String, Int)? = nil

    var text: String { String(String.UnicodeScalarView(scalars)) }

    init(
        settings: SessionSettings = SessionSettings(), contentType: ContentType = ContentType(),
        reporting: Reporting = .none, text: String = ""
    ) {
        session = InputSession(predictor: Predictor(pack: RealPack.pack), settings: settings)
        self.reporting = reporting
        if reporting != .none {
            session.setCapabilities([.preedit, .auxiliaryText, .lookupTable, .focus, .surroundingText])
        }
        _ = session.setContentType(contentType)
        apply(session.focusIn())
        scalars = Array(text.unicodeScalars)
        cursor = scalars.count
        report()
    }

    /// Like a Wayland client through GNOME Shell (text-input-v3, mutter 43): one answer's edits
    /// arrive as one batch, applied as "remove the preedit, delete, insert the commit", and only
    /// the last commit and the last deletion of a batch survive.
    var batchesLikeTextInputV3 = false

    func apply(_ effects: [SessionEffect]) {
        log += effects
        if batchesLikeTextInputV3 {
            var deletion: (offset: Int, count: Int)? = nil
            var committed: String? = nil
            for effect in effects {
                switch effect {
                case .commitText(let text): committed = text
                case .deleteSurroundingText(let offset, let count): deletion = (offset, count)
                default: applyOne(effect)
                }
            }
            if let deletion { applyOne(.deleteSurroundingText(offset: deletion.offset, count: deletion.count)) }
            if let committed { insert(committed) }
            return
        }
        for effect in effects { applyOne(effect) }
    }

    private func applyOne(_ effect: SessionEffect) {
        switch effect {
        case .commitText(let committed): insert(committed)
        case .updatePreedit(let value): preedit = value
        case .hidePreedit: preedit = nil
        case .updateLookupTable(let value): table = value
        case .hideLookupTable: table = nil
        case .updateAuxiliaryText(let value): auxiliary = value
        case .hideAuxiliaryText: auxiliary = nil
        case .deleteSurroundingText(let offset, let count):
            let start = cursor + offset
            #expect(start >= 0 && start + count <= scalars.count, "deletion inside the text")
            scalars.removeSubrange(start..<(start + count))
            if cursor > start { cursor = max(start, cursor - count) }
        }
    }

    private func insert(_ string: String) {
        let new = Array(string.unicodeScalars)
        scalars.insert(contentsOf: new, at: cursor)
        cursor += new.count
    }

    /// Sends one key press (and its release) and, like the glue, refreshes suggestions after.
    @discardableResult
    func press(_ event: KeyEvent) -> Bool {
        let result = session.processKey(event)
        applySettings(result.intents)
        let reordered = handlesPassedKeyBeforeCommit && !result.handled
        if !reordered { apply(result.effects) }
        if !result.handled && event.modifiers.intersection(.shortcut).isEmpty {
            switch event.keyval {
            case Keysym.backSpace:
                // Applications delete one user-perceived character.
                let before = String(String.UnicodeScalarView(scalars[..<cursor]))
                if let last = before.last {
                    let count = String(last).unicodeScalars.count
                    scalars.removeSubrange((cursor - count)..<cursor)
                    cursor -= count
                }
            case Keysym.returnKey: insert("\n")
            case Keysym.left: if cursor > 0 { cursor -= 1 }
            case Keysym.home: cursor = 0
            default:
                if let character = event.character { insert(String(character)) }
            }
        }
        if reordered { apply(result.effects) }
        if result.needsSuggestions { refresh() }
        report()
        var release = event
        release.modifiers.insert(.release)
        #expect(session.processKey(release).handled == false, "releases always reach the application")
        return result.handled
    }

    /// Like the engine's settings reader: what a key asked for is applied to the session.
    func applySettings(_ intents: [SessionIntent]) {
        guard !intents.isEmpty else { return }
        session.apply(session.settings.applying(intents))
    }

    func refresh() {
        let effects = session.refreshSuggestions()
        if effects.contains(where: { if case .updateLookupTable = $0 { return true } else { return false } }) {
            predictions += 1
        }
        apply(effects)
    }

    /// Sends the report a held-back client sends late (`holdsReports`).
    func deliverReport() {
        let held = holdsReports
        holdsReports = false
        report()
        holdsReports = held
    }

    /// Reports the text around the cursor, as the client does after changes.
    func report() {
        guard !holdsReports else { return }
        switch reporting {
        case .none: return
        case .codePoints:
            var shown = scalars
            var shownCursor = cursor
            if reportsPreedit, let preedit {
                shown.insert(contentsOf: Array(preedit.text.unicodeScalars), at: cursor)
                shownCursor += preedit.text.unicodeScalars.count
            }
            if trimsTrailingWhitespace {
                while let last = shown.last, last.properties.isWhitespace { shown.removeLast() }
                shownCursor = min(shownCursor, shown.count)
            }
            let reported = String(String.UnicodeScalarView(shown))
            if skipsUnchangedReports, let last = lastReport, last == (reported, shownCursor) { return }
            lastReport = (reported, shownCursor)
            let result =
                throughOffsetReadings
                ? session.setSurroundingText(text: reported, cursor: shownCursor, anchor: shownCursor)
                : session.setSurroundingText(SurroundingText(text: reported, cursor: shownCursor, anchor: shownCursor))
            apply(result.effects)
            if result.needsSuggestions { refresh() }
        case .utf8Bytes:
            // GNOME Shell 43 on Wayland: text-input-v3's byte offsets, passed on unchanged.
            let byteCursor = String(String.UnicodeScalarView(scalars[..<cursor])).utf8.count
            let result = session.setSurroundingText(text: text, cursor: byteCursor, anchor: byteCursor)
            apply(result.effects)
            if result.needsSuggestions { refresh() }
        case .utf16:
            let utf16Cursor = String(String.UnicodeScalarView(scalars[..<cursor])).utf16.count
            // Through the entry point the engine uses, which tells the units apart where it can.
            let result = session.setSurroundingText(text: text, cursor: utf16Cursor, anchor: utf16Cursor)
            apply(result.effects)
            // KWrite (Qt 5) reports each change twice: the text, then the text with the preedit
            // at the cursor (the engine's event trace, 2026-12-03).
            if reportsPreedit, let preedit {
                var shown = scalars
                shown.insert(contentsOf: Array(preedit.text.unicodeScalars), at: cursor)
                let shownText = String(String.UnicodeScalarView(shown))
                let shownCursor = utf16Cursor + preedit.text.utf16.count
                apply(session.setSurroundingText(text: shownText, cursor: shownCursor, anchor: shownCursor).effects)
            }
        }
    }

    /// A key press that reaches the engine but that the application then loses (LibreOffice
    /// under load), with any text the engine committed for it; other effects apply.
    func pressLost(_ event: KeyEvent) {
        let result = session.processKey(event)
        applySettings(result.intents)
        apply(result.effects.filter { if case .commitText = $0 { false } else { true } })
        if result.needsSuggestions { refresh() }
        report()
    }

    /// The user edits the text directly (mouse, another input path): the client reports it.
    func edit(_ newText: String, cursorAt newCursor: Int? = nil) {
        scalars = Array(newText.unicodeScalars)
        cursor = newCursor ?? scalars.count
        report()
    }

    /// Types each character of a string as its own key press (space as the Space key).
    func type(_ string: String) {
        for scalar in string.unicodeScalars {
            press(scalar == " " ? .key(Keysym.space) : .typing(scalar))
        }
    }

    func key(_ keyval: UInt32, _ modifiers: KeyModifiers = []) { press(.key(keyval, modifiers: modifiers)) }

    /// What the user sees in the field: text with the preedit at the cursor.
    var visible: String {
        var shown = scalars
        shown.insert(contentsOf: Array((preedit?.text ?? "").unicodeScalars), at: cursor)
        return String(String.UnicodeScalarView(shown))
    }

    /// Candidates on the current page.
    var pageCandidates: [String] {
        guard let table else { return [] }
        let start = (table.cursor / table.pageSize) * table.pageSize
        return Array(table.candidates[start..<min(table.candidates.count, start + table.pageSize)])
    }

    /// Focus leaves: the client commits the preedit itself, then the engine hears of it.
    func focusOut() {
        if let preedit { insert(preedit.text) }
        preedit = nil
        apply(session.focusOut())
    }

    /// Focus leaves and the preedit is lost, as in a Qt window that is deactivated: Qt's IBus
    /// plugin drops the daemon's commit of the preedit once its window has no focus object.
    func focusOutLosingPreedit() {
        preedit = nil
        apply(session.focusOut())
    }

    /// The client reports its text (what a real client echoes after a commit).
    func echoSurroundingText() -> (effects: [SessionEffect], needsSuggestions: Bool) {
        session.setSurroundingText(SurroundingText(text: text, cursor: cursor, anchor: cursor))
    }
}

/// Parses marked text: `|` marks the cursor; returns the text and the cursor in code points.
func marked(_ source: String) -> (text: String, cursor: Int) {
    var text = String.UnicodeScalarView()
    var cursor = 0
    for scalar in source.unicodeScalars {
        if scalar == "|" { cursor = text.count } else { text.append(scalar) }
    }
    return (String(text), cursor)
}
