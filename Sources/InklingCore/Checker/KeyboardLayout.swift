/// Physical key positions of a keyboard layout, for weighting typos by key distance.
public struct KeyboardLayout: Sendable {
    /// The layout's name (`qwerty`, `qwertz`, `azerty`, `jcuken`).
    public let name: String
    private let positions: [Unicode.Scalar: (row: Double, column: Double)]

    /// Rows of letter keys, top to bottom; each row is shifted right as on a real keyboard.
    init(name: String, rows: [String]) {
        self.name = name
        let stagger = [0.0, 0.25, 0.75, 1.25]
        var positions: [Unicode.Scalar: (Double, Double)] = [:]
        for (rowIndex, row) in rows.enumerated() {
            for (column, scalar) in row.unicodeScalars.enumerated() {
                positions[scalar] = (Double(rowIndex), Double(column) + stagger[min(rowIndex, 3)])
            }
        }
        self.positions = positions
    }

    public static let qwerty = KeyboardLayout(
        name: "qwerty", rows: ["1234567890", "qwertyuiop", "asdfghjkl'", "zxcvbnm"])
    public static let qwertz = KeyboardLayout(
        name: "qwertz", rows: ["1234567890ß", "qwertzuiopü", "asdfghjklöä", "yxcvbnm"])
    public static let azerty = KeyboardLayout(
        name: "azerty", rows: ["1234567890", "azertyuiop", "qsdfghjklmù", "wxcvbn"])
    public static let jcuken = KeyboardLayout(
        name: "jcuken", rows: ["1234567890", "йцукенгшщзхъ", "фывапролджэ", "ячсмитьбю"])

    /// Every layout the typo model knows.
    public static let all = [qwerty, qwertz, azerty, jcuken]

    /// The layout with a given name, or QWERTY.
    public static func named(_ name: String) -> KeyboardLayout {
        all.first { $0.name == name } ?? qwerty
    }

    /// The `keyboard-layout` setting's value that follows the language.
    public static let automatic = "auto"

    /// The layout for `language` under the `keyboard-layout` setting: the layout it names, else
    /// (`auto`, or a name this engine does not know) the language's usual one. The one rule
    /// every session, its checker and its predictor follow.
    public static func chosen(_ setting: String, language: String) -> KeyboardLayout {
        all.first { $0.name == setting } ?? forLanguage(language)
    }

    /// Whether the engine understands a `keyboard-layout` value (a layout's name, or `auto`).
    public static func isSetting(_ value: String) -> Bool {
        value == automatic || all.contains { $0.name == value }
    }

    /// The usual layout for a language.
    public static func forLanguage(_ language: String) -> KeyboardLayout {
        switch language {
        case "de", "pl": return language == "de" ? qwertz : qwerty
        case "fr": return azerty
        case "ru", "uk": return jcuken
        default: return qwerty
        }
    }

    /// Whether two keys touch (same row neighbours or diagonal neighbours).
    public func areAdjacent(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> Bool {
        guard a != b, let p = positions[a], let q = positions[b] else { return false }
        let dr = p.row - q.row
        let dc = p.column - q.column
        return dr * dr + dc * dc < 1.6
    }

    /// The keys touching a key.
    public func neighbours(of scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        positions.keys.filter { areAdjacent(scalar, $0) }.sorted { $0.value < $1.value }
    }
}
