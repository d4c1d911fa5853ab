import InklingCore

extension SplitMix64 {
    /// True with probability `percent` / 100.
    public mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    /// A uniformly chosen element (the collection must not be empty).
    public mutating func pick<C: Collection>(_ items: C) -> C.Element {
        items[items.index(items.startIndex, offsetBy: Int.random(in: 0..<items.count, using: &self))]
    }
}

/// X keysyms of dead keys and Compose used by the simulated keyboards (X11 keysymdef.h).
public enum DeadKeysym {
    public static let grave: UInt32 = 0xFE50
    public static let acute: UInt32 = 0xFE51
    public static let circumflex: UInt32 = 0xFE52
    public static let tilde: UInt32 = 0xFE53
    public static let diaeresis: UInt32 = 0xFE57
    public static let multiKey: UInt32 = 0xFF20
}

/// A table-driven stand-in for libxkbcommon's Compose state machine (the same transitions).
public final class TableComposer: KeysymComposer {
    /// Sequences of keysyms and the text each composes.
    public let sequences: [[UInt32]: String]
    private var pending: [UInt32] = []

    /// A composer over `sequences`.
    public init(_ sequences: [[UInt32]: String]) { self.sequences = sequences }

    public func feed(_ keysym: UInt32) -> ComposeStep {
        let (step, next) = Self.step(sequences, pending: pending, keysym: keysym)
        pending = next
        return step
    }

    public func reset() { pending = [] }

    /// One transition: where `pending` + `keysym` stands and what is pending afterwards.
    public static func step(_ sequences: [[UInt32]: String], pending: [UInt32], keysym: UInt32) -> (
        ComposeStep, [UInt32]
    ) {
        let candidate = pending + [keysym]
        if let text = sequences[candidate] { return (.composed(text), []) }
        if sequences.keys.contains(where: {
            $0.count > candidate.count && Array($0.prefix(candidate.count)) == candidate
        }) {
            return (.composing, candidate)
        }
        return (pending.isEmpty ? .none : .cancelled, [])
    }

    /// Dead keys and Compose sequences of the Latin layouts the packs are for.
    public static let latin: [[UInt32]: String] = [
        [DeadKeysym.acute, 0x65]: "é", [DeadKeysym.acute, 0x45]: "É", [DeadKeysym.acute, 0x61]: "á",
        [DeadKeysym.acute, 0x20]: "'", [DeadKeysym.grave, 0x61]: "à", [DeadKeysym.grave, 0x65]: "è",
        [DeadKeysym.circumflex, 0x6F]: "ô", [DeadKeysym.diaeresis, 0x69]: "ï", [DeadKeysym.diaeresis, 0x75]: "ü",
        [DeadKeysym.tilde, 0x6E]: "ñ", [DeadKeysym.tilde, 0x20]: "~",
        [DeadKeysym.multiKey, 0x73, 0x73]: "ß", [DeadKeysym.multiKey, 0x3F, 0x3F]: "¿",
        [DeadKeysym.multiKey, 0x6F, 0x65]: "œ", [DeadKeysym.multiKey, 0x3C, 0x3C]: "«",
    ]
}

/// An application's text field as an IBus client drives it: it holds the real text, applies the
/// engine's effects, handles the keys the engine passes on, and reports its text.
///
/// The preedit is shown at the cursor and is not part of the text; the client commits it itself
/// on focus-out and reset (commit-on-focus-out mode). A selection is replaced by committed text
/// and by a preedit that starts, as GTK's text widgets do.
public final class SimulatedClient {
    /// The text, in Unicode scalars.
    public private(set) var scalars: [Unicode.Scalar]
    /// The cursor (the insertion point), in scalars.
    public private(set) var cursor: Int
    /// The other end of the selection (equal to `cursor` without one).
    public private(set) var anchor: Int
    public private(set) var preedit: Preedit? = nil
    public private(set) var table: CandidateTable? = nil
    public private(set) var auxiliary: String? = nil
    /// Effects the client could not apply (a deletion outside its text): always an engine bug.
    public private(set) var violations: [String] = []

    /// A field holding `text` with the cursor at its end.
    public init(text: String = "") {
        scalars = Array(text.unicodeScalars)
        cursor = scalars.count
        anchor = cursor
    }

    /// The text as a string.
    public var text: String { String(String.UnicodeScalarView(scalars)) }

    /// What the user sees: the text with the preedit at the cursor.
    public var visible: [Unicode.Scalar] {
        var shown = scalars
        shown.insert(contentsOf: (preedit?.text ?? "").unicodeScalars, at: cursor)
        return shown
    }

    /// Where the user sees the cursor in `visible`.
    public var visibleCursor: Int { cursor + (preedit?.cursor ?? 0) }

    /// The selected range, if any.
    public var selection: Range<Int>? { cursor == anchor ? nil : min(cursor, anchor)..<max(cursor, anchor) }

    /// Applies the engine's effects in order.
    public func apply(_ effects: [SessionEffect]) {
        for effect in effects {
            switch effect {
            case .commitText(let committed):
                deleteSelection()
                insert(committed)
            case .updatePreedit(let value):
                if !value.text.isEmpty { deleteSelection() }
                if value.cursor < 0 || value.cursor > value.text.unicodeScalars.count || value.underlined < 0
                    || value.underlined > value.text.unicodeScalars.count
                {
                    violations.append("preedit offsets outside its text: \(value)")
                }
                preedit = value.text.isEmpty ? nil : value
            case .hidePreedit: preedit = nil
            case .updateLookupTable(let value): table = value
            case .hideLookupTable: table = nil
            case .updateAuxiliaryText(let value): auxiliary = value
            case .hideAuxiliaryText: auxiliary = nil
            case .deleteSurroundingText(let offset, let count):
                let start = cursor + offset
                guard count >= 0, start >= 0, start + count <= scalars.count else {
                    violations.append(
                        "deletion outside the text: offset \(offset), count \(count), cursor \(cursor) of \(scalars.count)"
                    )
                    continue
                }
                scalars.removeSubrange(start..<(start + count))
                cursor = cursor > start ? max(start, cursor - count) : cursor
                anchor = anchor > start ? max(start, anchor - count) : anchor
            }
        }
    }

    /// What the application does with a key the engine did not handle.
    public func applicationKey(_ event: KeyEvent) {
        if event.isRelease || Keysym.isModifierOnly(event.keyval) { return }
        let extend = event.modifiers.contains(.shift)
        if event.isShortcut {
            // Ctrl+A selects everything; other chords do not edit in this simulated application.
            if event.modifiers.intersection(.shortcut) == .control, event.keyval == 0x61 || event.keyval == 0x41 {
                anchor = 0
                cursor = scalars.count
            }
            return
        }
        switch event.keyval {
        case Keysym.backSpace:
            if deleteSelection() { return }
            let count = Self.lastCharacterLength(scalars[..<cursor])
            scalars.removeSubrange((cursor - count)..<cursor)
            cursor -= count
            anchor = cursor
        case Keysym.delete:
            if deleteSelection() { return }
            let count = Self.firstCharacterLength(scalars[cursor...])
            scalars.removeSubrange(cursor..<(cursor + count))
        case Keysym.returnKey, Keysym.keypadEnter:
            deleteSelection()
            insert("\n")
        case Keysym.tab:
            deleteSelection()
            insert("\t")
        case Keysym.left: move(to: selection.map { extend ? cursor - 1 : $0.lowerBound } ?? cursor - 1, extend: extend)
        case Keysym.right: move(to: selection.map { extend ? cursor + 1 : $0.upperBound } ?? cursor + 1, extend: extend)
        case Keysym.home, Keysym.up, Keysym.pageUp, Keysym.isoLeftTab: move(to: 0, extend: extend)
        case Keysym.end, Keysym.down, Keysym.pageDown: move(to: scalars.count, extend: extend)
        default:
            if let character = event.character, character.value >= 0x20, character.value != 0x7F {
                deleteSelection()
                insert(String(character))
            }
        }
    }

    /// The client commits its preedit itself (focus-out, reset: commit-on-focus-out mode).
    public func commitPreedit() {
        if let preedit { insert(preedit.text) }
        preedit = nil
    }

    /// The user clicks or drags with the mouse: the client commits the preedit, then moves.
    public func placeCursor(_ newCursor: Int, anchor newAnchor: Int) {
        commitPreedit()
        cursor = max(0, min(scalars.count, newCursor))
        anchor = max(0, min(scalars.count, newAnchor))
    }

    /// Replaces the whole text (another document in the same field, or a new field).
    public func replaceText(_ newText: String) {
        scalars = Array(newText.unicodeScalars)
        cursor = scalars.count
        anchor = cursor
        preedit = nil
        table = nil
        auxiliary = nil
    }

    /// The text and offsets as the client reports them (code points, or UTF-16 as Qt does).
    public func report(utf16: Bool = false) -> (text: String, cursor: Int, anchor: Int) {
        guard utf16 else { return (text, cursor, anchor) }
        func units(_ offset: Int) -> Int { String(String.UnicodeScalarView(scalars[..<offset])).utf16.count }
        return (text, units(cursor), units(anchor))
    }

    private func move(to position: Int, extend: Bool) {
        cursor = max(0, min(scalars.count, position))
        if !extend { anchor = cursor }
    }

    private func insert(_ string: String) {
        let new = Array(string.unicodeScalars)
        scalars.insert(contentsOf: new, at: cursor)
        cursor += new.count
        anchor = cursor
    }

    @discardableResult
    private func deleteSelection() -> Bool {
        guard let range = selection else { return false }
        scalars.removeSubrange(range)
        cursor = range.lowerBound
        anchor = cursor
        return true
    }

    /// Scalars of the last user-perceived character (what applications delete with BackSpace).
    public static func lastCharacterLength(_ scalars: ArraySlice<Unicode.Scalar>) -> Int {
        String(String.UnicodeScalarView(scalars)).last.map { $0.unicodeScalars.count } ?? 0
    }

    /// Scalars of the first user-perceived character (what applications delete with Delete).
    public static func firstCharacterLength(_ scalars: ArraySlice<Unicode.Scalar>) -> Int {
        String(String.UnicodeScalarView(scalars)).first.map { $0.unicodeScalars.count } ?? 0
    }
}
