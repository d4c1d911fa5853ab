/// Cases a suggestion for the place it will be inserted.
public enum Casing {
    /// The text to show for a dictionary word, given what the user typed of it.
    ///
    /// ALL-CAPS typing gives an all-caps word; a capital the user typed stays; a capital the
    /// dictionary knows (names, `I`) stays; at a sentence start the first letter is upper case;
    /// a typographic apostrophe the user typed is used throughout the word.
    public static func apply(display: String, typed: Substring, sentenceStart: Bool) -> String {
        // Typed letters that change nothing (no capital, joiner or typographic apostrophe: the
        // usual case): the display form as it is, without taking it apart and putting it together.
        if !typed.unicodeScalars.contains(where: { $0.properties.isUppercase || WordText.isJoiner($0) }) {
            return typed.isEmpty && sentenceStart ? WordText.capitalizingFirst(display) : display
        }
        let typedScalars = Array(typed.unicodeScalars)
        let curly = typedScalars.contains("\u{2019}")
        if WordText.isAllCaps(typed) {
            let upper = display.uppercased()
            return curly
                ? String(String.UnicodeScalarView(upper.unicodeScalars.map { $0 == "'" ? "\u{2019}" : $0 })) : upper
        }
        var out = Array(display.unicodeScalars)
        if out.count >= typedScalars.count {
            for (index, scalar) in typedScalars.enumerated()
            where scalar.properties.isUppercase || WordText.isJoiner(scalar) {
                out[index] = scalar
            }
        }
        if curly {
            for index in out.indices where out[index] == "'" { out[index] = "\u{2019}" }
        }
        var text = String(String.UnicodeScalarView(out))
        if typed.isEmpty && sentenceStart { text = WordText.capitalizingFirst(text) }
        return text
    }
}
