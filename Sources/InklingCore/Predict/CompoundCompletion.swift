/// Hyphenated compounds completed part by part (issue 17): `state-of-the-a` → `state-of-the-art`,
/// `self-repl` → `self-replication`, also where the dictionary lacks the whole compound.
///
/// The dictionary holds the common compounds whole (`well-known`), and those come first; most
/// compounds in running text are not in it (`brown-bag`, `self-replication`: none of the
/// held-out text's 357 hyphenated words is in the word list). Their parts are ordinary words,
/// and the parts before the hyphen are the best context for the next one, so the last part is
/// predicted as a word after the earlier parts, and the typed head is put back in front.
enum CompoundCompletion {
    /// The part of a partial word before and including its last hyphen, and the part after it;
    /// nil when the word has no inner hyphen (`well-` has one: its head is `well-`).
    static func split(_ partial: Substring) -> (head: Substring, tail: Substring)? {
        guard let hyphen = partial.lastIndex(of: "-"), hyphen > partial.startIndex else { return nil }
        let head = partial[...hyphen]
        // Every part of the head is a word: `--` or `-x-` is punctuation, not a compound.
        let parts = head.dropLast().split(separator: "-", omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty && !WordText.containsDigit($0) }) else { return nil }
        return (head, partial[partial.index(after: hyphen)...])
    }

    /// Whether part completions are worth offering: something typed of the last part, or a head
    /// of two parts or more (`state-of-the-`), whose words predict the next one well. After a
    /// single part and nothing else (`brown-`) the next word is a guess.
    static func applies(head: Substring, tail: Substring) -> Bool {
        !tail.isEmpty || head.dropLast().contains("-")
    }

    /// The text the last part is predicted after: the context, then the head's parts as words.
    static func partContext(context: Substring, head: Substring) -> String {
        String(context) + head.replacingHyphensWithSpaces()
    }
}

extension Substring {
    fileprivate func replacingHyphensWithSpaces() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "-" ? " " : $0 }))
    }
}

extension Predictor {
    /// `result` (the dictionary's completions of the whole partial word), filled up to `count`
    /// with compounds completed part by part when the partial word has an inner hyphen.
    func fillingWithCompoundParts(
        _ result: [Suggestion], context: Substring, partial: Substring, count: Int
    ) -> [Suggestion] {
        guard result.count < count else { return result }
        guard let (head, tail) = CompoundCompletion.split(partial), CompoundCompletion.applies(head: head, tail: tail)
        else { return result }
        var filled = result
        var shown = Set(result.map(\.text))
        let partBefore = CompoundCompletion.partContext(context: context, head: head) + tail
        let parts = suggestions(before: partBefore, count: count)
        // The part before the hyphen is in the context now; repeated, it is no compound (`brown-brown`).
        let lastPart = WordText.key(head.dropLast().split(separator: "-").last ?? "")
        for part in parts where !part.isCorrection && WordText.key(part.text) != lastPart {
            let text = String(head) + part.text
            if text == String(partial) || !shown.insert(text).inserted { continue }
            filled.append(Suggestion(text: text, score: part.score))
            if filled.count == count { break }
        }
        return filled
    }
}
