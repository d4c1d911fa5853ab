import InklingTestSupport
import Testing

@testable import InklingCore

/// Word boundaries must match the benchmark harness (`typesim.py`): words are the matches of
/// `[^\W_]+(?:['’-][^\W_]+)*` and the partial word is `…['’-]?\Z` at the end of `before`.
@Suite("WordText")
struct WordTextTests {
    // MARK: Partial word

    @Test(
        "partial word: the harness's documented examples and edge cases",
        arguments: [
            ("I don", "I ", "don"),
            ("I don'", "I ", "don'"),
            ("I don\u{2019}", "I ", "don\u{2019}"),
            ("a well-", "a ", "well-"),
            ("Hello, ", "Hello, ", ""),
            ("(Hel", "(", "Hel"),
            ("", "", ""),
            ("Hello.", "Hello.", ""),
            ("foo_bar", "foo_", "bar"),
            ("foo_", "foo_", ""),
            ("abc123", "", "abc123"),
            ("12", "", "12"),
            ("3.14", "3.", "14"),
            ("привет, ми", "привет, ", "ми"),
            ("Привет", "", "Привет"),
            ("I like caf\u{E9}", "I like ", "caf\u{E9}"),
            ("na\u{EF}v", "", "na\u{EF}v"),
            // A combining mark is not a word character (Python's \w has none): "nai" + U+0308 + "ve".
            ("nai\u{308}ve", "nai\u{308}", "ve"),
            ("x--", "x--", ""),
            ("x--y", "x--", "y"),
            ("don't-", "", "don't-"),
            ("well-known-", "", "well-known-"),
            ("rock-'n", "rock-'", "n"),
            ("don''", "don''", ""),
            ("'", "'", ""),
            ("-", "-", ""),
            ("a -b", "a -", "b"),
            ("\u{1F44D}ab", "\u{1F44D}", "ab"),
            ("x\u{B2}", "", "x\u{B2}"),
            ("\u{2BC}a", "", "\u{2BC}a"),
            ("a\u{2010}b", "a\u{2010}", "b"),  // U+2010 HYPHEN is not a joiner
            ("e.g", "e.", "g"),
            ("tab\there", "tab\t", "here"),
        ])
    func partialWordExamples(before: String, context: String, partial: String) {
        let split = WordText.splitPartialWord(before)
        #expect(String(split.context) == context)
        #expect(String(split.partial) == partial)
    }

    /// Expected values computed with the harness's own Python code (`typesim.split_before`,
    /// `typesim.words_of`, Python 3.11 `re`) on seeded random strings over a tricky alphabet:
    /// joiners, underscores, digits, superscripts, Roman numerals, CJK, modifier letters,
    /// combining marks, emoji, U+2010 and tabs.
    static let harnessCases: [(before: String, partial: String, words: [String])] = [
        ("\u{2019}a", "a", ["a"]),
        ("ta .n", "n", ["ta", "n"]),
        ("\u{431}a", "\u{431}a", ["\u{431}a"]),
        ("a,\u{9}", "", ["a"]),
        ("tn1a\u{2010}", "", ["tn1a"]),
        ("\u{2019}ta1\u{431}b\u{9}Z", "Z", ["ta1\u{431}b", "Z"]),
        ("\u{301}\u{E9}t(\u{1F600}", "", ["\u{E9}t"]),
        ("\u{E9}bat", "\u{E9}bat", ["\u{E9}bat"]),
        ("\u{4E94}\u{431}t\u{EF}", "\u{4E94}\u{431}t\u{EF}", ["\u{4E94}\u{431}t\u{EF}"]),
        ("a\u{2BC}Z n", "n", ["a\u{2BC}Z", "n"]),
        (".a", "a", ["a"]),
        ("Zat\u{301}.\u{B2}", "\u{B2}", ["Zat", "\u{B2}"]),
        ("-\u{E9}-t\u{2010}b'nZ", "b'nZ", ["\u{E9}-t", "b'nZ"]),
        ("", "", []),
        ("b\u{E9}a", "b\u{E9}a", ["b\u{E9}a"]),
        ("n \u{1F600}_", "", ["n"]),
        ("( t-_a_", "", ["t", "a"]),
        (" \u{301}\u{B2}1", "\u{B2}1", ["\u{B2}1"]),
        ("\u{2019}\u{4E94}\u{431}\u{301}'\u{431}", "\u{431}", ["\u{4E94}\u{431}", "\u{431}"]),
        ("\u{2010}nb(\u{2BC}\u{416}a", "\u{2BC}\u{416}a", ["nb", "\u{2BC}\u{416}a"]),
        (".\u{431}\u{E9}\u{2019}\u{2010}", "", ["\u{431}\u{E9}"]),
        ("b", "b", ["b"]),
        ("na\u{431}", "na\u{431}", ["na\u{431}"]),
        ("tbtZ-_n\u{2BC}", "n\u{2BC}", ["tbtZ", "n\u{2BC}"]),
        ("  _tn'", "tn'", ["tn"]),
        ("a\u{E9}'\u{431}\u{431}\u{2010}_n\u{216B}", "n\u{216B}", ["a\u{E9}'\u{431}\u{431}", "n\u{216B}"]),
        ("\u{431}1(n\u{EF} Znb", "Znb", ["\u{431}1", "n\u{EF}", "Znb"]),
        ("a\u{1F600}a\u{9}", "", ["a", "a"]),
        ("\u{2019}\u{431}'\u{E9}\u{2019}t", "\u{431}'\u{E9}\u{2019}t", ["\u{431}'\u{E9}\u{2019}t"]),
        ("'_ \u{9}", "", []),
        ("\u{416}t", "\u{416}t", ["\u{416}t"]),
        ("\u{E9}'b-\u{EF}\u{E9}", "\u{E9}'b-\u{EF}\u{E9}", ["\u{E9}'b-\u{EF}\u{E9}"]),
        ("\u{1F600}", "", []),
        ("t\u{E9}b", "t\u{E9}b", ["t\u{E9}b"]),
        ("n\u{1F600}abaa-", "abaa-", ["n", "abaa"]),
        ("\u{2BC}\u{1F600}'\u{1F600}bn ", "", ["\u{2BC}", "bn"]),
        ("\u{EF}b\u{9}t", "t", ["\u{EF}b", "t"]),
        (" 1'_", "", ["1"]),
        ("nanaaZ\u{216B}-a", "nanaaZ\u{216B}-a", ["nanaaZ\u{216B}-a"]),
        ("aa'", "aa'", ["aa"]),
        ("a'-a", "a", ["a", "a"]),
        (" '\u{431}\u{431}t_\u{B2} \u{301}", "", ["\u{431}\u{431}t", "\u{B2}"]),
        ("a(t'\u{2010}aZ", "aZ", ["a", "t", "aZ"]),
        ("n \u{431},-\u{301}", "", ["n", "\u{431}"]),
        ("(a\u{431}\u{431}.\u{216B}\u{416} ", "", ["a\u{431}\u{431}", "\u{216B}\u{416}"]),
        (",\u{E9}\u{301}\u{1F600}\u{4E94} ", "", ["\u{E9}", "\u{4E94}"]),
        ("t\u{2010}b1-\u{2010}\u{E9}n", "\u{E9}n", ["t", "b1", "\u{E9}n"]),
        ("a\u{431}\u{2019}", "a\u{431}\u{2019}", ["a\u{431}"]),
        ("-\u{E9}", "\u{E9}", ["\u{E9}"]),
        ("\u{2019}n\u{2019} a\u{4E94}", "a\u{4E94}", ["n", "a\u{4E94}"]),
        ("1-\u{E9}',\u{E9}\u{431}_\u{431}", "\u{431}", ["1-\u{E9}", "\u{E9}\u{431}", "\u{431}"]),
        ("an'\u{416}\u{2BC}\u{EF}Z\u{301}", "", ["an'\u{416}\u{2BC}\u{EF}Z"]),
        ("n\u{B2}\u{9}", "", ["n\u{B2}"]),
        ("a(", "", ["a"]),
        ("\u{E9}\u{2010}a,\u{E9}\u{301}'-", "", ["\u{E9}", "a", "\u{E9}"]),
        ("\u{301}\u{2019}ta", "ta", ["ta"]),
        ("\u{2019}'(", "", []),
        ("\u{E9}\u{E9}\u{EF}\u{2010}n\u{E9}1\u{E9}", "n\u{E9}1\u{E9}", ["\u{E9}\u{E9}\u{EF}", "n\u{E9}1\u{E9}"]),
        ("\u{2019}1\u{2BC}", "1\u{2BC}", ["1\u{2BC}"]),
        ("\u{E9}a  a", "a", ["\u{E9}a", "a"]),
        ("b_at(\u{E9}_\u{B2}", "\u{B2}", ["b", "at", "\u{E9}", "\u{B2}"]),
        ("\u{216B}\u{9}", "", ["\u{216B}"]),
        ("b\u{2019}", "b\u{2019}", ["b"]),
        ("1\u{416}", "1\u{416}", ["1\u{416}"]),
        (" -- (ab\u{416}", "ab\u{416}", ["ab\u{416}"]),
        ("b\u{B2}1 \u{2010} Z", "Z", ["b\u{B2}1", "Z"]),
        ("\u{431}t", "\u{431}t", ["\u{431}t"]),
        ("\u{2019},1t\u{216B}1ab", "1t\u{216B}1ab", ["1t\u{216B}1ab"]),
        ("Z aaa\u{2BC}\u{E9}Z", "aaa\u{2BC}\u{E9}Z", ["Z", "aaa\u{2BC}\u{E9}Z"]),
        ("\u{2BC} \u{2010}\u{431}a", "\u{431}a", ["\u{2BC}", "\u{431}a"]),
        ("a\u{1F600}a\u{4E94}n", "a\u{4E94}n", ["a", "a\u{4E94}n"]),
        ("a_-n ", "", ["a", "n"]),
        ("_t1", "t1", ["t1"]),
        ("baaaabb", "baaaabb", ["baaaabb"]),
        ("\u{B2}a\u{B2}a\u{416}", "\u{B2}a\u{B2}a\u{416}", ["\u{B2}a\u{B2}a\u{416}"]),
        ("\u{216B}\u{2019}-", "", ["\u{216B}"]),
        ("_\u{EF}nn_", "", ["\u{EF}nn"]),
        ("\u{4E94}\u{431}a\u{E9}\u{301}.\u{9}", "", ["\u{4E94}\u{431}a\u{E9}"]),
        ("-a-", "a-", ["a"]),
        ("\u{301}a-", "a-", ["a"]),
        ("\u{416}\u{E9}n\u{4E94}", "\u{416}\u{E9}n\u{4E94}", ["\u{416}\u{E9}n\u{4E94}"]),
        (" \u{2010}", "", []),
        ("\u{2010}n\u{216B}a'", "n\u{216B}a'", ["n\u{216B}a"]),
        ("\u{416}", "\u{416}", ["\u{416}"]),
        ("Zatn  ", "", ["Zatn"]),
        ("aa\u{9}", "", ["aa"]),
        ("\u{2BC}nnbt", "\u{2BC}nnbt", ["\u{2BC}nnbt"]),
        (" a\u{2019}", "a\u{2019}", ["a"]),
        ("\u{E9}a-n\u{2019}. a", "a", ["\u{E9}a-n", "a"]),
        ("(\u{431}11t\u{2019}", "\u{431}11t\u{2019}", ["\u{431}11t"]),
        ("aa\u{E9}\u{431}", "aa\u{E9}\u{431}", ["aa\u{E9}\u{431}"]),
        ("\u{EF}\u{301}n\u{2019}a\u{9}'", "", ["\u{EF}", "n\u{2019}a"]),
        ("Z,\u{2010}\u{2BC}", "\u{2BC}", ["Z", "\u{2BC}"]),
        ("\u{431}\u{E9}1\u{1F600}\u{E9}'", "\u{E9}'", ["\u{431}\u{E9}1", "\u{E9}"]),
        ("tb", "tb", ["tb"]),
        ("an", "an", ["an"]),
        ("1bt", "1bt", ["1bt"]),
        ("\u{216B}n\u{431}bna,", "", ["\u{216B}n\u{431}bna"]),
        ("aa-\u{1F600}", "", ["aa"]),
        ("\u{9}na", "na", ["na"]),
        (" \u{1F600}.Zbb", "Zbb", ["Zbb"]),
        (".\u{2019}\u{2019}1nb\u{9}", "", ["1nb"]),
        ("\u{2019}\u{4E94}\u{1F600}bn\u{301}nt", "nt", ["\u{4E94}", "bn", "nt"]),
        ("abZ", "abZ", ["abZ"]),
        ("bn , nn", "nn", ["bn", "nn"]),
        ("-\u{2010}_t", "t", ["t"]),
        ("a\u{2019}_a-\u{431}'Z,", "", ["a", "a-\u{431}'Z"]),
        ("Z.a' ", "", ["Z", "a"]),
        ("\u{2019},1.a-n", "a-n", ["1", "a-n"]),
        ("b-n'a\u{E9}\u{431}t", "b-n'a\u{E9}\u{431}t", ["b-n'a\u{E9}\u{431}t"]),
        ("atb\u{301}-\u{216B}", "\u{216B}", ["atb", "\u{216B}"]),
        (" - \u{431}\u{216B}t\u{431}1", "\u{431}\u{216B}t\u{431}1", ["\u{431}\u{216B}t\u{431}1"]),
        ("a\u{431}\u{B2}\u{216B} ", "", ["a\u{431}\u{B2}\u{216B}"]),
        ("t", "t", ["t"]),
        (".n", "n", ["n"]),
        ("a1", "a1", ["a1"]),
        ("a-", "a-", ["a"]),
        ("nt\u{E9}batb", "nt\u{E9}batb", ["nt\u{E9}batb"]),
        ("\u{4E94}b_", "", ["\u{4E94}b"]),
        ("t_\u{216B}a", "\u{216B}a", ["t", "\u{216B}a"]),
        ("a\u{431}a", "a\u{431}a", ["a\u{431}a"]),
        ("n-a\u{2BC}\u{301}", "", ["n-a\u{2BC}"]),
        ("'a,(.\u{B2}", "\u{B2}", ["a", "\u{B2}"]),
        ("baZ\u{E9}\u{E9}Zat", "baZ\u{E9}\u{E9}Zat", ["baZ\u{E9}\u{E9}Zat"]),
        ("\u{216B}'", "\u{216B}'", ["\u{216B}"]),
        ("1\u{2019}-\u{431}\u{431}nat", "\u{431}\u{431}nat", ["1", "\u{431}\u{431}nat"]),
        ("\u{301}_.(", "", []),
        ("n\u{431}.a\u{2019}-.b", "b", ["n\u{431}", "a", "b"]),
        ("bZ ,1", "1", ["bZ", "1"]),
        ("-(a '1 \u{2019}", "", ["a", "1"]),
        ("-\u{4E94}.-\u{2019}\u{216B}", "\u{216B}", ["\u{4E94}", "\u{216B}"]),
        ("\u{E9}a\u{2BC}\u{2010}'1\u{2010}\u{416}a", "\u{416}a", ["\u{E9}a\u{2BC}", "1", "\u{416}a"]),
        ("\u{9}n-_\u{216B}\u{431}\u{E9}", "\u{216B}\u{431}\u{E9}", ["n", "\u{216B}\u{431}\u{E9}"]),
        ("b ", "", ["b"]),
        ("\u{2019}'_-", "", []),
        ("bbZt", "bbZt", ["bbZt"]),
        ("bn.1\u{301}\u{216B}", "\u{216B}", ["bn", "1", "\u{216B}"]),
        ("\u{416}'a't", "\u{416}'a't", ["\u{416}'a't"]),
        ("-n", "n", ["n"]),
        ("nnb\u{2010}\u{EF}Z", "\u{EF}Z", ["nnb", "\u{EF}Z"]),
        ("''", "", []),
        ("-\u{431}", "\u{431}", ["\u{431}"]),
        ("1--\u{4E94}b\u{301}at\u{431}", "at\u{431}", ["1", "\u{4E94}b", "at\u{431}"]),
        ("\u{9}b,", "", ["b"]),
        ("\u{B2}a\u{B2}\u{1F600}a\u{2019}-", "", ["\u{B2}a\u{B2}", "a"]),
        ("n", "n", ["n"]),
        ("b\u{431}", "b\u{431}", ["b\u{431}"]),
        ("\u{4E94}\u{B2}n .\u{416}-", "\u{416}-", ["\u{4E94}\u{B2}n", "\u{416}"]),
        ("\u{2019}\u{9}t\u{2019}n1n", "t\u{2019}n1n", ["t\u{2019}n1n"]),
        ("aaanb\u{E9}a", "aaanb\u{E9}a", ["aaanb\u{E9}a"]),
        ("_-atnbb", "atnbb", ["atnbb"]),
        ("t\u{4E94}t\u{E9}tZa\u{9}\u{216B}", "\u{216B}", ["t\u{4E94}t\u{E9}tZa", "\u{216B}"]),
        ("' ", "", []),
        ("-a\u{4E94}tn_ n", "n", ["a\u{4E94}tn", "n"]),
        ("  \u{4E94}-'ba\u{431}\u{301}", "", ["\u{4E94}", "ba\u{431}"]),
        (",abZ'\u{416}bb", "abZ'\u{416}bb", ["abZ'\u{416}bb"]),
        ("\u{416}bb", "\u{416}bb", ["\u{416}bb"]),
        ("\u{431}\u{431}bt", "\u{431}\u{431}bt", ["\u{431}\u{431}bt"]),
        ("\u{EF}\u{EF}(\u{2010}\u{E9}-aa", "\u{E9}-aa", ["\u{EF}\u{EF}", "\u{E9}-aa"]),
        ("- \u{9}\u{431}a,", "", ["\u{431}a"]),
        ("\u{E9},\u{E9}-\u{1F600}", "", ["\u{E9}", "\u{E9}"]),
        (",-\u{2010}-", "", []),
        ("t'\u{2019}\u{4E94}", "\u{4E94}", ["t", "\u{4E94}"]),
        ("a-\u{216B}\u{2010}a", "a", ["a-\u{216B}", "a"]),
        ("\u{301}at na\u{431}1b", "na\u{431}1b", ["at", "na\u{431}1b"]),
        ("\u{301},b\u{9}aaa\u{9}t", "t", ["b", "aaa", "t"]),
        ("-Z'  t\u{B2}", "t\u{B2}", ["Z", "t\u{B2}"]),
        ("\u{B2}'\u{E9}", "\u{B2}'\u{E9}", ["\u{B2}'\u{E9}"]),
        ("-'n\u{2019}(\u{EF}\u{2019}t", "\u{EF}\u{2019}t", ["n", "\u{EF}\u{2019}t"]),
        ("\u{E9}1\u{216B}bb", "\u{E9}1\u{216B}bb", ["\u{E9}1\u{216B}bb"]),
        ("1't-b", "1't-b", ["1't-b"]),
        ("'(\u{B2}-Z\u{1F600} a\u{B2}", "a\u{B2}", ["\u{B2}-Z", "a\u{B2}"]),
        ("\u{2BC}\u{301}", "", ["\u{2BC}"]),
        ("\u{E9}\u{4E94}ab1\u{EF}\u{431}", "\u{E9}\u{4E94}ab1\u{EF}\u{431}", ["\u{E9}\u{4E94}ab1\u{EF}\u{431}"]),
        ("('t.a'-Z", "Z", ["t", "a", "Z"]),
        ("1 b\u{431}b", "b\u{431}b", ["1", "b\u{431}b"]),
        ("\u{EF}b\u{E9}ntnZ-\u{1F600}", "", ["\u{EF}b\u{E9}ntnZ"]),
        ("-", "", []),
        ("bn", "bn", ["bn"]),
        ("  b\u{2019}_\u{E9}b_", "", ["b", "\u{E9}b"]),
        ("\u{301}\u{9}", "", []),
        (" ", "", []),
        ("a-\u{216B}\u{EF}nn", "a-\u{216B}\u{EF}nn", ["a-\u{216B}\u{EF}nn"]),
        ("n-abta ", "", ["n-abta"]),
        ("at'btt1", "at'btt1", ["at'btt1"]),
        ("1", "1", ["1"]),
        ("\u{301}\u{B2}'", "\u{B2}'", ["\u{B2}"]),
        ("._1a.1n\u{1F600}", "", ["1a", "1n"]),
        ("nnn\u{216B}bana", "nnn\u{216B}bana", ["nnn\u{216B}bana"]),
        ("\u{B2}\u{2BC}n\u{2010}", "", ["\u{B2}\u{2BC}n"]),
        ("1'", "1'", ["1"]),
        ("b-a'1t,\u{E9}\u{1F600}", "", ["b-a'1t", "\u{E9}"]),
        ("\u{4E94}a\u{1F600}(_t", "t", ["\u{4E94}a", "t"]),
        (",\u{431}", "\u{431}", ["\u{431}"]),
        (
            "\u{416}\u{4E94}Zt\u{431}'\u{431}a", "\u{416}\u{4E94}Zt\u{431}'\u{431}a",
            ["\u{416}\u{4E94}Zt\u{431}'\u{431}a"]
        ),
        ("a\u{431} \u{416}\u{216B}", "\u{416}\u{216B}", ["a\u{431}", "\u{416}\u{216B}"]),
        ("a a", "a", ["a", "a"]),
        ("\u{B2}\u{431}aa", "\u{B2}\u{431}aa", ["\u{B2}\u{431}aa"]),
        ("a\u{431}\u{2019}t", "a\u{431}\u{2019}t", ["a\u{431}\u{2019}t"]),
        (" tabn", "tabn", ["tabn"]),
    ]

    @Test("partial word and words(in:) agree with the harness's Python on 200 random strings")
    func matchesHarnessPython() {
        for (before, partial, words) in Self.harnessCases {
            let split = WordText.splitPartialWord(before)
            #expect(String(split.partial) == partial, "before: \(before.debugDescription)")
            #expect(String(split.context) + String(split.partial) == before)
            #expect(WordText.words(in: before).map(String.init) == words, "text: \(before.debugDescription)")
        }
    }

    /// Up to `maxLength` scalars of letters, digits, joiners, separators and a combining mark.
    static func randomText(maxLength: Int, using rng: inout SplitMix64) -> String {
        let alphabet: [Unicode.Scalar] = ["a", "b", "Z", "1", "б", "é", "_", "'", "\u{2019}", "-", " ", ".", "\u{301}"]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maxLength, using: &rng) { scalars.append(alphabet.randomElement(using: &rng)!) }
        return String(scalars)
    }

    @Test("the partial word is the last word plus an optional trailing joiner (seeded random strings)")
    func partialIsLastWord() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<2_000 {
            let text = Self.randomText(maxLength: 12, using: &rng)
            let (context, partial) = WordText.splitPartialWord(text)
            #expect(String(context) + String(partial) == text)
            var core = Substring(partial)
            if let last = core.unicodeScalars.last, WordText.isJoiner(last) {
                core = Substring(String(String.UnicodeScalarView(core.unicodeScalars.dropLast())))
            }
            let words = WordText.words(in: text)
            if partial.isEmpty {
                // No word ends at the end (or right before a single trailing joiner).
                if let last = words.last {
                    let tail = text.unicodeScalars[last.endIndex...]
                    let atEnd = tail.isEmpty || (tail.count == 1 && WordText.isJoiner(tail.first!))
                    #expect(!atEnd, "text \(text.debugDescription): last word \(last) ends at the cursor")
                }
            } else {
                #expect(words.last.map(String.init) == String(core), "text \(text.debugDescription)")
            }
        }
    }

    // MARK: Words

    @Test("lastWord(in:) is the last of words(in:), on seeded random strings and their suffixes")
    func lastWordIsTheLastOfTheWords() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<5_000 {
            let text = Self.randomText(maxLength: 16, using: &rng)
            #expect(WordText.lastWord(in: text).map(String.init) == WordText.words(in: text).last.map(String.init))
            let suffix = text.dropFirst(Int.random(in: 0...3, using: &rng))
            #expect(WordText.lastWord(in: suffix) == WordText.words(in: suffix).last, "\(suffix.debugDescription)")
        }
    }

    @Test func wordsInText() {
        let text =
            "I don't know, well-known rock'n'roll foo_bar 1990s x--y 'quoted' -dash- caf\u{E9} привет-мир e.g. 3.14"
        #expect(
            WordText.words(in: text).map(String.init) == [
                "I", "don't", "know", "well-known", "rock'n'roll", "foo", "bar", "1990s", "x", "y", "quoted",
                "dash", "caf\u{E9}", "привет-мир", "e", "g", "3", "14",
            ])
        #expect(WordText.words(in: "").isEmpty)
        #expect(WordText.words(in: " ,.-'_ ").isEmpty)
        #expect(WordText.words(in: "don\u{2019}t").map(String.init) == ["don\u{2019}t"])
    }

    @Test func wordsOfSubstringAreSlicesOfTheSameString() {
        let text = "say hello world"
        let slice = text.dropFirst(4)
        let words = WordText.words(in: slice)
        #expect(words.map(String.init) == ["hello", "world"])
        #expect(words.first?.startIndex == slice.startIndex)
    }

    @Test func wordScalarsAndJoiners() {
        for scalar in ["a", "Z", "0", "9", "é", "ж", "五", "\u{B2}", "\u{216B}", "\u{2BC}"] as [Unicode.Scalar] {
            #expect(WordText.isWordScalar(scalar), "\(scalar)")
        }
        for scalar in ["_", "'", "-", " ", ".", "\u{301}", "\u{1F600}", "\u{2010}", "\u{A0}", "@"] as [Unicode.Scalar] {
            #expect(!WordText.isWordScalar(scalar), "\(scalar)")
        }
        #expect(WordText.isJoiner("'") && WordText.isJoiner("\u{2019}") && WordText.isJoiner("-"))
        #expect(!WordText.isJoiner("\u{2010}") && !WordText.isJoiner("`") && !WordText.isJoiner("\u{2BC}"))
    }

    // MARK: Sentence start

    @Test(
        "sentence start: empty or after . ! ? as the harness rules, not … (ignoring whitespace, quotes, brackets)",
        arguments: [
            ("", true), ("   ", true), ("Hello. ", true), ("Hello.", true), ("Really? ", true), ("Stop! ", true),
            ("Wait\u{2026} ", false), ("He said \"hi.\" ", true), ("(See above.) ", true),
            ("\u{201C}Go.\u{201D} ", true),
            ("It ended.\n\n", true), ("[Done!] ", true),
            // A line break starts a sentence: the greeting line of a message, a heading, a list item.
            ("Hello,\n\n", true), ("Hi Sam,\n", true), ("Dear Sam,\r\n", true), ("Notes\n  ", true),
            ("one\u{2028}", true), ("one\u{2029}", true), ("- milk\n\"", true), ("one\ttwo ", false),
            ("Hello ", false), ("Hello, ", false), ("Hello; ", false), ("Hello: ", false), ("3.14 ", false),
            ("a-", false), ("\u{1F600} ", false),
        ])
    func sentenceStart(context: String, expected: Bool) {
        #expect(WordText.isSentenceStart(context) == expected)
    }

    @Test(
        "the text between two words ends a sentence at . ! ? or a line break",
        arguments: [
            (" ", false), (", ", false), ("; ", false), ("\u{2026} ", false), ("\t", false), (". ", true),
            ("! ", true), ("? ", true), ("\n", true), (",\r\n", true), (" \u{2028}", true), ("\u{2029}", true),
        ])
    func endsSentence(gap: String, expected: Bool) {
        #expect(WordText.endsSentence(gap) == expected)
    }

    @Test(
        "the text between two words is spaces only without a mark or a line break",
        arguments: [
            ("", true), (" ", true), ("  \t", true), ("\u{00A0}", true), (", ", false), (". ", false),
            ("\n", false), (" \r\n", false), ("\u{2028}", false), (" - ", false), ("\"", false),
        ])
    func isSpaceOnly(gap: String, expected: Bool) {
        #expect(WordText.isSpaceOnly(gap) == expected)
    }

    // MARK: Keys and casing helpers

    @Test func keyFoldsCaseAndTypographicApostrophe() {
        #expect(WordText.key("Don\u{2019}t") == "don't")
        #expect(WordText.key("DON'T") == "don't")
        #expect(WordText.key("Obama") == "obama")
        #expect(WordText.key("ПРИВЕТ") == "привет")
        #expect(WordText.key("Caf\u{C9}") == "caf\u{E9}")
        #expect(WordText.key("well-known") == "well-known")
        #expect(WordText.key("") == "")
        // Only U+2019 folds; other apostrophe-like characters stay.
        #expect(WordText.key("a\u{2BC}b") == "a\u{2BC}b")
    }

    @Test func digitsAllCapsAndCapitals() {
        #expect(WordText.containsDigit("mp3"))
        #expect(WordText.containsDigit("1990s"))
        #expect(WordText.containsDigit("\u{663}"))  // ARABIC-INDIC DIGIT THREE
        #expect(!WordText.containsDigit("hello"))
        #expect(!WordText.containsDigit("x\u{B2}"))  // superscript two is not a decimal digit

        #expect(WordText.isAllCaps("TH"))
        #expect(WordText.isAllCaps("DON'T"))
        #expect(WordText.isAllCaps("ПРИ"))
        #expect(!WordText.isAllCaps("T"))  // one letter is just a capital
        #expect(!WordText.isAllCaps("Th"))
        #expect(!WordText.isAllCaps("I"))
        #expect(!WordText.isAllCaps(""))

        #expect(WordText.startsUppercase("Obama"))
        #expect(WordText.startsUppercase("Über"))
        #expect(!WordText.startsUppercase("obama"))
        #expect(!WordText.startsUppercase(""))

        #expect(WordText.capitalizingFirst("the") == "The")
        #expect(WordText.capitalizingFirst("привет") == "Привет")
        #expect(WordText.capitalizingFirst("\u{E9}t\u{E9}") == "\u{C9}t\u{E9}")
        #expect(WordText.capitalizingFirst("") == "")
        #expect(WordText.capitalizingFirst("I'm") == "I'm")
    }
}

/// The marked-text notation that cursor and session tests use.
@Suite("MarkedText (test support)")
struct MarkedTextTests {
    @Test func cursor() {
        let m = MarkedText("Hello wor|ld")
        #expect(m.text == "Hello world")
        #expect(m.cursor == 9)
        #expect(m.selection == nil)
        #expect(m.before == "Hello wor")
        #expect(m.after == "ld")
        #expect(m.marked == "Hello wor|ld")
    }

    @Test func cursorDefaultsToTheEnd() {
        let m = MarkedText("Hello")
        #expect(m.cursor == 5)
        #expect(m.after == "")
        #expect(m.marked == "Hello")
    }

    @Test func selection() {
        let m = MarkedText("a[bc]d")
        #expect(m.text == "abcd")
        #expect(m.selection == 1..<3)
        #expect(m.cursor == 3)
        #expect(m.selectedText == "bc")
        #expect(m.marked == "a[bc]d")

        let backward = MarkedText("a[|bc]d")
        #expect(backward.cursor == 1)
        #expect(backward.selection == 1..<3)
        #expect(backward.marked == "a[|bc]d")
        #expect(MarkedText("a[bc|]d") == m)
    }

    @Test func offsetsCountUnicodeScalars() {
        // 👍🏽 is two scalars (four UTF-16 units); é here is e + U+0301 (two scalars).
        let m = MarkedText("\u{1F44D}\u{1F3FD}e\u{301}|x")
        #expect(m.cursor == 4)
        #expect(m.utf16Offset(m.cursor) == 6)
        #expect(m.utf8Offset(m.cursor) == 11)
        #expect(m.before == "\u{1F44D}\u{1F3FD}e\u{301}")
        #expect(m.after == "x")
    }

    @Test func escapes() {
        let m = MarkedText(#"a\|b|"#)
        #expect(m.text == "a|b")
        #expect(m.cursor == 3)
        #expect(MarkedText(text: "[x]|", cursor: 3).marked == #"\[x\]|\|"#)
        #expect(MarkedText(#"\[x\]|\|"#) == MarkedText(text: "[x]|", cursor: 3))
    }

    @Test func roundTrip() {
        for marked in ["", "|", "|abc", "ab|c", "[ab]c", "[|ab]c", "a[]b", "x\\\\y|", "\u{1F1EB}\u{1F1F7}|\u{1F1E9}"] {
            let parsed = MarkedText(marked)
            #expect(MarkedText(parsed.marked) == parsed, "\(marked)")
        }
    }

    @Test func malformedMarkup() {
        #expect(throws: MarkedText.ParseError.duplicateCursor) { try MarkedText.parse("a|b|c") }
        #expect(throws: MarkedText.ParseError.unbalancedSelection) { try MarkedText.parse("a[bc") }
        #expect(throws: MarkedText.ParseError.unbalancedSelection) { try MarkedText.parse("ab]c") }
        #expect(throws: MarkedText.ParseError.unbalancedSelection) { try MarkedText.parse("[a][b]") }
        #expect(throws: MarkedText.ParseError.cursorInsideSelection) { try MarkedText.parse("[a|b]") }
        #expect(throws: MarkedText.ParseError.cursorInsideSelection) { try MarkedText.parse("[ab]c|") }
        #expect(throws: MarkedText.ParseError.danglingEscape) { try MarkedText.parse("abc\\") }
    }
}
