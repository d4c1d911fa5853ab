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
/// does not handle reach the field (printable ones insert, BackSpace deletes, Return adds a
/// newline); focus-out commits the preedit, as clients do in commit-on-focus-out mode.
final class FakeField {
    let session: InputSession
    private(set) var text = ""
    private(set) var preedit: Preedit? = nil
    private(set) var table: CandidateTable? = nil
    private(set) var log: [SessionEffect] = []
    private(set) var predictions = 0

    init(settings: SessionSettings = SessionSettings(), contentType: ContentType = ContentType()) {
        session = InputSession(predictor: Predictor(pack: RealPack.pack), settings: settings)
        _ = session.setContentType(contentType)
        apply(session.focusIn())
    }

    func apply(_ effects: [SessionEffect]) {
        log += effects
        for effect in effects {
            switch effect {
            case .commitText(let committed): text += committed
            case .updatePreedit(let value): preedit = value
            case .hidePreedit: preedit = nil
            case .updateLookupTable(let value): table = value
            case .hideLookupTable: table = nil
            case .deleteSurroundingText(let offset, let count):
                var scalars = Array(text.unicodeScalars)
                let start = scalars.count + offset
                scalars.removeSubrange(start..<(start + count))
                text = String(String.UnicodeScalarView(scalars))
            case .updateAuxiliaryText, .hideAuxiliaryText: break
            }
        }
    }

    /// Sends one key press (and its release) and, like the glue, refreshes suggestions after.
    @discardableResult
    func press(_ event: KeyEvent) -> Bool {
        let result = session.processKey(event)
        apply(result.effects)
        if !result.handled {
            switch event.keyval {
            case Keysym.backSpace: if !text.isEmpty { text.removeLast() }
            case Keysym.returnKey: text += "\n"
            default: if let character = event.character, event.modifiers.intersection(.shortcut).isEmpty { text.unicodeScalars.append(character) }
            }
        }
        if result.needsSuggestions { refresh() }
        var release = event
        release.modifiers.insert(.release)
        #expect(session.processKey(release).handled == false, "releases always reach the application")
        return result.handled
    }

    func refresh() {
        let effects = session.refreshSuggestions()
        if effects.contains(where: { if case .updateLookupTable = $0 { return true } else { return false } }) {
            predictions += 1
        }
        apply(effects)
    }

    /// Types each character of a string as its own key press (space as the Space key).
    func type(_ string: String) {
        for scalar in string.unicodeScalars {
            press(scalar == " " ? .key(Keysym.space) : .typing(scalar))
        }
    }

    func key(_ keyval: UInt32, _ modifiers: KeyModifiers = []) { press(.key(keyval, modifiers: modifiers)) }

    /// What the user sees in the field: text plus preedit.
    var visible: String { text + (preedit?.text ?? "") }

    /// Candidates on the current page.
    var pageCandidates: [String] {
        guard let table else { return [] }
        let start = (table.cursor / table.pageSize) * table.pageSize
        return Array(table.candidates[start..<min(table.candidates.count, start + table.pageSize)])
    }

    /// Focus leaves: the client commits the preedit itself, then the engine hears of it.
    func focusOut() {
        if let preedit { text += preedit.text }
        preedit = nil
        apply(session.focusOut())
    }

    /// The client reports its text (what a real client echoes after a commit).
    func echoSurroundingText() -> (effects: [SessionEffect], needsSuggestions: Bool) {
        session.setSurroundingText(SurroundingText(text: text, cursor: text.unicodeScalars.count, anchor: text.unicodeScalars.count))
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
