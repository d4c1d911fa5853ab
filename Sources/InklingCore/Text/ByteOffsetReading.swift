/// Surrounding text whose offsets count UTF-8 bytes: GNOME Shell 43 hands the byte offsets of
/// Wayland's text-input-v3 to IBus unchanged, so after any non-ASCII character the cursor lies
/// beyond the code-point length (`👍🏽 I saw teh` reports the cursor at 17 of 12 code points).
extension SurroundingText {
    /// Reads offsets as UTF-8 bytes, if they fall on scalar boundaries.
    public static func interpretingUTF8(text: String, cursor: Int, anchor: Int) -> SurroundingText? {
        func scalarOffset(_ bytes: Int) -> Int? {
            guard bytes >= 0, bytes <= text.utf8.count else { return nil }
            let index = text.utf8.index(text.utf8.startIndex, offsetBy: bytes)
            guard let scalarIndex = index.samePosition(in: text.unicodeScalars) else { return nil }
            return text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: scalarIndex)
        }
        guard let cursor = scalarOffset(cursor), let anchor = scalarOffset(anchor) else { return nil }
        return SurroundingText(text: text, cursor: cursor, anchor: anchor)
    }

    /// The byte reading of a report, when it is the only one that fits or the only one that
    /// ends with the text the engine knows is before the cursor (`known`, nil when unknown);
    /// nil when the report reads the same as code points or the evidence does not decide.
    public static func byteOffsetReading(text: String, cursor: Int, anchor: Int, known: String?) -> SurroundingText? {
        guard let asBytes = interpretingUTF8(text: text, cursor: cursor, anchor: anchor) else { return nil }
        let asCodePoints = SurroundingText(text: text, cursor: cursor, anchor: anchor)
        guard asBytes != asCodePoints else { return nil }
        let asUTF16 = interpretingUTF16(text: text, cursor: cursor, anchor: anchor)
        if asCodePoints == nil && asUTF16 == nil { return asBytes }
        let ours = Array((known ?? "").unicodeScalars)
        func agrees(_ reading: SurroundingText?) -> Bool {
            guard let reading, !ours.isEmpty else { return false }
            return reading.before.unicodeScalars.reversed().starts(with: ours.reversed())
        }
        return agrees(asBytes) && !agrees(asCodePoints) && !agrees(asUTF16) ? asBytes : nil
    }
}
