/// The application's text around the cursor, normalised to Unicode scalars at the boundary.
///
/// IBus counts code points. Qt clients send UTF-16 offsets and some Wayland paths send UTF-8
/// byte offsets; a cursor that lies beyond the text's code-point length proves another unit,
/// and such text is rejected rather than guessed at (fcitx5 normalises the same way).
public struct SurroundingText: Equatable, Sendable {
    /// The text the client reported (it never includes the preedit).
    public let text: String
    /// The cursor, in Unicode scalars from the start of `text`.
    public let cursor: Int
    /// The selection anchor, in Unicode scalars (equal to `cursor` without a selection).
    public let anchor: Int

    /// Validates offsets that claim to be code points; nil when they cannot be.
    public init?(text: String, cursor: Int, anchor: Int) {
        let length = text.unicodeScalars.count
        guard cursor >= 0, anchor >= 0, cursor <= length, anchor <= length else { return nil }
        self.text = text
        self.cursor = cursor
        self.anchor = anchor
    }

    /// Reads offsets as UTF-16 code units (what Qt sends), if they fall on scalar boundaries.
    ///
    /// Only good enough for prediction context: positions proven this way are never used to
    /// edit, because a cursor that fits as code points may still have been meant as UTF-16.
    public static func interpretingUTF16(text: String, cursor: Int, anchor: Int) -> SurroundingText? {
        func scalarOffset(_ units: Int) -> Int? {
            guard units >= 0, units <= text.utf16.count else { return nil }
            let index = text.utf16.index(text.utf16.startIndex, offsetBy: units)
            guard let scalarIndex = index.samePosition(in: text.unicodeScalars) else { return nil }
            return text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: scalarIndex)
        }
        guard let cursor = scalarOffset(cursor), let anchor = scalarOffset(anchor) else { return nil }
        return SurroundingText(text: text, cursor: cursor, anchor: anchor)
    }

    /// Whether part of the text is selected.
    public var hasSelection: Bool { cursor != anchor }

    /// The text before the cursor.
    public var before: Substring {
        let scalars = text.unicodeScalars
        return Substring(scalars[scalars.startIndex..<scalars.index(scalars.startIndex, offsetBy: cursor)])
    }

    /// The text after the cursor.
    public var after: Substring {
        let scalars = text.unicodeScalars
        return Substring(scalars[scalars.index(scalars.startIndex, offsetBy: cursor)...])
    }
}
