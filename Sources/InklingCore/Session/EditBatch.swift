/// Rewrites the effects of one answer so that no text is committed only to be deleted again.
///
/// Wayland's text-input-v3 (GNOME Shell, mutter 43) hands an input method's edits to the
/// application in batches: in one batch the application removes the preedit, deletes around the
/// cursor, then inserts the commit, and mutter keeps only the last commit of a batch. A fix
/// applied while its sentence's last word was still composing went out as "commit the word,
/// delete back to the typo, commit the fix": the word was dropped and the deletion reached three
/// characters too far (`I saw teh cat` became `I sthe cat`). Committing text and then deleting
/// at least as much backward is the same as deleting less without committing it, so the batch
/// keeps one commit after the deletion.
public enum EditBatch {
    /// The same edits of the text, with each commit that a following backward deletion removes
    /// again folded into that deletion. Effects that do not edit the text keep their order.
    public static func coalesced(_ effects: [SessionEffect]) -> [SessionEffect] {
        var result: [SessionEffect] = []
        for effect in effects {
            guard case .deleteSurroundingText(let offset, var count) = effect, offset == -count, count > 0 else {
                result.append(effect)
                continue
            }
            // Fold the commits right before the deletion (only non-text effects between).
            var index = result.count - 1
            while count > 0, index >= 0 {
                switch result[index] {
                case .commitText(let committed):
                    let scalars = Array(committed.unicodeScalars)
                    if count >= scalars.count {
                        result.remove(at: index)
                        count -= scalars.count
                    } else {
                        result[index] = .commitText(String(String.UnicodeScalarView(scalars.dropLast(count))))
                        count = 0
                    }
                case .deleteSurroundingText:
                    index = -1
                    continue
                default:
                    break
                }
                index -= 1
            }
            if count > 0 { result.append(.deleteSurroundingText(offset: -count, count: count)) }
        }
        return result
    }
}
