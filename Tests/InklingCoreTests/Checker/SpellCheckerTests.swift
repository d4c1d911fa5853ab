import FoundationEssentials
import InklingCore
import InklingTestSupport
import Testing

/// A small pack with the spellings the checker's rules depend on: `te` is only known as `Te`
/// (tellurium), `wide`/`hire`/`snide` are stems whose inflections the pack lacks.
private let checkerPackBytes: [UInt8] = {
    var inputs = PackBuilder.Inputs(
        wordFrequencies: """
            the\t0.05
            and\t0.03
            cat\t0.001
            car\t0.001
            road\t0.001
            is\t0.01
            to\t0.02
            went\t0.001
            was\t0.008
            saw\t0.001
            well\t0.002
            known\t0.001
            well-known\t0.0005
            emails\t0.0004
            wide\t0.0005
            hire\t0.0003
            snide\t0.0001
            te\t0.0000001
            ism\t0.0000001
            """,
        corpus: """
            The cat saw the car and the cat was well known.
            The road is wide and the car is well-known.
            I saw the cat and the car on the road.
            I went to the road and I went to the car.
            """)
    inputs.surfaceForms = "Te\t50\nte\t2\nISM\t40\nism\t10\n"
    inputs.spellings = "the\nand\nto\nwent\ncat\ncar\nroad\nis\nwas\nsaw\nwell\nknown\nwide\nhire\nsnide\nTe\nism\n"
    var parameters = PackBuilder.Parameters()
    parameters.language = "en"
    parameters.characterTableBytes = 1 << 13
    return PackBuilder(inputs: inputs, parameters: parameters).build()
}()

private let checkerPack: LanguagePack = {
    do {
        return try LanguagePack(data: Data(checkerPackBytes))
    } catch {
        fatalError("the checker test pack does not open: \(error)")
    }
}()

private func flag(_ word: String, after before: String = "I saw the ", then after: String = " today") -> TypoFlag? {
    SpellChecker(pack: checkerPack).check(word: Substring(word), before: Substring(before), after: Substring(after))
}

@Suite("SpellChecker: what is flagged")
struct SpellCheckerTests {
    @Test func aSwappedPairIsFlaggedWithTheWordAndWhy() throws {
        let found = try #require(flag("teh", after: "I saw ", then: " cat"))
        #expect(found.replacements.first == "the")
        #expect(found.explanation == "swapped letters: eh")
    }

    @Test func aDroppedLetterInATwoLetterWordIsFlagged() throws {
        // `te` is spelled only as `Te`; typed in lower case it is not that word.
        let found = try #require(flag("te", after: "I saw ", then: " cat"))
        #expect(found.replacements.first == "the")
        #expect(found.explanation == "missing letter: h")
    }

    @Test func aPackFromAnOlderBuilderKeepsEverySpelledWordShielded() throws {
        // Without the `wordFlags` line the pack cannot tell `te` from `ism`: trust the dictionary.
        let bytes = try PackSurgery.editing("META", of: checkerPackBytes) { meta in
            let lines = String(decoding: meta, as: UTF8.self).split(separator: "\n").filter {
                !$0.hasPrefix("wordFlags=")
            }
            meta = Array(lines.joined(separator: "\n").utf8)
        }
        let oldPack = try LanguagePack(data: Data(bytes))
        #expect(!oldPack.marksLowercaseSpellings && checkerPack.marksLowercaseSpellings)
        #expect(SpellChecker(pack: oldPack).check(word: "te", before: "I saw ") == nil)
    }

    @Test func swappedLettersInATwoLetterWordAreFlagged() throws {
        let found = try #require(flag("ot", after: "I went ", then: " the road"))
        #expect(found.replacements.first == "to")
        #expect(found.explanation == "swapped letters: ot")
    }

    @Test func aWordTheDictionarySpellsInLowerCaseIsNeverFlagged() {
        // `ism` is shown as `ISM` (more frequent in the corpus) but spelled in lower case too.
        #expect(flag("ism") == nil)
        #expect(flag("Te", after: "", then: " is an element") == nil, "capitalised as spelled")
    }

    @Test(arguments: ["wider", "hired", "snidely", "cats"])
    func regularInflectionsOfSpelledWordsAreWords(word: String) {
        #expect(flag(word, after: "The road is ") == nil)
    }

    @Test func aMisspelledInflectionIsStillATypo() throws {
        let found = try #require(flag("wideer", after: "The road is "))
        #expect(found.replacements.first == "wide")
    }

    @Test func aTypoInsideAHyphenatedWordFixesTheWholeWord() throws {
        let found = try #require(flag("well-knwn", after: "The car is "))
        #expect(found.word == "well-knwn")
        #expect(found.replacements.first == "well-known")
        #expect(found.explanation == "missing letter: o")
    }

    @Test func aHyphenatedSpellingOfAKnownWordIsNotFlagged() {
        #expect(flag("e-mails", after: "I saw the ") == nil)
    }

    @Test(arguments: [
        ("XFree", "I use ", " daily"), ("iPhone", "I use ", " daily"), ("McKinnee", "Mr ", " said"),
        ("cta2", "I saw ", " here"), ("CTA", "I saw ", " here"), ("teh_cat", "I saw ", " here"),
        ("exmaple", "see http://", ".com/x"), ("teh", "mail ", "@example.org"), ("wrod", "open ~/", "/file"),
        ("fiel", "open ", ".txt"),
    ])
    func identifiersNamesAndAddressesAreNotFlagged(word: String, before: String, after: String) {
        #expect(flag(word, after: before, then: after) == nil)
    }

    @Test func aCapitalisedWordAfterADotWithoutASpaceIsANewSentence() throws {
        // `nation.Teh`: a missing space, not a domain name.
        let found = try #require(flag("Teh", after: "I saw the road.", then: " cat"))
        #expect(found.replacements.first == "The")
        #expect(flag("teh", after: "see www.", then: " now") == nil, "a lower-case word after a dot may be an address")
    }

    @Test func wordsUsedEarlierOrKeptAreExempt() {
        let checker = SpellChecker(pack: checkerPack)
        #expect(checker.check(word: "teh", before: "I saw ", exempt: ["teh"]) == nil)
        #expect(checker.check(word: "well-knwn", before: "I saw ", exempt: ["knwn"]) == nil)
    }
}

@Suite("SpellChecker: keyboard-weighted edits")
struct NearWordsTests {
    @Test func aNeighbouringKeyCostsLessThanADistantOne() {
        let checker = SpellChecker(pack: checkerPack)
        let near = checker.nearWords(Array("cst".unicodeScalars), maxCost: 2).first { checkerPack.key($0.id) == "cat" }
        let far = checker.nearWords(Array("cpt".unicodeScalars), maxCost: 2).first { checkerPack.key($0.id) == "cat" }
        #expect(near != nil && far != nil)
        #expect(near!.cost < far!.cost, "s touches a; p does not")
    }
}

@Suite("Explanations")
struct ExplanationTests {
    @Test(arguments: [
        ("teh", "the", "swapped letters: eh"), ("tge", "the", "neighbouring key: g typed for h"),
        ("tqe", "the", "wrong letter: q for h"), ("th", "the", "missing letter: e"),
        ("thee", "the", "doubled letter: e"), ("thre", "the", "extra letter: r"),
        ("xyz", "the", "unknown word; a similar word is much more likely here"),
    ])
    func describesTheMistake(typed: String, intended: String, explanation: String) {
        #expect(
            SpellChecker.explain(
                typed: Array(typed.unicodeScalars), intended: Array(intended.unicodeScalars), layout: .qwerty)
                == explanation)
    }
}
