import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

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

    /// The first word of a message's body after its greeting line: a capital that the line break
    /// explains, checked as at a sentence start, not let through as a name's (the committed pack).
    @Test(
        "a capitalised typo after a line break is checked as a sentence's first word",
        arguments: [("Unfortunatly", "Unfortunately"), ("Recieved", "Received"), ("Jsut", "Just")])
    func aCapitalisedTypoAfterALineBreakIsCheckedAsASentenceStart(typo: String, fix: String) {
        let checker = SpellChecker(pack: RealPack.pack)
        #expect(
            checker.check(word: Substring(typo), before: "Hi Sam,\n\n", after: " for the")?.replacements.first == fix)
        #expect(
            checker.check(word: Substring(typo), before: "Hi Sam, ", after: " for the") == nil, "mid-sentence: a name?")
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

/// The weighted edit distance of `typed` from `intended` over the whole table, with the costs
/// `nearWords` documents (the reference for its pruned, shared-row search).
private func fullTableCost(typed: [Unicode.Scalar], intended: [Unicode.Scalar], layout: KeyboardLayout) -> Float {
    func base(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        SpellChecker.baseLetter(scalar)
    }
    var table = [[Float]](repeating: [Float](repeating: 0, count: typed.count + 1), count: intended.count + 1)
    for j in 0...typed.count { table[0][j] = Float(j) }
    for i in stride(from: 1, through: intended.count, by: 1) {
        let character = intended[i - 1]
        table[i][0] = table[i - 1][0] + 1
        for j in stride(from: 1, through: typed.count, by: 1) {
            let typedCharacter = typed[j - 1]
            let substitutionCost: Float =
                character == typedCharacter
                ? 0
                : base(character) == base(typedCharacter)
                    ? 0.4 : layout.areAdjacent(character, typedCharacter) ? 0.7 : 1.2
            let insertionCost: Float =
                j >= 2 && typed[j - 2] == typedCharacter
                ? 0.5 : layout.areAdjacent(typedCharacter, character) ? 0.8 : 1.0
            var best = min(
                table[i - 1][j - 1] + substitutionCost, table[i - 1][j] + 1.0, table[i][j - 1] + insertionCost)
            if i >= 2, j >= 2, character == typed[j - 2], intended[i - 2] == typedCharacter {
                best = min(best, table[i - 2][j - 2] + 0.6)
            }
            table[i][j] = best
        }
    }
    return table[intended.count][typed.count]
}

@Suite("SpellChecker: the candidate search")
struct NearWordsSearchTests {
    /// The words within the cost and their costs, as the full table gives them for every word of
    /// the pack whose first letter the search allows (the typed first letter, its neighbours, or
    /// the typed second letter).
    func reference(_ typed: [Unicode.Scalar], maxCost: Float, pack: LanguagePack, layout: KeyboardLayout) -> [Int:
        Float]
    {
        var allowedFirst = Set(layout.neighbours(of: typed[0]))
        allowedFirst.insert(typed[0])
        if typed.count > 1 { allowedFirst.insert(typed[1]) }
        var found: [Int: Float] = [:]
        for id in 0..<pack.wordCount {
            let key = Array(pack.key(id).unicodeScalars)
            guard let first = key.first, allowedFirst.contains(first) else { continue }
            let cost = fullTableCost(typed: typed, intended: key, layout: layout)
            if cost <= maxCost { found[id] = cost }
        }
        return found
    }

    @Test("the pruned search finds exactly the words and costs of the full table", arguments: [0, 1, 2])
    func prunedSearchEqualsTheFullTable(layoutIndex: Int) {
        let pack = FixturePacks.english
        let layout = KeyboardLayout.all[layoutIndex]
        let checker = SpellChecker(pack: pack, layout: layout)
        var rng = SplitMix64(seed: 18)
        var typedWords: [[Unicode.Scalar]] = (0..<pack.wordCount).map { Array(pack.key($0).unicodeScalars) }
        // Each word with one random edit too, and strings of letters the fixture's words use.
        let alphabet = Array("etaoinshrdlucmwfgypbvkjxqz'-\u{E9}\u{EF}прив".unicodeScalars)
        for word in typedWords {
            var edited = word
            let index = Int.random(in: 0..<edited.count, using: &rng)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: edited[index] = alphabet.randomElement(using: &rng)!
            case 1: edited.insert(alphabet.randomElement(using: &rng)!, at: index)
            default: if edited.count > 1 { edited.remove(at: index) }
            }
            typedWords.append(edited)
        }
        for _ in 0..<100 {
            typedWords.append(
                (0..<Int.random(in: 1...7, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        }
        for typed in typedWords {
            for maxCost: Float in [1.0, 1.5, 2.0] {
                let found = checker.nearWords(typed, maxCost: maxCost)
                #expect(Set(found.map(\.id)).count == found.count, "each word once")
                let searched = Dictionary(uniqueKeysWithValues: found.map { ($0.id, $0.cost) })
                let expected = reference(typed, maxCost: maxCost, pack: pack, layout: layout)
                #expect(
                    searched == expected,
                    "\(String(String.UnicodeScalarView(typed)).debugDescription) within \(maxCost)")
            }
        }
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

@Suite("SpellChecker: a check in slices")
struct SlicedCheckTests {
    /// The flag of `word` after `before`, the check run `limit` units of work at a time, and how
    /// many slices that took.
    func slicedCheck(_ checker: SpellChecker, word: String, before: String, limit: Int) -> (TypoFlag?, Int) {
        switch checker.startCheck(word: Substring(word), before: Substring(before)) {
        case .finished(let flag): return (flag, 0)
        case .searching(var search):
            var slices = 0
            while !search.isFinished {
                let done = search.advance(work: limit)
                #expect(done >= 1, "every slice moves on")
                slices += 1
            }
            return (search.flag, slices)
        }
    }

    @Test("a check run in slices of any size flags what the whole check flags", arguments: [1, 7, 60, 10_000])
    func slicesGiveTheWholeAnswer(limit: Int) {
        let checker = SpellChecker(pack: RealPack.pack)
        // Typos (a few hyphenated, so that a later part is flagged after an earlier part's
        // search), names, ordinary words, a long word the search walks far for.
        let words = [
            "teh", "adn", "recieve", "tuem", "Brentley", "solution", "disclosure", "well-knwon", "sefl-esteem",
            "reaaly-good", "xhost", "pronounciation", "intellegent", "the", "a", "stupidty", "commander-in-cheif",
        ]
        var sliced = 0
        for word in words {
            let whole = checker.check(word: Substring(word), before: "I think the ")
            let (flag, slices) = slicedCheck(checker, word: word, before: "I think the ", limit: limit)
            #expect(flag == whole, "\(word) in slices of \(limit)")
            if slices > 1 { sliced += 1 }
        }
        if limit <= 60 { #expect(sliced >= 5, "small slices split the searches") }
    }

    @Test("the engine's slice splits the check of a long typo (the integration test types it)")
    func theEngineSliceSplitsALongCheck() {
        let checker = SpellChecker(pack: RealPack.pack)
        let (flag, slices) = slicedCheck(
            checker, word: "pronounciation", before: "the correct ", limit: SpellChecker.searchSliceWork)
        #expect(flag?.replacements.first == "pronunciation")
        #expect(slices > 1)
    }
}
