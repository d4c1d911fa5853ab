/// English inflection and derivation rules, shared by the pack builder (which marks inflections
/// of spelled stems as spelled) and the checker (which accepts inflections the pack lacks).
public enum EnglishInflection {
    /// Whether an English word is a regular inflection or derivation (`-s`, `-ed`, `-ing`, `-ly`, …)
    /// of a word for which `isStem` holds, following English spelling rules closely enough that
    /// common typos do not pass (`wideer`, `sellss`, `andd`, `taxxes` are not inflections).
    public static func isInflection(_ word: String, of isStem: (String) -> Bool) -> Bool {
        for (suffix, replacements) in inflectionRules where word.hasSuffix(suffix) && word.count > suffix.count + 1 {
            let stem = String(word.dropLast(suffix.count))
            for replacement in replacements {
                if replacement.isEmpty && !takesSuffixUnchanged(stem, suffix) { continue }
                let candidate = stem + replacement
                if candidate.count >= 3 && isStem(candidate) { return true }
            }
            // Doubled final consonant after a short vowel: running → run, stopped → stop.
            if doublingSuffixes.contains(suffix), let undoubled = undoubledStem(stem), isStem(undoubled) { return true }
        }
        return false
    }

    private static let inflectionRules: [(suffix: String, replacements: [String])] = [
        ("'s", [""]), ("s'", ["s"]), ("s", [""]), ("es", ["", "e"]), ("ies", ["y"]), ("ied", ["y"]),
        ("ier", ["y"]), ("iest", ["y"]), ("ily", ["y"]), ("ed", ["", "e"]), ("d", [""]), ("ing", ["", "e"]),
        ("er", ["", "e"]), ("ers", ["", "e"]), ("est", ["", "e"]), ("ly", [""]), ("ness", [""]),
        ("ment", [""]), ("ments", [""]), ("able", ["", "e"]), ("less", [""]), ("ful", [""]),
    ]
    private static let doublingSuffixes: Set<String> = ["ed", "ing", "er", "ers", "est", "able"]

    /// Whether `stem + suffix` is how English spells the suffix on that stem.
    private static func takesSuffixUnchanged(_ stem: String, _ suffix: String) -> Bool {
        let sibilant =
            stem.hasSuffix("s") || stem.hasSuffix("x") || stem.hasSuffix("z")
            || stem.hasSuffix("ch") || stem.hasSuffix("sh")
        switch suffix {
        case "s": return !sibilant  // boxes, not boxs; sells, not sellss
        case "es": return sibilant || stem.hasSuffix("o")
        case "d": return stem.hasSuffix("e")  // hired; andd is not and + d
        case "ed", "er", "ers", "est": return !stem.hasSuffix("e")  // wider, not wideer
        case "ing": return !stem.hasSuffix("e") || stem.hasSuffix("ee") || stem.hasSuffix("ye") || stem.hasSuffix("oe")
        default: return true
        }
    }

    /// `runn` → `run`: the stem without a doubled final consonant that follows a single short vowel.
    private static func undoubledStem(_ stem: String) -> String? {
        let letters = Array(stem)
        guard letters.count >= 3, letters[letters.count - 1] == letters[letters.count - 2] else { return nil }
        let vowels: Set<Character> = ["a", "e", "i", "o", "u"]
        let consonant = letters[letters.count - 1]
        guard !vowels.contains(consonant), !"wxyhs".contains(consonant), vowels.contains(letters[letters.count - 3])
        else {
            return nil
        }
        if letters.count >= 4, vowels.contains(letters[letters.count - 4]) { return nil }  // stoop + ped
        return String(letters.dropLast())
    }
}
