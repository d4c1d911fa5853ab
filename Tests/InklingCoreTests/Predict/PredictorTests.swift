import FoundationEssentials
import InklingTestSupport
import Testing

@testable import InklingCore

/// Suggestions from the English fixture pack.
@Suite("Predictor")
struct PredictorTests {
    let pack = FixturePacks.english

    func predictor(characterModel: Bool = true) -> Predictor {
        var options = PredictorOptions()
        options.useCharacterModel = characterModel
        return Predictor(pack: pack, options: options)
    }

    func suggest(_ before: String, count: Int = 6) -> [String] {
        predictor().suggest(before: before, count: count)
    }

    /// Checks what every reply must satisfy, whatever the input.
    func checkInvariants(
        _ before: String, _ suggestions: [String], count: Int, corrections: Set<String> = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (context, partial) = WordText.splitPartialWord(before)
        let prefix = WordText.key(partial)
        let documentWords = Set(WordText.words(in: context).map(WordText.key))
        #expect(suggestions.count <= count, sourceLocation: sourceLocation)
        #expect(
            Set(suggestions).count == suggestions.count, "duplicates in \(suggestions)", sourceLocation: sourceLocation)
        for suggestion in suggestions {
            let key = WordText.key(suggestion)
            // Whole words only: one word, no digits, from the pack or typed in this document.
            #expect(
                WordText.words(in: suggestion).map(String.init) == [suggestion], "\(suggestion)",
                sourceLocation: sourceLocation)
            #expect(!WordText.containsDigit(suggestion), "\(suggestion)", sourceLocation: sourceLocation)
            // A hyphenated compound completed part by part: the typed head, then a word.
            let lastPart = CompoundCompletion.split(partial).flatMap { split -> String? in
                let head = WordText.key(split.head)
                return key.hasPrefix(head) ? String(key.dropFirst(head.count)) : nil
            }
            let knownPart = lastPart.map { pack.id(ofKey: $0) != nil || documentWords.contains($0) } ?? false
            #expect(
                pack.id(ofKey: key) != nil || documentWords.contains(key) || knownPart,
                "\(suggestion) for \(before.debugDescription) is neither a pack nor a document word",
                sourceLocation: sourceLocation)
            // Completions extend what was typed, and never repeat it; a correction extends a
            // prefix one neighbouring key or one swap away (at most two positions differ).
            if corrections.contains(suggestion) {
                let head = Array(key.unicodeScalars.prefix(prefix.unicodeScalars.count))
                let differing = zip(head, prefix.unicodeScalars).filter { $0 != $1 }.count
                #expect(
                    head.count == prefix.unicodeScalars.count && differing <= 2,
                    "\(suggestion) is no correction of \(partial)", sourceLocation: sourceLocation)
            } else {
                #expect(
                    key.utf8.starts(with: prefix.utf8), "\(suggestion) does not extend \(partial)",
                    sourceLocation: sourceLocation)
            }
            #expect(key != prefix, "\(suggestion) is the typed word itself", sourceLocation: sourceLocation)
        }
    }

    // MARK: Completions

    @Test(
        "completions are whole pack words that extend the typed prefix",
        arguments: [
            "th", "Th", "ca", "car", "c", "i", "pre", "wel", "don", "при", "caf", "the", "I met oba", "so i'",
            "a well-",
        ])
    func completions(before: String) {
        let suggestions = suggest(before, count: 8)
        #expect(!suggestions.isEmpty)
        checkInvariants(before, suggestions, count: 8)
    }

    @Test("typing a whole vocabulary word never suggests that word itself")
    func neverTheTypedWord() {
        let predictor = predictor()
        for id in 0..<pack.wordCount {
            for typed in [pack.key(id), pack.display(id), pack.key(id).uppercased()] {
                let suggestions = predictor.suggest(before: "so " + typed, count: 10)
                #expect(
                    !suggestions.contains { WordText.key($0) == WordText.key(typed) }, "typed \(typed): \(suggestions)")
            }
        }
    }

    @Test func orderFollowsTheModel() {
        #expect(suggest("th", count: 3) == ["the", "they", "there"])
        #expect(suggest("car", count: 8).contains("cart"))
        #expect(suggest("zzzz").isEmpty)
        #expect(suggest("qx").isEmpty)
    }

    @Test("a word this document writes as a name keeps its capital; once or without a majority, the pack's form")
    func documentNamesKeepTheirCapital() throws {
        let pack = try LanguagePack(
            data: Data(
                FixturePacks.build(
                    wordFrequencies: "the\t0.3\nand\t0.2\nmet\t0.1\npence\t0.05\nsaid\t0.05\nthat\t0.05\nwe\t0.05\n",
                    corpus: "The pence and the pence. We met the pence and said that the pence.")))
        func first(_ before: String) -> String? { Predictor(pack: pack).suggest(before: before, count: 1).first }
        #expect(first("we met Pence and Pence said that pe") == "Pence")
        #expect(first("we met Pence and pence said that pe") == "pence")
        #expect(first("we met Pence and said that pe") == "pence")
        #expect(first("Pence met us. Pence said that pe") == "pence")  // capitals at sentence starts only
    }

    @Test("after a name's word, a word the document wrote with a capital inside a sentence keeps it, once is enough")
    func documentNamesContinueAName() throws {
        let pack = try LanguagePack(
            data: Data(
                FixturePacks.build(
                    wordFrequencies: "the\t0.3\nand\t0.2\nmet\t0.1\npence\t0.05\nmike\t0.05\nsaid\t0.05\nwe\t0.05\n",
                    corpus: "We met mike pence and the pence. We met mike pence and said the pence.")))
        func next(_ before: String) -> [String] { Predictor(pack: pack).suggest(before: before, count: 3) }
        #expect(next("we met Mike Pence and then Mike ").first == "Pence")
        #expect(next("we met Mike Pence and then mike ").first == "pence")  // `mike` is no name's word here
        #expect(next("we met Mike pence and then Mike ").first == "pence")  // the document writes `pence`
        // Mostly lower case in the document.
        #expect(next("we met Mike Pence and the pence and the pence. Then Mike ").first == "pence")
        #expect(next("Pence met us. Then Mike ").first == "pence")  // a capital at a sentence start says nothing
    }

    @Test("a sentence's first word that the pack writes with a capital continues a name (`Donald Trump`)")
    func sentenceStartNameContinues() throws {
        let pack = try LanguagePack(
            data: Data(
                FixturePacks.build(
                    wordFrequencies: "the\t0.3\nand\t0.2\ntrump\t0.1\ndonald\t0.05\ncard\t0.05\nsaid\t0.05\n",
                    corpus: "The donald trump said. And donald trump and the trump card. The trump card and the trump.",
                    surfaceForms: "Donald\t100\ndonald\t5\nTrump\t60\ntrump\t100\n")))
        #expect(pack.display(try #require(pack.id(ofKey: "donald"))) == "Donald")
        #expect(pack.display(try #require(pack.id(ofKey: "trump"))) == "trump")
        func next(_ before: String) -> String? { Predictor(pack: pack).suggest(before: before, count: 1).first }
        #expect(next("It was said. Donald ") == "Trump")
        #expect(next("Donald ") == "Trump")
        #expect(next("It was said. Donald, ") == "trump")
        #expect(next("It was said. The ") == "trump")
    }

    @Test("after two words in capitals the next words are offered in capitals; after one, or while typing, as usual")
    func nextWordsInCapitals() {
        let shouted = suggest("WE LIVE IN THE UNITED ")
        #expect(shouted.first == "STATES", "\(shouted)")
        #expect(shouted.allSatisfy { WordText.isAllCaps($0) || $0.unicodeScalars.count == 1 }, "\(shouted)")
        #expect(suggest("We live in the UNITED ").first == "States")  // one word: a name's, not capitals
        #expect(suggest("WE LIVE IN THE UNITED, ").first.map { WordText.isAllCaps($0) } == false)
        #expect(suggest("WE LIVE IN THE UNITED st").first == "states")  // typed in lower case
    }

    @Test("scores are returned best first")
    func scoresDescend() {
        for before in ["", "th", "the ", "I paid 12 do", "при"] {
            let scores = predictor().suggestions(before: before, count: 10).map(\.score)
            #expect(zip(scores, scores.dropFirst()).allSatisfy { $0 >= $1 }, "\(before): \(scores)")
        }
        #expect(Suggestion(text: "x", score: 0).description == "x")
    }

    @Test func count() {
        #expect(predictor().suggest(before: "th", count: 0).isEmpty)
        #expect(predictor().suggest(before: "th", count: -1).isEmpty)
        #expect(predictor().suggest(before: "th", count: 1) == ["the"])
        // Everything that starts with "th" ("th" itself is not a word).
        #expect(predictor().suggest(before: "th", count: 100).count == pack.range(ofPrefix: "th").count)
        #expect(predictor().suggest(before: "the", count: 100).count == pack.range(ofPrefix: "the").count - 1)
    }

    /// Every count is total: counts that are surrogate code points (0xD800...0xDFFF), beyond the
    /// last code point, or huge once made part of the cache key trapped before.
    @Test(
        "any count, even a surrogate code point or beyond Unicode, gives an answer",
        arguments: [
            0xD7FF, 0xD800, 55296, 0xDBFF, 0xDFFF, 0xE000, 0x10FFF, 0x10FFFF, 0x110000, Int(Int32.max), Int.max,
        ])
    func anyCountIsTotal(count: Int) {
        let predictor = predictor()
        let all = predictor.suggest(before: "th", count: count)
        #expect(all.count == pack.range(ofPrefix: "th").count)
        #expect(predictor.suggest(before: "th", count: count) == all)  // from the cache
        #expect(predictor.suggest(before: "th", count: 1) == Array(all.prefix(1)))
    }

    @Test func countsAreSeparateCacheEntries() {
        let predictor = predictor()
        let small = predictor.suggest(before: "th", count: 2)
        #expect(small.count == 2)
        #expect(predictor.suggest(before: "th", count: 3).count == 3)
        #expect(predictor.suggest(before: "th", count: 2) == small)
    }

    // MARK: Next words

    @Test(
        "after a separator, next words come from the previous word's successors",
        arguments: [
            ("We live in the united ", "states"), ("Thank ", "you"), ("I don't ", "know"),
            ("I saw hillary ", "Clinton"),
            ("you and ", "I"), ("the white ", "house"), ("I live near the White ", "House"),
        ])
    func nextWord(before: String, expected: String) throws {
        let suggestions = suggest(before)
        checkInvariants(before, suggestions, count: 6)
        #expect(suggestions.first == expected, "\(suggestions)")
        let previous = try #require(WordText.words(in: before).last)
        let id = try #require(pack.id(ofKey: WordText.key(previous)))
        let successors = pack.bigramSuccessors(of: id).entries.map { LanguagePack.decodeSuccessor($0).id }
        #expect(successors.contains(try #require(pack.id(ofKey: WordText.key(expected)))))
    }

    @Test("the previous word matters: different contexts give different next words")
    func contextMatters() {
        #expect(suggest("the united ") != suggest("thank "))
        #expect(suggest("the united ", count: 1) != suggest("the cat ", count: 1))
    }

    @Test("after an unknown word or a number the prior decides")
    func unknownPrevious() {
        let afterNumber = predictor(characterModel: false).suggest(before: "I have 12 ", count: 5)
        let afterUnknown = predictor(characterModel: false).suggest(before: "I have zorblax ", count: 5)
        #expect(afterNumber.first == "the")
        #expect(afterUnknown.first == "the")
        checkInvariants("I have 12 ", afterNumber, count: 5)
    }

    // MARK: Case

    @Test(
        "sentence starts are capitalised", arguments: ["", "Hello. ", "Really? ", "Stop! ", "He said \"no.\" ", "\n"])
    func sentenceStart(before: String) {
        let suggestions = suggest(before)
        #expect(suggestions.count == 6)
        #expect(suggestions.allSatisfy { WordText.startsUppercase($0) }, "\(suggestions)")
    }

    @Test func sentenceStartWords() {
        #expect(suggest("").prefix(2) == ["The", "I"])
        #expect(suggest("Hello. ").contains("The"))
    }

    /// Browsers and editors report the lines before the cursor: after a greeting line the body's
    /// first word starts a sentence (it was `my`, `everybody`: the words after `Hello,` in a line).
    @Test(
        "the first word after a line break starts a sentence",
        arguments: ["Hello,\n\n", "Hi Sam,\n", "Dear all,\r\n", "Notes\n", "one\u{2029}"])
    func lineBreakStartsASentence(before: String) {
        let suggestions = suggest(before)
        #expect(suggestions.count == 6)
        #expect(suggestions.allSatisfy { WordText.startsUppercase($0) }, "\(suggestions)")
        #expect(suggestions.prefix(2) == suggest("").prefix(2), "\(suggestions)")
    }

    @Test("mid-sentence, only names and I keep a capital")
    func midSentence() {
        for before in ["Hello ", "so the ", "we went to ", "I think that "] {
            for suggestion in suggest(before, count: 10) where WordText.startsUppercase(suggestion) {
                let id = pack.id(ofKey: WordText.key(suggestion))
                #expect(id.map { pack.display($0) } == suggestion, "\(before.debugDescription): \(suggestion)")
            }
        }
        #expect(suggest("Hello ").first == "there")
    }

    @Test func typedCaseIsKept() {
        let title = suggest("Th")
        #expect(title.first == "The")
        #expect(title.allSatisfy { $0.hasPrefix("Th") && $0.dropFirst(2).allSatisfy(\.isLowercase) }, "\(title)")
        let caps = suggest("TH")
        #expect(caps.first == "THE")
        #expect(caps.allSatisfy { $0 == $0.uppercased() }, "\(caps)")
        #expect(suggest("th").first == "the")
        #expect(suggest("I DON").contains("DON'T"))
    }

    @Test("a word written once in capitals is not suggested in capitals when typed in lower case")
    func shoutedWordsDoNotStick() {
        // Casing's contract: a capital stays only if the user typed it or the dictionary knows it.
        #expect(suggest("We saw THE cat and th").first == "the")
        #expect(suggest("The Lord of The Rings is good and th").first == "the")
        // A word the pack lacks is shown as the user wrote it: that is the point of the cache.
        #expect(suggest("I met Zorblax yesterday and zor") == ["Zorblax"])
    }

    @Test("the harness's \"(Hel\" example: a bracket at a sentence start")
    func bracketedSentenceStart() {
        #expect(suggest("(Hel").first == "Hello")
        #expect(suggest("(").allSatisfy { WordText.startsUppercase($0) })
    }

    @Test("predictors on one shared pack run concurrently and agree with a sequential run")
    func concurrentPredictors() async {
        let inputs = ["", "th", "the united ", "I paid 12 do", "при", "I don'", "you and ", "ca"]
        let pack = self.pack
        let expected = inputs.map { Predictor(pack: pack).suggest(before: $0, count: 5) }
        let results = await withTaskGroup(of: (Int, [String]).self) { group in
            for round in 0..<32 {
                group.addTask {
                    let predictor = Predictor(pack: pack)
                    let index = round % inputs.count
                    return (index, predictor.suggest(before: inputs[index], count: 5))
                }
            }
            var results: [(Int, [String])] = []
            for await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 32)
        for (index, suggestions) in results { #expect(suggestions == expected[index], "\(inputs[index])") }
    }

    @Test("proper nouns keep their capitals mid-sentence")
    func properNouns() {
        #expect(suggest("I met oba").contains("Obama"))
        #expect(suggest("I met hil").contains("Hillary"))
        #expect(suggest("yesterday clin").contains("Clinton"))
        #expect(!suggest("I met oba").contains("obama"))
    }

    @Test("I is always a capital")
    func pronounI() {
        #expect(suggest("you and ").contains("I"))
        #expect(suggest("so i'") == ["I'm"])
        for before in ["you and ", "so i", "and then i", ""] {
            #expect(
                !suggest(before, count: 10).contains { $0 == "i" || $0.hasPrefix("i'") }, "\(before.debugDescription)")
        }
    }

    // MARK: Apostrophes, hyphens, scripts, digits

    @Test func apostrophesAndHyphens() {
        #expect(suggest("I don").first == "don't")
        #expect(suggest("I don'") == ["don't"])
        #expect(suggest("I don\u{2019}") == ["don\u{2019}t"])
        #expect(suggest("I DON\u{2019}") == ["DON\u{2019}T"])
        #expect(suggest("a well-") == ["well-known"])
        #expect(suggest("a well").contains("well-known"))
        #expect(suggest("my e-") == ["e-mail"])
        #expect(suggest("at five o'") == ["o'clock"])
        #expect(suggest("rock\u{2019}n") == ["rock\u{2019}n\u{2019}roll"])
        // A joiner not after letters is a separator: next-word prediction.
        #expect(suggest("I said '").allSatisfy { !$0.contains("'") })
    }

    @Test func cyrillicAndAccents() {
        #expect(suggest("при") == ["привет", "пример"])
        #expect(suggest("При") == ["Привет", "Пример"])
        #expect(Set(suggest("пр", count: 10)) == ["при", "привет", "пример", "правда", "право", "про"])
        #expect(suggest("caf") == ["caf\u{E9}", "caf\u{E9}s"])
        #expect(suggest("na").contains("na\u{EF}ve"))
        #expect(suggest("r\u{E9}s") == ["r\u{E9}sum\u{E9}"])
    }

    @Test("numbers are never completed nor suggested", arguments: ["12", "3", "abc1", "I paid 12", "mp", "20", "x2"])
    func digits(before: String) {
        let suggestions = suggest(before, count: 10)
        if WordText.containsDigit(WordText.splitPartialWord(before).partial) {
            #expect(suggestions.isEmpty)
        }
        checkInvariants(before, suggestions, count: 10)
    }

    // MARK: Document cache

    @Test("a made-up word typed earlier in the text becomes a completion")
    func documentWords() {
        let predictor = predictor()
        #expect(predictor.suggest(before: "The zorblax was here. Then the zor", count: 5) == ["zorblax"])
        #expect(predictor.suggest(before: "I met Zorblax yesterday and zor", count: 5) == ["Zorblax"])
        // The document is the text before the cursor: a text without the word does not have it.
        #expect(predictor.suggest(before: "Then the zor", count: 5).isEmpty)
        predictor.reset()
        #expect(predictor.suggest(before: "Then the zor", count: 5).isEmpty)
        #expect(predictor.suggest(before: "The zorblax was here. Then the zor", count: 5) == ["zorblax"])
    }

    @Test("words already used in the document rise")
    func documentBoost() {
        let plain = suggest("ca", count: 3)
        #expect(plain.first == "can")
        let boosted = suggest("My career, my career, my career. Then ca", count: 3)
        #expect(boosted.first == "career", "\(boosted)")
    }

    @Test("the document's own word pairs predict the next word")
    func documentPairs() {
        // "zorblax" follows "red" in this document only; no pack bigram knows it.
        let suggestions = suggest("A red zorblax, a red zorblax and a red ", count: 3)
        #expect(suggestions.first == "zorblax", "\(suggestions)")
    }

    @Test("reset() forgets the document and clears the result cache")
    func reset() {
        let predictor = predictor()
        let before = "The zorblax was here. Then the zor"
        let first = predictor.suggestions(before: before, count: 5)
        predictor.reset()
        #expect(predictor.suggestions(before: before, count: 5) == first)
        #expect(predictor.suggest(before: "zor", count: 5).isEmpty)
    }

    // MARK: Result cache

    @Test("the same input gives identical output, and count only truncates")
    func resultCache() {
        let predictor = predictor()
        for before in ["", "th", "I paid 12 do", "The zorblax was here. Then the zor", "the united "] {
            let first = predictor.suggestions(before: before, count: 6)
            let second = predictor.suggestions(before: before, count: 6)
            #expect(first == second)
            #expect(first == self.predictor().suggestions(before: before, count: 6))  // same as a fresh predictor
            #expect(Array(first.prefix(3)) == predictor.suggestions(before: before, count: 3))
        }
        // Queries in between (other documents) do not disturb a cached answer.
        let answer = predictor.suggest(before: "the white ", count: 5)
        _ = predictor.suggest(before: "zorblax zorblax zorblax wh", count: 5)
        #expect(predictor.suggest(before: "the white ", count: 5) == answer)
    }

    @Test("changing options invalidates cached results")
    func optionsInvalidateTheCache() {
        let predictor = predictor()
        let before = "I paid 12 do"
        #expect(predictor.suggest(before: before, count: 3).first == "dollars")
        predictor.options.useCharacterModel = false
        #expect(predictor.suggest(before: before, count: 3).first == "don't")
        #expect(
            predictor.suggestions(before: before, count: 3)
                == self.predictor(characterModel: false).suggestions(before: before, count: 3))
        predictor.options.useCharacterModel = true
        #expect(predictor.suggest(before: before, count: 3).first == "dollars")
    }

    @Test("the result cache respects scalar differences between canonically equivalent inputs")
    func cacheAndCanonicalEquivalence() {
        let composed = "I like the caf\u{E9}"  // partial word "café": complete it
        let decomposed = "I like the cafe\u{301}"  // "cafe" + a combining mark: a separator, next word
        let fresh = predictor().suggest(before: decomposed, count: 5)
        #expect(!fresh.contains("caf\u{E9}s"))
        let predictor = predictor()
        _ = predictor.suggest(before: composed, count: 5)
        #expect(predictor.suggest(before: decomposed, count: 5) == fresh)
    }

    // MARK: Re-ranking

    @Test("the character model re-ranks: after a number, \"do\" completes to dollars, not don't")
    func characterModelChangesTheTop() {
        let with = predictor(characterModel: true).suggest(before: "I paid 12 do", count: 5)
        let without = predictor(characterModel: false).suggest(before: "I paid 12 do", count: 5)
        #expect(with.first == "dollars")
        #expect(without.first == "don't")
        #expect(Set(with) == Set(without))  // it re-orders; it does not add or remove words
    }

    @Test("the re-ranker only reorders the window of candidates")
    func reRankerOnlyReorders() {
        var rng = SplitMix64(seed: 21)
        let letters = Array("abcdefghilmnoprstuwy")
        for _ in 0..<100 {
            let prefix = String(
                (0..<Int.random(in: 0...2, using: &rng)).map { _ in letters.randomElement(using: &rng)! })
            let context = ["", "I paid 12 ", "the ", "we went to the ", "Hello. "].randomElement(using: &rng)!
            let with = predictor(characterModel: true).suggest(before: context + prefix, count: 32)
            let without = predictor(characterModel: false).suggest(before: context + prefix, count: 32)
            #expect(Set(with) == Set(without), "\((context + prefix).debugDescription)")
        }
        // With a window of one candidate there is nothing to re-rank.
        var options = PredictorOptions()
        options.windowSize = 1
        #expect(Predictor(pack: pack, options: options).suggest(before: "I paid 12 do", count: 5) == ["don't"])
    }

    @Test("a savings exponent prefers longer words")
    func savingsExponent() {
        var options = PredictorOptions()
        options.savingsExponent = 3
        let long = Predictor(pack: pack, options: options).suggest(before: "ca", count: 1)
        let plain = suggest("ca", count: 1)
        #expect(long.first!.count > plain.first!.count, "\(long) vs \(plain)")
    }

    // MARK: Properties

    @Test("suggestions are always pack or document words (random inputs)")
    func neverInventsWords() {
        var rng = SplitMix64(seed: 1234)
        let vocabulary = (0..<pack.wordCount).map { pack.display($0) }
        let madeUp = ["zorblax", "Quux", "flimflam", "Zorg"]
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCTпривтé'’-")
        let separators = [" ", " ", ", ", ". ", "! ", " \"", " (", "\n"]
        let predictor = predictor()
        for round in 0..<300 {
            var before = ""
            for _ in 0..<Int.random(in: 0...8, using: &rng) {
                let word =
                    Int.random(in: 0..<10, using: &rng) == 0
                    ? madeUp.randomElement(using: &rng)! : vocabulary.randomElement(using: &rng)!
                before += word + separators.randomElement(using: &rng)!
            }
            before += String((0..<Int.random(in: 0...3, using: &rng)).map { _ in letters.randomElement(using: &rng)! })
            if round % 7 == 0 { predictor.reset() }
            let count = Int.random(in: 1...10, using: &rng)
            let suggestions = predictor.suggestions(before: before, count: count)
            checkInvariants(
                before, suggestions.map(\.text), count: count,
                corrections: Set(suggestions.filter(\.isCorrection).map(\.text)))
        }
    }

    @Test("a long document uses only its last 1000 characters and stays fast")
    func longInput() {
        let filler = String(repeating: "the cat sat here. ", count: 400)
        let predictor = predictor()
        let suggestions = predictor.suggest(before: "zorblax " + filler + "zor", count: 5)
        #expect(suggestions.isEmpty)  // "zorblax" is more than 1000 characters back
        #expect(predictor.suggest(before: filler + "ca", count: 3).first == "cat")
    }

    /// The character-model scores kept between keys (per word and per history) never leak into
    /// another context: a predictor that answered every key before gives what a fresh one gives.
    @Test("a predictor that answered earlier keys suggests what a fresh one suggests")
    func keptScoresMatchAFreshPredictor() {
        let text = "The cat sat on the mat. We saw the united states and the cat met Obama again. I don't know "
        let typed = Predictor(pack: pack)
        let scalars = Array(text.unicodeScalars)
        for end in 0...scalars.count {
            let before = String(String.UnicodeScalarView(scalars[0..<end]))
            let fresh = Predictor(pack: pack)
            #expect(typed.suggestions(before: before, count: 5) == fresh.suggestions(before: before, count: 5))
        }
    }
}
