import InklingTestSupport
import Testing

@testable import InklingCore

/// Words and word pairs of the current document, derived from the text before the word.
@Suite("DocumentCache")
struct DocumentCacheTests {
    let pack = FixturePacks.english

    /// Every answer of a cache kept across contexts equals that of one built for the last context.
    func expectSameAnswers(_ reused: DocumentCache, _ fresh: DocumentCache) {
        #expect(reused.totalWords == fresh.totalWords)
        #expect(
            reused.words.mapValues { "\($0.id ?? -1) \($0.display) \($0.count)" }
                == fresh.words.mapValues { "\($0.id ?? -1) \($0.display) \($0.count)" })
        #expect(reused.lastWords == fresh.lastWords)
        #expect(reused.lastKeys == fresh.lastKeys)
        #expect(reused.lastWordFollowers == fresh.lastWordFollowers)
        #expect(reused.lastWordsInCapitals == fresh.lastWordsInCapitals)
        #expect(reused.words == fresh.words)
        #expect(reused.lastWordIsName == fresh.lastWordIsName)
        #expect(reused.documentKeys == fresh.documentKeys)
    }

    func cache(_ context: String) -> DocumentCache {
        var cache = DocumentCache()
        cache.update(context: Substring(context), pack: pack)
        return cache
    }

    @Test func countsWordsAndKeepsWrittenForms() throws {
        let cache = cache("I met Zorblax. Then zorblax met the cat, and ZORBLAX met me ")
        let entry = try #require(cache.words["zorblax"])
        #expect(entry.count == 3)
        #expect(entry.id == nil)
        #expect(entry.display == "ZORBLAX")  // the latest mid-sentence spelling
        #expect(cache.words["met"]?.count == 3)
        #expect(cache.words["met"]?.id == pack.id(ofKey: "met"))
        #expect(cache.totalWords == 12)
    }

    @Test("a capital at a sentence start alone does not make a display form")
    func sentenceInitialCapital() {
        #expect(cache("The cat. ").words["the"]?.display == "the")
        #expect(cache("Obama spoke. ").words["obama"]?.display == "Obama")  // the pack's display
        #expect(cache("Zorblax spoke. ").words["zorblax"]?.display == "Zorblax")  // unknown: as written
        #expect(cache("I saw the Cat. ").words["cat"]?.display == "Cat")
    }

    @Test func typographicApostrophesAreFolded() {
        let cache = cache("I don\u{2019}t know ")
        #expect(cache.words["don't"]?.display == "don't")
        #expect(cache.words["don't"]?.id == pack.id(ofKey: "don't"))
    }

    @Test("the last two words give the n-gram context; a sentence end or a number resets it")
    func lastWords() throws {
        let the = try #require(pack.id(ofKey: "the"))
        let united = try #require(pack.id(ofKey: "united"))
        #expect(cache("We saw the united ").lastWords == (united, the))
        #expect(cache("the ").lastWords == (the, pack.sentenceStartID))
        #expect(cache("").lastWords == (nil, nil))
        #expect(cache("Hello. ").lastWords == (nil, nil))
        #expect(cache("Hello! ").lastWords == (nil, nil))
        #expect(cache("I paid 12 ").lastWords == (nil, pack.id(ofKey: "paid")))
        #expect(cache("we zorblax ").lastWords == (nil, pack.id(ofKey: "we")))
    }

    @Test("a line break starts a sentence: the words of the line before are not the n-gram context")
    func lineBreakStartsASentence() throws {
        let the = try #require(pack.id(ofKey: "the"))
        #expect(cache("Hello,\n\n").lastWords == (nil, nil))
        #expect(cache("Hi Sam,\r\n").lastWords == (nil, nil))
        #expect(cache("Hello,\nthe ").lastWords == (the, pack.sentenceStartID))
        #expect(cache("Notes\nThe cat ").words["the"]?.display == "the")  // a sentence-initial capital
        #expect(!cache("Notes\nWhite ").lastWordIsName)
    }

    @Test func capitalizedMidSentence() {
        #expect(cache("I live near the White ").lastWordIsName)
        #expect(!cache("White ").lastWordIsName)
        #expect(!cache("the white ").lastWordIsName)
        #expect(!cache("you and I ").lastWordIsName)
        #expect(!cache("so I'm ").lastWordIsName)
        #expect(!cache("the White. ").lastWordIsName)
        #expect(!cache("the White 12 ").lastWordIsName)
    }

    @Test("two words in capitals with only spaces between and after them: the next word is in capitals too")
    func wordsInCapitals() {
        #expect(cache("OH MY ").lastWordsInCapitals)
        #expect(cache("well, THE DARK ").lastWordsInCapitals)
        #expect(!cache("the NASA ").lastWordsInCapitals)  // one acronym
        #expect(!cache("OH, MY ").lastWordsInCapitals)
        #expect(!cache("OH MY, ").lastWordsInCapitals)
        #expect(!cache("OH MY\n").lastWordsInCapitals)
        #expect(!cache("OH. MY ").lastWordsInCapitals)
        #expect(!cache("OH\nMY ").lastWordsInCapitals)
        #expect(!cache("OH 12 ").lastWordsInCapitals)
        #expect(!cache("OH I ").lastWordsInCapitals)  // one letter: no evidence of capitals
        #expect(!cache("Oh My ").lastWordsInCapitals)
    }

    @Test("a sentence's first word is a name's when the pack writes it with a capital and a space follows")
    func sentenceStartNames() {
        #expect(cache("Social Security. Donald ").lastWordIsName)  // the pack writes `Donald`
        #expect(cache("Donald ").lastWordIsName)
        #expect(!cache("Social Security. White ").lastWordIsName)  // the pack writes `white`
        #expect(!cache("The ").lastWordIsName)
        #expect(!cache("Donald, ").lastWordIsName)  // `Elaine, thank you`
        #expect(!cache("Donald.\n").lastWordIsName)
        #expect(!cache("Donald\n").lastWordIsName)
        #expect(cache("near the White, ").lastWordIsName)  // inside a sentence a comma may run on to a name
    }

    @Test func followersOfTheLastWord() {
        let cache = cache("red zorblax, red zorblax, red quux. Then red ")
        #expect(cache.lastWordFollowers == ["zorblax": 2, "quux": 1])
        // After a sentence end, the words that started this document's sentences twice or more.
        #expect(self.cache("red zorblax. ").lastWordFollowers.isEmpty)
        #expect(self.cache("red zorblax. Red quux! ").lastWordFollowers == ["red": 2])
    }

    @Test("after a sentence end the followers are the document's repeated sentence starters, each start once")
    func sentenceStartersFollowASentenceEnd() {
        #expect(cache("And so it went. And then? Well, and now! ").lastWordFollowers == ["and": 2])
        #expect(cache("Well. And so it went. And then? Well, and now! ").lastWordFollowers == ["and": 2, "well": 2])
        #expect(cache("Hello,\n\n").lastWordFollowers.isEmpty)  // one start is no habit
        #expect(cache("And so it went. Well ").lastWordFollowers.isEmpty)  // inside a sentence: well's followers
        #expect(cache("And so it went. 12 cats. And 3 dogs. ").lastWordFollowers == ["and": 2])
        #expect(cache("").lastWordFollowers.isEmpty)
    }

    @Test("a word is written as a name when most of its occurrences inside a sentence are capitalised, twice at least")
    func wordsWrittenAsNames() {
        let names = cache("Senator Kaine met the Senator. The senator and Senator Kaine left. Kaine ")
        #expect(names.words["senator"]?.isWrittenAsName == true)  // 2 of 3 inside sentences
        #expect(names.words["kaine"]?.isWrittenAsName == true)  // the sentence start does not count
        #expect(cache("the Senator spoke. Senator ").words["senator"]?.isWrittenAsName == false)  // once inside
        #expect(cache("the Senator and the senator ").words["senator"]?.isWrittenAsName == false)  // no majority
        #expect(cache("Pence. Pence. Pence. ").words["pence"]?.isWrittenAsName == false)  // sentence starts only
    }

    @Test("a word is mostly capitalised inside sentences once, and no longer when written lower case as often")
    func wordsMostlyCapitalized() {
        #expect(cache("the Senator spoke. Senator ").words["senator"]?.isMostlyCapitalizedMidSentence == true)
        #expect(cache("the Senator and the senator ").words["senator"]?.isMostlyCapitalizedMidSentence == false)
        #expect(cache("Senator. Senator ").words["senator"]?.isMostlyCapitalizedMidSentence == false)
        #expect(
            cache("the Senator and the senator and the Senator ").words["senator"]?.isMostlyCapitalizedMidSentence
                == true)
    }

    @Test("updating with a new context rebuilds from scratch")
    func rebuild() {
        var cache = DocumentCache()
        cache.update(context: "zorblax zorblax ", pack: pack)
        cache.update(context: "the cat ", pack: pack)
        #expect(cache.words["zorblax"] == nil)
        #expect(cache.totalWords == 2)
    }

    /// `cafe` + U+0301 is the word `cafe` and a separator; `café` with U+00E9 is one word.
    @Test("canonically equivalent contexts with different scalars are different documents")
    func canonicalEquivalence() {
        var cache = DocumentCache()
        cache.update(context: "I like cafe\u{301} ", pack: pack)
        cache.update(context: "I like caf\u{E9} ", pack: pack)
        #expect(cache.words["caf\u{E9}"] != nil)
        #expect(cache.words["cafe"] == nil)
    }

    /// Every key of a text that slides out of a 60-scalar window: the cache that kept the last
    /// rebuild's words answers exactly as one built from nothing (names, capitals at sentence
    /// starts, curly apostrophes, numbers and followers included).
    @Test("a cache updated key by key equals a fresh one for every context", arguments: [false, true])
    func reusedTokensMatchAFreshBuild(readsPunctuation: Bool) {
        let text =
            "The cat sat. Zorblax met the cat and ZORBLAX said don\u{2019}t, then the White House "
            + "paid 12 dollars. Then zorblax met Obama and the cat met the dog again and again. "
        var reused = DocumentCache(readsPunctuation: readsPunctuation)
        let scalars = Array(text.unicodeScalars)
        for end in 1...scalars.count {
            let window = String(String.UnicodeScalarView(scalars[max(0, end - 60)..<end]))
            let context = WordText.splitPartialWord(window).context
            reused.update(context: context, pack: pack)
            var fresh = DocumentCache(readsPunctuation: readsPunctuation)
            fresh.update(context: context, pack: pack)
            expectSameAnswers(reused, fresh)
        }
    }

    /// The engine's pattern: a context only at each word's end (the text grows by a word and its
    /// space) in a window of the last N scalars, so that the window also loses its start once
    /// the text is longer; the extended cache answers as one built from nothing.
    @Test(
        "a cache extended word by word, its window moving, equals a fresh one", arguments: [40, 70, 1000],
        [false, true])
    func extendedWordByWordMatchesAFreshBuild(window: Int, readsPunctuation: Bool) {
        let text =
            "The cat sat. Zorblax met the cat and ZORBLAX said don\u{2019}t, then the White House "
            + "paid 12 dollars. Then zorblax met Obama and the cat met the dog again and again. "
            + "rock 'n' roll, well-known caf\u{E9}s and cafe\u{301}s; I said: \"Hi!\" (then) 3rd v2 "
            + "an e-mail to someone@example.com! Why? Because. The end... and the start "
            + "Hello Sam,\n\nThe cat met Zorblax\nand the dog\r\nthen Obama \u{2028}The end "
        var reused = DocumentCache(readsPunctuation: readsPunctuation)
        let scalars = Array(text.unicodeScalars)
        var checked = 0
        for end in 1...scalars.count where end == scalars.count || scalars[end] == " " || end % 5 == 0 {
            let cut = String(String.UnicodeScalarView(scalars[max(0, end - window)..<end]))
            let context = WordText.splitPartialWord(cut).context
            reused.update(context: context, pack: pack)
            var fresh = DocumentCache(readsPunctuation: readsPunctuation)
            fresh.update(context: context, pack: pack)
            checked += 1
            expectSameAnswers(reused, fresh)
        }
        #expect(checked > 60)
    }

    @Test("the overlap of a moved, longer window with the last one")
    func overlap() {
        #expect(DocumentCache.overlap(of: "the cat ", with: "the cat sat ") == "the cat ")
        #expect(DocumentCache.overlap(of: "the cat ", with: "cat sat ") == "cat ")
        #expect(DocumentCache.overlap(of: "the cat ", with: "the dog ") == nil)
        #expect(DocumentCache.overlap(of: "the cat ", with: "the ") == nil)
        #expect(DocumentCache.overlap(of: "", with: "the ") == nil)
        // Never inside a scalar: "é" is two bytes.
        #expect(DocumentCache.overlap(of: "\u{E9}t\u{E9} ", with: "t\u{E9} x ") == "t\u{E9} ")
    }

    /// A word model trained with punctuation (`train_wordlm.py --punctuation`) reads the marks
    /// between the line's words and after the last one, as `tokens(line, True)` gives them.
    @Test("with punctuation, the word model's context holds the marks between words and after the last")
    func punctuationKeys() {
        func keys(_ context: String) -> [String] {
            var cache = DocumentCache(readsPunctuation: true)
            cache.update(context: Substring(context), pack: pack)
            return cache.documentKeys
        }
        #expect(keys("Good evening. From ") == ["good", "evening", "<.>", "from"])
        #expect(
            keys("Well, I think: yes; no! Why? ") == ["think", "<:>", "yes", "<:>", "no", "<!>", "why", "<?>"])
        #expect(keys("Well, I ") == ["well", "<,>", "i"])
        #expect(keys("He said \"no.\" Then, ") == ["he", "said", "no", "<.>", "then", "<,>"])
        #expect(keys("\"Hi\" (then) ") == ["hi", "then"])  // quotes and brackets: nothing
        #expect(keys("The 42 cats, ") == ["the", "", "cats", "<,>"])  // a number: the unknown word
        // Nothing before a line's first word: the model learned each line after <s>.
        #expect(keys("Hello Sam,\n\nThe cat. ") == ["the", "cat", "<.>"])
        #expect(keys("Hello Sam,\n") == [])
        // The last `historyLimit` keys, marks counted.
        let long = keys("one, two, three, four, five, ")
        #expect(long.count == NeuralContextTracker.historyLimit)
        #expect(long == ["two", "<,>", "three", "<,>", "four", "<,>", "five", "<,>"])
        // Without: words only.
        var plain = DocumentCache()
        plain.update(context: "Good evening. From ", pack: pack)
        #expect(plain.documentKeys == ["good", "evening", "from"])
    }

    @Test("only the last word's followers are counted, each pair once per occurrence")
    func followersCountEachOccurrence() {
        #expect(cache("the cat and the dog and the cat met the ").lastWordFollowers == ["cat": 2, "dog": 1])
        #expect(cache("the cat. The ").lastWordFollowers == ["cat": 1])
        #expect(cache("the cat. ").lastWordFollowers.isEmpty)
        #expect(cache("the cat. The dog. ").lastWordFollowers == ["the": 2])
        #expect(cache("the cat 12 ").lastWordFollowers.isEmpty)
    }
}
