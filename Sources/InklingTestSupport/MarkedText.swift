/// Text with a cursor and an optional selection, written inline for readable cursor tests.
///
/// Markers:
/// - `|` is the cursor: `"Hello wor|ld"` is the text `"Hello world"` with the cursor after `wor`
///   (offset 9).
/// - `[` and `]` enclose a selection: `"a[bc]d"` is `"abcd"` with `bc` (offsets 1..<3) selected.
///   Without a `|`, the cursor is at the selection's end (where IBus clients put it after a
///   forward selection); `"a[|bc]d"` puts it at the selection's start.
/// - A `|` elsewhere than at one end of the selection is an error (clients keep the cursor
///   at one end).
/// - Without any marker the cursor is at the end of the text.
/// - A backslash makes the next character literal: `"a\\|b|"` is `"a|b"` with the cursor at 3.
///
/// Offsets count Unicode scalars (code points), the unit IBus uses for surrounding text and
/// `delete_surrounding_text`; `utf16Offset(_:)` converts for Qt-style clients.
///
/// ```swift
/// let m = MarkedText("I don'|t")
/// m.text      // "I don't"
/// m.cursor    // 6
/// m.before    // "I don'"
/// m.after     // "t"
/// m.marked    // "I don'|t" (renders back)
/// ```
public struct MarkedText: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The plain text, markers removed.
    public var text: String
    /// The cursor, in Unicode scalars from the start of `text`.
    public var cursor: Int
    /// The selected scalars, if any.
    public var selection: Range<Int>?

    /// Why marked text could not be parsed.
    public enum ParseError: Error, Equatable, Sendable {
        case duplicateCursor
        case unbalancedSelection
        case cursorInsideSelection
        case danglingEscape
    }

    /// Plain text with a cursor (and selection) given as scalar offsets.
    public init(text: String, cursor: Int, selection: Range<Int>? = nil) {
        let count = text.unicodeScalars.count
        precondition(cursor >= 0 && cursor <= count, "cursor \(cursor) outside 0...\(count)")
        if let selection { precondition(selection.upperBound <= count, "selection outside the text") }
        self.text = text
        self.cursor = cursor
        self.selection = selection
    }

    /// Parses marked text; a malformed literal is a bug in the test, so it stops the test.
    public init(_ marked: String) {
        do {
            self = try Self.parse(marked)
        } catch {
            preconditionFailure("malformed marked text \(marked.debugDescription): \(error)")
        }
    }

    /// Parses marked text, reporting malformed markup as an error.
    public static func parse(_ marked: String) throws(ParseError) -> MarkedText {
        var scalars = String.UnicodeScalarView()
        var cursor: Int? = nil
        var selectionStart: Int? = nil
        var selection: Range<Int>? = nil
        var escaped = false
        var offset = 0
        for scalar in marked.unicodeScalars {
            if escaped {
                scalars.append(scalar)
                offset += 1
                escaped = false
                continue
            }
            switch scalar {
            case "\\":
                escaped = true
            case "|":
                guard cursor == nil else { throw .duplicateCursor }
                cursor = offset
            case "[":
                guard selectionStart == nil, selection == nil else { throw .unbalancedSelection }
                selectionStart = offset
            case "]":
                guard let start = selectionStart, selection == nil else { throw .unbalancedSelection }
                selection = start..<offset
                selectionStart = nil
            default:
                scalars.append(scalar)
                offset += 1
            }
        }
        guard !escaped else { throw .danglingEscape }
        guard selectionStart == nil else { throw .unbalancedSelection }
        // A client's cursor is always at one end of its selection.
        if let cursor, let selection, cursor != selection.lowerBound, cursor != selection.upperBound {
            throw .cursorInsideSelection
        }
        return MarkedText(
            text: String(scalars), cursor: cursor ?? selection?.upperBound ?? offset, selection: selection)
    }

    /// The text before the cursor (what a predictor sees).
    public var before: String { String(String.UnicodeScalarView(text.unicodeScalars.prefix(cursor))) }

    /// The text after the cursor.
    public var after: String { String(String.UnicodeScalarView(text.unicodeScalars.dropFirst(cursor))) }

    /// The selected text (empty without a selection).
    public var selectedText: String {
        guard let selection else { return "" }
        let scalars = Array(text.unicodeScalars)[selection]
        return String(String.UnicodeScalarView(scalars))
    }

    /// The UTF-16 offset of a scalar offset (Qt clients count UTF-16 code units).
    public func utf16Offset(_ scalarOffset: Int) -> Int {
        text.unicodeScalars.prefix(scalarOffset).reduce(0) { $0 + UTF16.width($1) }
    }

    /// The UTF-8 offset of a scalar offset (some Wayland paths count bytes).
    public func utf8Offset(_ scalarOffset: Int) -> Int {
        text.unicodeScalars.prefix(scalarOffset).reduce(0) { $0 + UTF8.width($1) }
    }

    /// The marked form; parsing it gives back an equal value.
    ///
    /// The cursor marker is omitted when it is implied (at the end of the text without a
    /// selection, or at the end of the selection).
    public var marked: String {
        var out = String.UnicodeScalarView()
        let implied = selection.map { cursor == $0.upperBound } ?? (cursor == text.unicodeScalars.count)
        func markers(at offset: Int) {
            if let selection, !selection.isEmpty, selection.upperBound == offset {
                out.append("]")
            }
            if let selection, selection.lowerBound == offset { out.append("[") }
            if !implied, cursor == offset { out.append("|") }
            if let selection, selection.isEmpty, selection.lowerBound == offset { out.append("]") }
        }
        var offset = 0
        for scalar in text.unicodeScalars {
            markers(at: offset)
            if scalar == "|" || scalar == "[" || scalar == "]" || scalar == "\\" { out.append("\\") }
            out.append(scalar)
            offset += 1
        }
        markers(at: offset)
        return String(out)
    }

    public var description: String { marked }
}
