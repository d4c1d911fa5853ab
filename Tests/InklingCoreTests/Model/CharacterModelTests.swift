import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// The character n-gram re-ranker, as built from the fixture corpus.
@Suite("CharacterModel")
struct CharacterModelTests {
    let model = FixturePacks.english.characterModel

    func symbols(_ text: String) -> [UInt8] { model.symbols(text.unicodeScalars) }
    func score(_ text: String, after history: String) -> Float {
        model.logProb(of: symbols(text), after: symbols(history))
    }

    @Test(
        "normalize",
        arguments: [
            ("A", "a"), ("z", "z"), ("7", "0"), ("0", "0"), ("\t", " "), ("\n", " "), ("\r", " "), ("\u{A0}", " "),
            ("\u{2003}", " "), ("\u{2019}", "'"), ("'", "'"), ("Ж", "ж"), ("\u{C9}", "\u{E9}"), ("\u{663}", "0"),
            ("-", "-"), ("\u{1F600}", "\u{1F600}"),
        ] as [(Unicode.Scalar, Unicode.Scalar)])
    func normalize(input: Unicode.Scalar, expected: Unicode.Scalar) {
        #expect(CharacterModel.normalize(input) == expected)
    }

    @Test func symbolsFoldCaseDigitsAndSpaces() {
        #expect(symbols("The  Cat") == symbols("the cat"))
        #expect(symbols("a \t\n b") == symbols("a b"))
        #expect(symbols("12") == symbols("99"))
        #expect(symbols("don\u{2019}t") == symbols("don't"))
        #expect(symbols("\u{1F600}") == [0])  // outside the alphabet
        #expect(symbols(" ") == [model.alphabet[" "]!])
        #expect(model.alphabet[" "] == 1)  // the space is always the first symbol
        #expect(!symbols("привет").contains(0))
    }

    @Test("the model is a distribution: next-symbol probabilities sum to about 1")
    func normalised() {
        let symbolSet = [UInt8(0)] + model.alphabet.values.sorted()
        for history in ["", " ", "the", " the ", "00 ", "president", "q", "zzzz", "привет, ", "xqj"] {
            let h = symbols(history)
            let total = symbolSet.reduce(0.0) { $0 + Math.exp(Double(model.logProb(of: [$1], after: h))) }
            #expect(abs(total - 1) < 0.02, "after \(history.debugDescription): \(total)")
        }
    }

    @Test("log probabilities are never positive and chain over continuations")
    func chainRule() {
        var rng = SplitMix64(seed: 9)
        let symbolSet = [UInt8(0)] + model.alphabet.values.sorted()
        for _ in 0..<300 {
            let history = (0..<Int.random(in: 0...10, using: &rng)).map { _ in symbolSet.randomElement(using: &rng)! }
            let a = (0..<Int.random(in: 1...5, using: &rng)).map { _ in symbolSet.randomElement(using: &rng)! }
            let b = (0..<Int.random(in: 1...5, using: &rng)).map { _ in symbolSet.randomElement(using: &rng)! }
            let whole = model.logProb(of: a + b, after: history)
            #expect(whole <= 0)
            #expect(
                abs(whole - (model.logProb(of: a, after: history) + model.logProb(of: b, after: history + a))) < 1e-3)
            // Only the last order − 1 symbols of the history matter.
            #expect(
                model.logProb(of: a, after: history)
                    == model.logProb(of: a, after: Array(history.suffix(model.order - 1))))
        }
    }

    @Test("text from the corpus scores far above scrambled text")
    func seenBeatsScrambled() {
        #expect(score("the ", after: " ") > score("teh ", after: " ") + 3)
        #expect(score("president ", after: " the ") > score("presdient ", after: " the ") + 3)
        #expect(score("привет ", after: " ") > score("пвирет ", after: " ") + 3)
        #expect(model.logProb(of: [0], after: []) <= -12)  // an unseen character
    }

    @Test("context changes the score: a number makes \"dollars\" likely")
    func contextMatters() {
        #expect(score("dollars ", after: "paid 15 ") > score("dollars ", after: " ") + 2)
        #expect(score("don't ", after: "paid 15 ") < score("don't ", after: " "))
    }

    @Test("a small table prunes rare n-grams but stays at most 75 % full and usable")
    func pruning() throws {
        let bytes = FixturePacks.build(wordFrequencies: "the\t1\n", corpus: EnglishFixture.corpus)  // 1024 slots
        let pack = try LanguagePack(data: Data(bytes))
        let slots = pack.characterModel.slots
        #expect(slots.count == 1024)
        #expect(slots.filter { $0 != 0 }.count <= slots.count * 3 / 4)
        let small = pack.characterModel
        #expect(
            small.logProb(of: small.symbols("the ".unicodeScalars), after: small.symbols(" ".unicodeScalars))
                > small.logProb(of: small.symbols("xqz ".unicodeScalars), after: small.symbols(" ".unicodeScalars)))
        #expect(FixturePacks.english.characterModel.slots.filter { $0 != 0 }.count > slots.filter { $0 != 0 }.count)
    }

    @Test func orderFromBuilderParameters() throws {
        for order in [2, 4, 7] {
            let bytes = FixturePacks.build(wordFrequencies: "the\t1\n", corpus: "the cat sat on the mat") {
                $0.characterOrder = order
            }
            #expect(try LanguagePack(data: Data(bytes)).characterModel.order == order)
        }
    }
}
