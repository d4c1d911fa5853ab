import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// The builder's modelling decisions, checked through the packs it writes.
@Suite("PackBuilder")
struct PackBuilderTests {
    static func open(_ bytes: [UInt8]) throws -> LanguagePack { try LanguagePack(data: Data(bytes)) }

    @Test("the frequency list: malformed lines, numbers and multi-word entries are skipped")
    func frequencyListFiltering() throws {
        let pack = FixturePacks.english
        for rejected in ["new york", "__init__", "-", "bad", "worse", "zero", "lonely", "2020", "mp3"] {
            #expect(pack.id(ofKey: rejected) == nil, "\(rejected)")
        }
        #expect(pack.id(ofKey: "new") != nil)  // listed on its own line
        // The first of two entries with the same key wins ("the" 0.05, not "The" 0.9).
        let the = try #require(pack.id(ofKey: "the"))
        let of = try #require(pack.id(ofKey: "of"))
        #expect(abs(Math.exp(pack.logPrior(the) - pack.logPrior(of)) - 0.05 / 0.028) < 0.03)
    }

    @Test("vocabularySize keeps the most frequent words of the list")
    func vocabularySize() throws {
        let bytes = FixturePacks.build(wordFrequencies: "the\t0.5\nof\t0.3\nand\t0.2\ncat\t0.1\n", corpus: "") {
            $0.vocabularySize = 2
        }
        let pack = try Self.open(bytes)
        #expect((0..<pack.wordCount).map(pack.key) == ["of", "the"])
    }

    @Test("corpus words missing from the list are added from corpusWordMinimumCount occurrences")
    func corpusWords() throws {
        let corpus = """
            the zorblax is here. the zorblax is there.
            a zorblax and a zorblax. the quux is rare. Numbers 1990s 1990s 1990s 1990s
            """
        let bytes = FixturePacks.build(wordFrequencies: "the\t0.5\nis\t0.2\na\t0.2\nand\t0.1\n", corpus: corpus)
        let pack = try Self.open(bytes)
        let zorblax = try #require(pack.id(ofKey: "zorblax"), "seen 4 times")
        #expect(pack.id(ofKey: "quux") == nil)  // seen once
        #expect(pack.id(ofKey: "1990s") == nil)  // numbers are never learned
        #expect(pack.logPrior(zorblax) < pack.logPrior(try #require(pack.id(ofKey: "the"))))

        let strict = try Self.open(
            FixturePacks.build(wordFrequencies: "the\t0.5\n", corpus: corpus) { $0.corpusWordMinimumCount = 5 })
        #expect(strict.id(ofKey: "zorblax") == nil)
    }

    @Test("display case: dominant capitals, I, and hunspell proper nouns")
    func displayChoice() throws {
        var inputs = PackBuilder.Inputs(
            wordFrequencies: "i\t0.3\ni'd\t0.1\nparis\t0.1\napple\t0.1\nmay\t0.1\nnasa\t0.1\nbill\t0.1\n", corpus: "")
        inputs.surfaceForms = "Apple\t10\napple\t40\nMay\t50\nmay\t10\nNASA\t30\nBill\t5\nbill\t2\n"
        inputs.spellings = "Paris\nbill\nmay\n"
        var parameters = PackBuilder.Parameters()
        parameters.characterTableBytes = 1 << 13
        let pack = try Self.open(PackBuilder(inputs: inputs, parameters: parameters).build())
        func display(_ key: String) throws -> String { pack.display(try #require(pack.id(ofKey: key))) }
        #expect(try display("i") == "I")
        #expect(try display("i'd") == "I'd")
        #expect(try display("paris") == "Paris")  // spelled only with a capital
        #expect(try display("apple") == "apple")  // the capital form is the minority
        #expect(try display("nasa") == "NASA")
        // "may" is a lower-case spelling: a capital form must dominate 8:1, and 50:10 does not.
        #expect(try display("may") == "may")
        #expect(try display("bill") == "bill")
        #expect(pack.wordFlags(try #require(pack.id(ofKey: "may"))).contains(.sometimesCapitalized))
        #expect(pack.wordFlags(try #require(pack.id(ofKey: "paris"))).contains(.capitalized))
    }

    @Test(
        "after names in the corpus (three times or more), the majority's case decides whether a word continues a name")
    func wordsAfterNames() throws {
        let words = "we\t0.3\nmet\t0.2\nmike\t0.1\npence\t0.1\ntimes\t0.1\nhouse\t0.1\nsaid\t0.1\nten\t0.1\n"
        let forms = "Mike\t50\nmike\t1\npence\t100\nPence\t2\ntimes\t100\nTimes\t1\nhouse\t100\nHouse\t60\n"
        func flags(_ corpus: String, _ key: String) throws -> WordFlags {
            let pack = try Self.open(FixturePacks.build(wordFrequencies: words, corpus: corpus, surfaceForms: forms))
            return pack.wordFlags(try #require(pack.id(ofKey: key)))
        }
        let pence = "we met Mike Pence. we met Mike Pence. we said Mike Pence. ten pence. ten pence. ten pence."
        #expect(try flags(pence, "pence").contains(.sometimesCapitalized))  // 3 of 3 after `Mike`
        // Twice only: the surface forms decide.
        let twice = "we met Mike Pence. we met Mike Pence. ten pence."
        #expect(try !flags(twice, "pence").contains(.sometimesCapitalized))
        // Sentence starts, marks between and `I` are no name's word.
        let notAfterNames = "Mike. Pence said. Mike, Pence said. Mike; Pence said. I Pence. we met Mike\nPence."
        #expect(try !flags(notAfterNames, "pence").contains(.sometimesCapitalized))
        // The surface forms say `house` is often capitalised, the corpus says not after names.
        #expect(try flags("we met House. ten house.", "house").contains(.sometimesCapitalized))
        #expect(
            try !flags("we met Mike house. we said Mike house. we met Mike house.", "house").contains(
                .sometimesCapitalized))
        #expect(
            try !flags("we met Mike times. we met Mike Times. we met Mike times.", "times").contains(
                .sometimesCapitalized))
        #expect(
            try flags("we met Mike Times. we met Mike Times. we met Mike times.", "times").contains(
                .sometimesCapitalized))
    }

    @Test("external bigrams add successors the corpus lacks")
    func externalBigrams() throws {
        let words = "alpha\t0.3\nbeta\t0.3\ngamma\t0.2\ndelta\t0.2\n"
        let corpus = "alpha gamma. alpha gamma. beta delta."
        let plain = try Self.open(FixturePacks.build(wordFrequencies: words, corpus: corpus))
        var inputs = PackBuilder.Inputs(wordFrequencies: words, corpus: corpus)
        inputs.bigrams = "alpha\tbeta\t1000\nalpha\tnonsense\t5\n"
        var parameters = PackBuilder.Parameters()
        parameters.characterTableBytes = 1 << 13
        let merged = try Self.open(PackBuilder(inputs: inputs, parameters: parameters).build())
        func successors(_ pack: LanguagePack, _ key: String) throws -> [String] {
            pack.bigramSuccessors(of: try #require(pack.id(ofKey: key))).entries.map {
                pack.key(LanguagePack.decodeSuccessor($0).id)
            }
        }
        #expect(try successors(plain, "alpha") == ["gamma"])
        #expect(try Set(successors(merged, "alpha")) == ["beta", "gamma"])
    }

    @Test("sentences split at . ! ? so a sentence's first word follows the start context")
    func sentenceSplitting() throws {
        let words = "one\t0.25\ntwo\t0.25\nthree\t0.25\nfour\t0.25\n"
        let pack = try Self.open(
            FixturePacks.build(wordFrequencies: words, corpus: "One two! Three four? One two. Three"))
        func successors(_ context: Int) -> Set<String> {
            Set(pack.bigramSuccessors(of: context).entries.map { pack.key(LanguagePack.decodeSuccessor($0).id) })
        }
        #expect(successors(pack.sentenceStartID) == ["one", "three"])
        #expect(successors(try #require(pack.id(ofKey: "two"))).isEmpty)
        #expect(successors(try #require(pack.id(ofKey: "one"))) == ["two"])
    }

    @Test("a text starting in lower case is a fragment: its first word does not follow the start context")
    func lowerCaseFragmentsAreNotSentenceStarts() throws {
        let words = "i\t0.2\nthe\t0.2\ndog\t0.2\nbarked\t0.2\nam\t0.2\n"
        // Dictionary usage examples ("the dog barked") outnumber the real sentence starts ("I am").
        let corpus = """
            the dog barked
            the dog barked. I am
            the dog barked! I am. the dog
            I am
            """
        let pack = try Self.open(FixturePacks.build(wordFrequencies: words, corpus: corpus))
        let starts = pack.bigramSuccessors(of: pack.sentenceStartID).entries.map {
            pack.key(LanguagePack.decodeSuccessor($0).id)
        }
        #expect(starts == ["i"])
        // The fragment's own word pairs still count.
        let the = try #require(pack.id(ofKey: "the"))
        #expect(pack.bigramSuccessors(of: the).entries.map { pack.key(LanguagePack.decodeSuccessor($0).id) } == ["dog"])
        // Caseless scripts have no lower-case initial: their sentences keep their start.
        let caseless = try Self.open(
            FixturePacks.build(
                wordFrequencies: "\u{4E00}\t0.5\n\u{4E8C}\t0.5\n", corpus: "\u{4E00} \u{4E8C}. \u{4E8C} \u{4E00}"))
        #expect(caseless.bigramSuccessors(of: caseless.sentenceStartID).entries.count == 2)
    }

    @Test func heldOutDocuments() {
        var parameters = PackBuilder.Parameters()
        parameters.holdOutEvery = 3
        let builder = PackBuilder(
            inputs: PackBuilder.Inputs(wordFrequencies: "", corpus: "d0\nd1\nd2\nd3\nd4\nd5\nd6"),
            parameters: parameters)
        #expect(builder.heldOutDocuments() == ["d0", "d3", "d6"])
        #expect(PackBuilder(inputs: builder.inputs).heldOutDocuments().isEmpty)
    }

    @Test("building is deterministic")
    func deterministic() {
        let again = PackBuilder(inputs: FixturePacks.englishInputs, parameters: FixturePacks.englishParameters).build()
        #expect(again == FixturePacks.englishBytes)
    }

    @Test("progress messages are reported")
    func progress() {
        final class Log: @unchecked Sendable { var lines: [String] = [] }
        let log = Log()
        var builder = PackBuilder(inputs: PackBuilder.Inputs(wordFrequencies: "a\t1\n", corpus: "a a a"))
        builder.parameters.characterTableBytes = 1 << 13
        builder.progress = { log.lines.append($0) }
        _ = builder.build()
        #expect(log.lines.contains { $0.hasPrefix("vocabulary:") })
        #expect(log.lines.contains { $0.hasPrefix("character model:") })
    }

    @Test("a pack with an empty corpus still opens and predicts from the prior")
    func emptyCorpus() throws {
        let pack = try Self.open(FixturePacks.build(wordFrequencies: "the\t0.6\nthey\t0.3\nthen\t0.1\n", corpus: ""))
        #expect(pack.wordCount == 3)
        #expect(Predictor(pack: pack).suggest(before: "th", count: 3) == ["the", "they", "then"])
    }
}
